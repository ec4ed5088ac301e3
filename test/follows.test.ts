import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createBranch, createStory, expectError, registerAdmin, registerBot, registerHuman } from "./helpers";
import { followOf } from "./inbox";
import { hide, moderator } from "./moderation";

/** Follows: `POST /follows`, `DELETE /follows/{id}`, `GET /me/follows`, and the followers shown on what is followed. */

const followersOf = async (type: string, id: string) =>
  (await env.DB.prepare("SELECT followers FROM follow_counts WHERE target_type = ? AND target_id = ?").bind(type, id).first<{ followers: number }>())
    ?.followers ?? 0;

describe("POST /follows", () => {
  it("follows a story, a branch, a human and a bot: 201, then 200 with the same follow; the target's followers go up once", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const branch = await createBranch(owner.token, story.id);
    const bot = await registerBot();
    const reader = await registerHuman();
    // The story's owner follows it from its creation: the reader is its second follower.
    for (const [type, id, name, followers] of [
      ["story", story.id, story.title, 2],
      ["branch", branch.id, branch.title, 1],
      ["author", owner.id, owner.input.username, 1],
      ["author", bot.id, bot.name, 1],
    ] as const) {
      const first = await followOf(reader.token, type, id);
      expect(first.status, first.text).toBe(201);
      expect(first.body.data).toMatchObject({ target_type: type, target_id: id, target_name: name, hidden: false, followers_count: followers });
      const again = await followOf(reader.token, type, id.toUpperCase());
      expect(again.status, again.text).toBe(200);
      expect(again.body.data.id).toBe(first.body.data.id);
      expect(again.body.data.followers_count).toBe(followers);
    }
    expect((await followOf(reader.token, "author", bot.id)).body.data).toMatchObject({ author_type: "bot", story_id: null });
    expect((await followOf(reader.token, "branch", branch.id)).body.data).toMatchObject({ author_type: null, story_id: story.id });
    // The followers are shown on what is followed.
    expect((await call(`/stories/${story.id}`)).body.data.followers_count).toBe(2);
    expect((await call(`/branches/${branch.id}`)).body.data.followers_count).toBe(1);
    expect((await call(`/branches/${story.main_branch_id}`)).body.data.followers_count).toBe(0);
  });

  it("follows concurrently once: the same follow ten times at once is one row, counted once", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const reader = await registerHuman();
    const answers = await Promise.all(Array.from({ length: 10 }, () => followOf(reader.token, "story", story.id)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(await followersOf("story", story.id)).toBe(2); // the reader and the owner
  });

  it("404 for an unknown or malformed target, 400 for a bad type, a missing id or oneself", async () => {
    const reader = await registerHuman();
    expectError(await followOf(reader.token, "story", crypto.randomUUID()), 404, "NOT_FOUND");
    expectError(await followOf(reader.token, "branch", "not-a-uuid"), 404, "NOT_FOUND");
    expectError(await followOf(reader.token, "author", crypto.randomUUID()), 404, "NOT_FOUND");
    expectError(await followOf(reader.token, "author", "Not An Id!"), 404, "NOT_FOUND");
    const bad = expectError(await followOf(reader.token, "segment", crypto.randomUUID()), 400, "VALIDATION_ERROR");
    expect(bad.details.fields.map((f: any) => f.field)).toEqual(["target_type"]);
    expectError(await call("/follows", { token: reader.token, body: { target_type: "story" } }), 400, "VALIDATION_ERROR");
    const self = expectError(await followOf(reader.token, "author", reader.id), 400, "VALIDATION_ERROR");
    expect(self.details.fields).toEqual([{ field: "target_id", issue: expect.stringMatching(/itself/) }]);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM follows WHERE follower_id = ?").bind(reader.id).first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it("a hidden story or branch is 404 to whoever may not read it; its owner (who follows it already) and moderators may follow it", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const branch = await createBranch(owner.token, (await createStory(owner.token)).id);
    const mod = await moderator();
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    expect((await hide(mod.token, "branches", branch.id)).status).toBe(200);
    const reader = await registerHuman();
    expectError(await followOf(reader.token, "story", story.id), 404, "NOT_FOUND");
    expectError(await followOf(reader.token, "branch", branch.id), 404, "NOT_FOUND");
    expect((await followOf(owner.token, "story", story.id)).status).toBe(200);
    expect((await followOf(owner.token, "branch", branch.id)).status).toBe(201);
    expect((await followOf(mod.token, "story", story.id)).status).toBe(201);
    expect((await followOf(mod.token, "branch", branch.id)).status).toBe(201);
  });

  it(`at most LIMIT_FOLLOWS_PER_ACCOUNT follows: beyond is 409 CONFLICT, writing nothing; a repeat at the cap is still 200`, async () => {
    const limit = { LIMIT_FOLLOWS_PER_ACCOUNT: "2" };
    const reader = await registerHuman();
    const targets = await Promise.all([1, 2, 3].map(async () => (await registerBot()).id));
    expect((await followOf(reader.token, "author", targets[0], limit)).status).toBe(201);
    expect((await followOf(reader.token, "author", targets[1], limit)).status).toBe(201);
    const over = expectError(await followOf(reader.token, "author", targets[2], limit), 409, "CONFLICT");
    expect(over.details).toEqual({ limit: 2, following: 2 });
    expect((await followOf(reader.token, "author", targets[0], limit)).status).toBe(200);
    expect(await followersOf("author", targets[2])).toBe(0);
    // Unfollowing one makes room.
    const mine = (await call("/me/follows", { token: reader.token })).body.data.follows;
    expect((await call(`/follows/${mine[0].id}`, { method: "DELETE", token: reader.token })).status).toBe(200);
    expect((await followOf(reader.token, "author", targets[2], limit)).status).toBe(201);
  });

  it("the cap holds under concurrency: 8 follows at once with room for 3 make exactly 3", async () => {
    const limit = { LIMIT_FOLLOWS_PER_ACCOUNT: "3" };
    const reader = await registerHuman();
    const targets = await Promise.all(Array.from({ length: 8 }, async () => (await registerBot()).id));
    const answers = await Promise.all(targets.map((id) => followOf(reader.token, "author", id, limit)));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(5);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM follows WHERE follower_id = ?").bind(reader.id).first<{ n: number }>();
    expect(rows!.n).toBe(3);
  });
});

describe("DELETE /follows/{id}", () => {
  it("only the follower unfollows (others, admins too, 403 PERMISSION_DENIED); the followers go down once; then 404", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const reader = await registerHuman();
    const id = (await followOf(reader.token, "story", story.id)).body.data.id;
    for (const other of [owner, await registerBot(), await registerAdmin()]) {
      expectError(await call(`/follows/${id}`, { method: "DELETE", token: other.token }), 403, "PERMISSION_DENIED");
    }
    // The owner follows their story too (from its creation).
    expect(await followersOf("story", story.id)).toBe(2);
    const gone = await call(`/follows/${id}`, { method: "DELETE", token: reader.token });
    expect(gone.status, gone.text).toBe(200);
    expect(gone.body.data).toEqual({ id, deleted: true });
    expect(await followersOf("story", story.id)).toBe(1);
    expectError(await call(`/follows/${id}`, { method: "DELETE", token: reader.token }), 404, "NOT_FOUND");
    expectError(await call("/follows/not-a-uuid", { method: "DELETE", token: reader.token }), 404, "NOT_FOUND");
    expect(await followersOf("story", story.id)).toBe(1);
    // Following again is a new follow.
    expect((await followOf(reader.token, "story", story.id)).status).toBe(201);
    expect(await followersOf("story", story.id)).toBe(2);
  });

  it("ten unfollows at once: one 200, the followers down by one", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const [a, b] = [await registerHuman(), await registerHuman()];
    const id = (await followOf(a.token, "story", story.id)).body.data.id;
    await followOf(b.token, "story", story.id);
    const answers = await Promise.all(Array.from({ length: 10 }, () => call(`/follows/${id}`, { method: "DELETE", token: a.token })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(await followersOf("story", story.id)).toBe(2); // b and the owner
  });
});

describe("GET /me/follows", () => {
  it('lists the caller\'s follows newest first, paginated, each named and counted; a target hidden since is named ""', async () => {
    const owner = await registerHuman();
    const stories = [await createStory(owner.token), await createStory(owner.token), await createStory(owner.token)];
    const reader = await registerHuman();
    const other = await registerHuman();
    for (const s of stories) {
      await followOf(reader.token, "story", s.id);
      await new Promise((r) => setTimeout(r, 5)); // distinct created_at
    }
    await followOf(other.token, "story", stories[0].id);
    const mod = await moderator();
    await hide(mod.token, "stories", stories[1].id);
    const list = (await call("/me/follows?limit=2", { token: reader.token })).body.data;
    expect(list.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    expect(list.follows.map((f: any) => f.target_id)).toEqual([stories[2].id, stories[1].id]);
    expect(list.follows[1]).toMatchObject({ target_name: "", hidden: true });
    const rest = (await call("/me/follows?limit=2&offset=2", { token: reader.token })).body.data;
    expect(rest.follows).toEqual([expect.objectContaining({ target_id: stories[0].id, target_name: stories[0].title, followers_count: 3 })]);
    expect((await call("/me/follows", { token: other.token })).body.data.follows).toHaveLength(1);
    expectError(await call("/me/follows?limit=0", { token: reader.token }), 400, "VALIDATION_ERROR");
  });
});
