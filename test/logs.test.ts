import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { configOf } from "../src/config";
import { sweep } from "../src/queue/sweeper";
import { call, createBranch, createStory, expectError, registerBot, registerHuman, submit, words } from "./helpers";

const today = () => new Date().toISOString().slice(0, 10);

describe("GET /logs and /logs/stats", () => {
  it("lists entries newest first with page/limit/total/pages and filters", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(human.token);
    await submit(bot.token, story.main_branch_id, words(6));
    const mine = (await call(`/logs?story_id=${story.id}`, { token: human.token })).body.data;
    expect(mine.pagination).toEqual({ page: 1, limit: 50, total: 5, pages: 1 });
    expect(mine.logs[0]).toEqual({
      id: expect.any(String),
      story_id: story.id,
      story_title: story.title,
      branch_id: story.main_branch_id,
      segment_id: expect.any(String),
      author_id: bot.id,
      author_type: "bot",
      author_name: bot.name,
      content_length: 6,
      is_continuation: "continuation",
      parent_segment_id: expect.any(String),
      created_at: expect.any(String),
    });
    const bots = (await call(`/logs?story_id=${story.id}&author_type=bot`, { token: human.token })).body.data;
    expect(bots.logs.map((l: any) => l.author_id)).toEqual([bot.id]);
    const paged = (await call(`/logs?story_id=${story.id}&limit=2&page=3`, { token: human.token })).body.data;
    expect(paged.pagination).toEqual({ page: 3, limit: 2, total: 5, pages: 3 });
    expect(paged.logs).toHaveLength(1);
    expect(paged.logs[0].is_continuation).toBe("new");
    for (const q of ["page=0", "limit=0", "author_type=alien", "days=0", "days=x"]) {
      expectError(await call(`/logs?${q}`, { token: human.token }), 400, "VALIDATION_ERROR");
    }
    expect((await call(`/logs?story_id=${crypto.randomUUID()}`, { token: human.token })).body.data.pagination.total).toBe(0);
    expect((await call("/logs?story_id=not-a-uuid", { token: human.token })).body.data.pagination).toEqual({ page: 1, limit: 50, total: 0, pages: 0 });
  });

  it("GET /logs/stats: totals and exactly 7 dated keys, moving by the expected amounts", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const before = (await call("/logs/stats", { token: human.token })).body.data;
    expect(Object.keys(before.last_week)).toHaveLength(7);
    expect(Object.keys(before.last_week).at(-1)).toBe(today());
    expect(Object.keys(before.last_week).every((k) => /^\d{4}-\d{2}-\d{2}$/.test(k))).toBe(true);
    const story = await createStory(human.token); // 4 human entries
    await submit(bot.token, story.main_branch_id, words(4)); // 1 bot entry
    await createBranch(bot.token, story.id, { initial_segment: words(4) }); // 1 bot entry
    const after = (await call("/logs/stats", { token: bot.token })).body.data;
    expect(after.total).toEqual({ human: before.total.human + 4, bot: before.total.bot + 2, all: before.total.all + 6 });
    const d = today();
    expect(after.last_week[d]).toEqual({
      human: before.last_week[d].human + 4,
      bot: before.last_week[d].bot + 2,
      total: before.last_week[d].total + 6,
    });
  });

  it("the sweeper prunes entries older than LOGS_KEEP_DAYS; GET /logs within the window answers as before", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(human.token); // 4 entries
    for (let i = 0; i < 3; i++) await submit(bot.token, story.main_branch_id, words(4));
    const ids = (await call(`/logs?story_id=${story.id}`, { token: human.token })).body.data.logs.map((l: any) => l.id);
    expect(ids).toHaveLength(7);
    // The story's entries, oldest first: four written 91 days ago (past the window of 90), three 89 days ago.
    const at = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    const [recent, old] = [ids.slice(0, 3), ids.slice(3)];
    for (const [rows, days] of [
      [old, 91],
      [recent, 89],
    ] as const) {
      for (const [i, id] of rows.entries())
        await env.DB.prepare("UPDATE logs SET created_at = ? WHERE id = ?")
          .bind(at(days + i / 1000), id)
          .run();
    }
    const all = (await call(`/logs?story_id=${story.id}&days=3650`, { token: human.token })).body.data;
    expect(all.logs.map((l: any) => l.id)).toEqual(ids);
    const window = `/logs?story_id=${story.id}&days=90&limit=2`;
    const before = await Promise.all([1, 2].map(async (page) => (await call(`${window}&page=${page}`, { token: human.token })).body.data));
    expect(before[0].pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2 });

    await sweep(env);
    const left = await env.DB.prepare("SELECT id FROM logs WHERE story_id = ? ORDER BY created_at DESC").bind(story.id).all<{ id: string }>();
    expect(left.results.map((r) => r.id)).toEqual(recent);
    const after = await Promise.all([1, 2].map(async (page) => (await call(`${window}&page=${page}`, { token: human.token })).body.data));
    expect(after).toEqual(before);
    // A longer `days` reaches back as far as the window only.
    expect((await call(`/logs?story_id=${story.id}&days=3650`, { token: human.token })).body.data.logs.map((l: any) => l.id)).toEqual(recent);
  });

  it("LOGS_KEEP_DAYS may not be shorter than the week the logs' reads count in", () => {
    expect(() => configOf({ ...env, LOGS_KEEP_DAYS: "6" })).toThrow(/LOGS_KEEP_DAYS/);
    expect(configOf({ ...env, LOGS_KEEP_DAYS: "7" }).logsKeepMs).toBe(7 * 86_400_000);
  });
});
