import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createBranch, createStory, expectError, hanzi, join, registerBot, registerHuman, submit, words } from "./helpers";

describe("GET /branches/{id}/segments", () => {
  it("pages through a branch's segments in order, 50 by default", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token, { max_length: 10 });
    for (let i = 0; i < 52; i++) expect((await submit(human.token, story.main_branch_id, words(3))).status).toBe(201);
    const first = (await call(`/branches/${story.main_branch_id}/segments`)).body.data;
    expect(first.segments).toHaveLength(50);
    expect(first.pagination).toEqual({ limit: 50, offset: 0, total: 56, has_more: true });
    expect(first.segments.map((s: any) => s.sequence_order)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const last = (await call(`/branches/${story.main_branch_id}/segments?offset=50`)).body.data;
    expect(last.segments.map((s: any) => s.sequence_order)).toEqual([51, 52, 53, 54, 55, 56]);
    expect(last.pagination.has_more).toBe(false);
    const s = first.segments[0];
    expect(Object.keys(s)).toEqual(expect.arrayContaining(["id", "branch_id", "bot_id", "content", "sequence_order", "coherence_score", "created_at"]));
    expect(s.coherence_score).toBeNull();
    expectError(await call(`/branches/${crypto.randomUUID()}/segments`), 404, "NOT_FOUND");
    expectError(await call(`/branches/${story.main_branch_id}/segments?limit=x`), 400, "VALIDATION_ERROR");
  });
});

describe("GET /branches/{id}/segments: records as the other reads show them", () => {
  it("answers each segment as the write and the branch's detail do: text of every kind, starters, a hidden segment", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token, { max_length: 40 });
    const b = story.main_branch_id;
    const texts = [`quote " backslash \\ slash / tab\tline\nbreak`, `${hanzi(6)} emoji 🦊 </script> \u2028 sep`, words(3)];
    const written = [];
    for (const t of texts) {
      const res = await submit(human.token, b, t);
      expect(res.status).toBe(201);
      written.push(res.body.data.segment);
    }
    const mod = await registerHuman();
    await env.DB.prepare("UPDATE users SET role = 'moderator' WHERE id = ?").bind(mod.id).run();
    expect((await call(`/admin/segments/${written[2].id}/hide`, { token: mod.token, body: { reason: "spam" } })).status).toBe(200);

    const page = (await call(`/branches/${b}/segments`)).body.data.segments;
    const detail = (await call(`/branches/${b}`)).body.data.segments;
    expect(page).toStrictEqual(detail);
    expect(page.map((s: any) => s.is_starter)).toEqual([true, false, false, false, false, false, false]);
    expect(page.slice(4, 6)).toStrictEqual(written.slice(0, 2));
    expect(page[6]).toStrictEqual({ ...written[2], hidden: true, content: "" });
    // The author still reads their own hidden text.
    const own = (await call(`/branches/${b}/segments`, { token: human.token })).body.data.segments;
    expect(own[6]).toStrictEqual({ ...written[2], hidden: true });
    expect((await call(`/branches/${b}/segments?offset=7`)).body.data).toEqual({
      segments: [],
      pagination: { limit: 50, offset: 7, total: 7, has_more: false },
    });
  });
});

describe("POST /branches/{id}/segments", () => {
  it("stores a human's segment with the nested alias and next_bot null", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const res = await submit(human.token, story.main_branch_id, words(7));
    expect(res.status).toBe(201);
    const d = res.body.data;
    expect(d).toMatchObject({ branch_id: story.main_branch_id, bot_id: human.id, content: words(7), sequence_order: 5, coherence_score: null, next_bot: null });
    const { segment, next_bot: _next, ...flat } = d;
    expect(segment).toStrictEqual(flat);
  });

  it("lets any logged-in writer add to someone else's story", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const bot = await registerBot();
    const other = await registerHuman();
    expect((await submit(bot.token, story.main_branch_id, words(4))).status).toBe(201);
    expect((await submit(other.token, story.main_branch_id, words(4))).status).toBe(201);
    expect((await submit(bot.apiKey, story.main_branch_id, words(4))).status).toBe(201);
  });

  it("counts English words at the boundaries: min−1, min, max, max+1", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token, { min_length: 5, max_length: 8 });
    const b = story.main_branch_id;
    expect(expectError(await submit(human.token, b, words(4)), 422, "SEGMENT_TOO_SHORT").details).toEqual({
      current_length: 4,
      min_length: 5,
      suggestion: expect.stringContaining("1 more word."),
    });
    expect((await submit(human.token, b, words(5))).status).toBe(201);
    expect((await submit(human.token, b, `  ${words(8).replace(/ /g, " \n\t ")}  `)).status).toBe(201);
    expect(expectError(await submit(human.token, b, words(9)), 422, "SEGMENT_TOO_LONG").details).toEqual({
      current_length: 9,
      max_length: 8,
      suggestion: expect.any(String),
    });
  });

  it("counts Chinese characters, not white space, at the boundaries", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token, {
      language: "zh",
      min_length: 10,
      max_length: 20,
      initial_segments: [hanzi(10), hanzi(15), hanzi(20)],
    });
    const b = story.main_branch_id;
    const spaced = (n: number) => hanzi(n).split("").join(" ");
    expect(expectError(await submit(human.token, b, spaced(9)), 422, "SEGMENT_TOO_SHORT").details).toMatchObject({ current_length: 9, min_length: 10 });
    expect((await submit(human.token, b, spaced(10))).status).toBe(201);
    expect((await submit(human.token, b, hanzi(20))).status).toBe(201);
    expect(expectError(await submit(human.token, b, hanzi(21)), 422, "SEGMENT_TOO_LONG").details).toMatchObject({ current_length: 21, max_length: 20 });
    expect((await submit(human.token, b, "😀".repeat(12))).status).toBe(201);
  });

  it("refuses bad bodies (is_starter included) with 400 and unknown branches with 404", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const b = story.main_branch_id;
    for (const body of [{}, { content: "" }, { content: 42 }, { content: words(4), is_starter: "yes" }, { content: words(4), is_starter: true }]) {
      expectError(await call(`/branches/${b}/segments`, { token: human.token, body }), 400, "VALIDATION_ERROR");
    }
    expectError(await submit(human.token, crypto.randomUUID(), words(4)), 404, "NOT_FOUND");
    expectError(await submit(human.token, "nope", words(4)), 404, "NOT_FOUND");
  });

  it("refuses segments and joins on an archived story with 403 FORBIDDEN, writing nothing", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(human.token);
    const b = story.main_branch_id;
    expect((await submit(human.token, b, words(4))).status).toBe(201); // the room is loaded before archiving
    await call(`/stories/${story.id}`, { method: "PATCH", token: human.token, body: { status: "archived" } });
    expectError(await submit(human.token, b, words(4)), 403, "FORBIDDEN");
    expectError(await call(`/branches/${b}/join`, { token: bot.token, body: {} }), 403, "FORBIDDEN");
    const count = await env.DB.prepare("SELECT count(*) AS n FROM segments WHERE branch_id = ?").bind(b).first<{ n: number }>();
    expect(count!.n).toBe(5);
    await call(`/stories/${story.id}`, { method: "PATCH", token: human.token, body: { status: "active" } });
    expect((await submit(human.token, b, words(4))).body.data.sequence_order).toBe(6);
  });

  it("writes a log entry per segment: new, fork, continuation, with the previous segment on the reading path", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const main = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments;
    const fork = await createBranch(human.token, story.id, { fork_at_segment_id: main[1].id, initial_segment: words(4) });
    const cont = (await submit(human.token, fork.id, words(4))).body.data;
    const { results } = await env.DB.prepare(
      "SELECT segment_id, is_continuation, parent_segment_id, content_length, author_type FROM logs WHERE story_id = ? ORDER BY created_at, rowid",
    )
      .bind(story.id)
      .all<any>();
    expect(results.map((r) => [r.segment_id, r.is_continuation, r.parent_segment_id])).toEqual([
      [main[0].id, "new", null],
      [main[1].id, "new", main[0].id],
      [main[2].id, "new", main[1].id],
      [main[3].id, "new", main[2].id],
      [fork.segment.id, "fork", main[1].id],
      [cont.id, "continuation", fork.segment.id],
    ]);
    expect(results[5]).toMatchObject({ content_length: 4, author_type: "human" });
  });
});

describe("many writers at once on one branch", () => {
  it("30 concurrent submissions keep sequence_order unique and contiguous and pass the turn once per bot segment", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token, { max_length: 10 });
    const branch = story.main_branch_id;
    const humans = await Promise.all(Array.from({ length: 5 }, () => registerHuman()));
    const bots = [await registerBot(), await registerBot(), await registerBot()];
    for (const bot of bots) await join(bot.token, branch);

    const writers = [
      ...Array.from({ length: 15 }, (_, i) => humans[i % humans.length].token),
      ...Array.from({ length: 15 }, (_, i) => bots[i % bots.length].token),
    ];
    const results = await Promise.all(writers.map((token) => submit(token, branch, words(4))));

    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    for (const r of results) expect([201, 403]).toContain(r.status);
    const refused = results.filter((r) => r.status === 403);
    for (const r of refused) expect(r.body.error.code).toBe("NOT_YOUR_TURN");
    expect(results.slice(0, 15).every((r) => r.status === 201)).toBe(true);

    const { results: rows } = await env.DB.prepare("SELECT sequence_order, author_id, author_type FROM segments WHERE branch_id = ? ORDER BY sequence_order")
      .bind(branch)
      .all<{ sequence_order: number; author_id: string; author_type: string }>();
    const accepted = results.filter((r) => r.status === 201).length;
    expect(rows).toHaveLength(4 + accepted);
    expect(rows.map((r) => r.sequence_order)).toEqual(Array.from({ length: rows.length }, (_, i) => i + 1));

    const botTurns = rows.filter((r) => r.author_type === "bot").map((r) => r.author_id);
    expect(botTurns.length).toBeGreaterThanOrEqual(1);
    expect(botTurns).toEqual(botTurns.map((_, i) => bots[i % 3].id));
    const queue = (await call(`/branches/${branch}`)).body.data;
    expect(queue.queue.current_turn.bot_id).toBe(bots[botTurns.length % 3].id);
    expect(queue.segments_count).toBe(rows.length);
  });
});
