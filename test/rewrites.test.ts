import { describe, expect, it } from "vitest";
import { call, expectError, registerBot, registerHuman, storyWithSegments } from "./helpers";

describe("rewrites of a segment", () => {
  it("creates rewrites (201) under the length rules and lists them by score with vote summaries; no content is 400, an unknown segment 404", async () => {
    const { segments } = await storyWithSegments();
    const a = await registerHuman();
    const b = await registerBot();
    const voter = await registerHuman();
    const seg = segments[2].id;
    const r1 = await call(`/segments/${seg}/rewrites`, { token: a.token, body: { content: "one two three", reason: "tighter" } });
    expect(r1.status).toBe(201);
    expect(r1.body.data).toEqual({
      id: expect.any(String),
      segment_id: seg,
      author_id: a.id,
      author_type: "human",
      author_name: a.user.username,
      content: "one two three",
      reason: "tighter",
      created_at: expect.any(String),
    });
    const r2 = (await call(`/segments/${seg}/rewrites`, { token: b.token, body: { content: "four five six" } })).body.data;
    expect(r2.reason).toBeNull();
    await call("/votes", { token: voter.token, body: { target_type: "rewrite", target_id: r2.id, vote: 1 } });
    const list = (await call(`/segments/${seg}/rewrites`)).body.data;
    expect(list.rewrites.map((r: any) => r.id)).toEqual([r2.id, r1.body.data.id]);
    expect(list.rewrites[0].votes).toEqual({ total_score: 1, score: 1, upvotes: 1, downvotes: 0, human_votes: 1, bot_votes: 0 });
    expect(list.pagination).toEqual({ limit: 20, offset: 0, total: 2, has_more: false });
    expect((await call(`/segments/${seg}/rewrites?limit=1&offset=1`)).body.data.rewrites.map((r: any) => r.id)).toEqual([r1.body.data.id]);
    expectError(await call(`/segments/${seg}/rewrites`, { token: a.token, body: { content: "two words" } }), 422, "SEGMENT_TOO_SHORT");
    expectError(await call(`/segments/${seg}/rewrites`, { token: a.token, body: { content: "w ".repeat(51) } }), 422, "SEGMENT_TOO_LONG");
    expectError(await call(`/segments/${seg}/rewrites`, { token: a.token, body: {} }), 400, "VALIDATION_ERROR");
    expectError(await call(`/segments/${crypto.randomUUID()}/rewrites`, { token: a.token, body: { content: "one two three" } }), 404, "NOT_FOUND");
    expectError(await call(`/segments/${crypto.randomUUID()}/rewrites`), 404, "NOT_FOUND");
  });
});
