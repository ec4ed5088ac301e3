import { describe, expect, it } from "vitest";
import { call, createBranch, expectError, registerAdmin, registerBot, registerHuman, storyWithSegments } from "./helpers";

const comment = (token: string, branchId: string, body: Record<string, unknown>) => call(`/branches/${branchId}/comments`, { token, body });

describe("comments on a branch", () => {
  it("posts comments and replies (201) and lists them flat, oldest first, 50 by default", async () => {
    const { story } = await storyWithSegments();
    const human = await registerHuman();
    const bot = await registerBot();
    const b = story.main_branch_id;
    const top = await comment(human.token, b, { content: "Love this." });
    expect(top.status).toBe(201);
    const record = {
      id: expect.any(String),
      branch_id: b,
      author_id: human.id,
      author_type: "human",
      author_name: human.user.username,
      content: "Love this.",
      parent_comment_id: null,
      hidden: false,
      created_at: expect.any(String),
    };
    // The record at the top of data, and nested as data.comment for older clients.
    expect(top.body.data).toEqual({ ...record, comment: record });
    const reply = await comment(bot.token, b, { content: "Thanks!", parent_comment_id: top.body.data.id });
    expect(reply.body.data).toMatchObject({ author_type: "bot", author_name: bot.name, parent_comment_id: top.body.data.id });
    for (let i = 0; i < 50; i++) await comment(human.token, b, { content: `c${i}` });
    const page = (await call(`/branches/${b}/comments`)).body.data;
    expect(page.pagination).toEqual({ limit: 50, offset: 0, total: 52, has_more: true });
    expect(page.comments.slice(0, 3).map((c: any) => c.content)).toEqual(["Love this.", "Thanks!", "c0"]);
    const rest = (await call(`/branches/${b}/comments?offset=50&limit=10`)).body.data;
    expect(rest.comments.map((c: any) => c.content)).toEqual(["c48", "c49"]);
    expect(rest.pagination.has_more).toBe(false);
  });

  it("enforces 1 to 1000 characters and a parent on the same branch (400)", async () => {
    const { owner, story } = await storyWithSegments();
    const b = story.main_branch_id;
    expectError(await comment(owner.token, b, { content: "" }), 400, "VALIDATION_ERROR");
    expectError(await comment(owner.token, b, { content: "x".repeat(1001) }), 400, "VALIDATION_ERROR");
    expect((await comment(owner.token, b, { content: "x".repeat(1000) })).status).toBe(201);
    const other = await createBranch(owner.token, story.id);
    const elsewhere = (await comment(owner.token, other.id, { content: "there" })).body.data;
    const err = expectError(await comment(owner.token, b, { content: "reply", parent_comment_id: elsewhere.id }), 400, "VALIDATION_ERROR");
    expect(err.details.fields[0].field).toBe("parent_comment_id");
    expectError(await comment(owner.token, b, { content: "reply", parent_comment_id: crypto.randomUUID() }), 400, "VALIDATION_ERROR");
  });

  it("answers 404 for an unknown branch and 403 FORBIDDEN on an archived story", async () => {
    const { owner, story } = await storyWithSegments();
    expectError(await comment(owner.token, crypto.randomUUID(), { content: "hi" }), 404, "NOT_FOUND");
    expectError(await call(`/branches/${crypto.randomUUID()}/comments`), 404, "NOT_FOUND");
    await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } });
    expectError(await comment(owner.token, story.main_branch_id, { content: "hi" }), 403, "FORBIDDEN");
  });

  it("the author or an admin deletes a comment, its replies going with it; deleting it again is 404", async () => {
    const { story } = await storyWithSegments();
    const author = await registerHuman();
    const other = await registerHuman();
    const b = story.main_branch_id;
    const c1 = (await comment(author.token, b, { content: "one" })).body.data;
    await comment(other.token, b, { content: "reply", parent_comment_id: c1.id });
    const del = await call(`/comments/${c1.id}`, { method: "DELETE", token: author.token });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ id: c1.id, deleted: true });
    expect((await call(`/branches/${b}/comments`)).body.data.comments).toEqual([]);
    expectError(await call(`/comments/${c1.id}`, { method: "DELETE", token: author.token }), 404, "NOT_FOUND");
    const c2 = (await comment(author.token, b, { content: "two" })).body.data;
    expect((await call(`/comments/${c2.id}`, { method: "DELETE", token: (await registerAdmin()).token })).status).toBe(200);
  });
});
