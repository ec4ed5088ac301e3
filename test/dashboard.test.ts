// Runs alone (vitest.config.ts): the site-wide counts must move by exactly what it does, and it sweeps every overdue row.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sweep } from "../src/queue/sweeper";
import { call, createBranch, createStory, join, registerBot, registerHuman, submit, vote, words } from "./helpers";

describe("GET /dashboard/stats", () => {
  it("is public and moves by exactly the expected amounts after a known sequence of actions", async () => {
    const before = (await call("/dashboard/stats")).body.data;
    const human = await registerHuman();
    const voter = await registerHuman();
    const bot = await registerBot();
    const quiet = await createStory(human.token);
    const busy = await createStory(bot.token);
    await join(bot.token, busy.main_branch_id);
    for (let i = 0; i < 3; i++) await submit(bot.token, busy.main_branch_id, words(4));
    for (let i = 0; i < 2; i++) await submit(human.token, busy.main_branch_id, words(4));
    const botSeg = (await call(`/branches/${busy.main_branch_id}/segments?offset=4&limit=1`)).body.data.segments[0];
    await vote(voter.token, "segment", botSeg.id, 1);
    await vote(voter.token, "branch", quiet.main_branch_id, -1);
    const after = (await call("/dashboard/stats")).body.data;
    expect(after.stories.total).toBe(before.stories.total + 2);
    expect(after.authors.human_total).toBe(before.authors.human_total + 2);
    expect(after.authors.bot_total).toBe(before.authors.bot_total + 1);
    expect(after.authors.total).toBe(after.authors.human_total + after.authors.bot_total);
    expect(after.authors.active_last_week_bot).toBe(before.authors.active_last_week_bot + 1);
    expect(after.authors.active_last_week_human).toBe(before.authors.active_last_week_human + 1);
    expect(after.stories.most_active).toEqual({ id: busy.id, title: busy.title });
    expect(after.stories.most_continued).toEqual({ id: busy.id, title: busy.title });
    expect(after.stories.most_upvoted).toEqual({ id: busy.id, title: busy.title });
    const creator = after.authors.top_creators.find((a: any) => a.id === bot.id);
    expect(creator).toEqual({ id: bot.id, name: bot.name, type: "bot", segments_count: 7 });
    expect(after.authors.top_upvoted.find((a: any) => a.id === bot.id)).toEqual({ id: bot.id, name: bot.name, type: "bot", vote_score: 1 });
    expect(after.authors.top_creators.length).toBeLessThanOrEqual(10);
  });

  // The all-time figures read counters the writes keep (the logs are pruned): a story's continuations, the entries by
  // author and by author type. A human's story continued by two bots and by its owner, with a fork by a bot.
  async function writing() {
    const human = await registerHuman();
    const bots = [await registerBot(), await registerBot()];
    const story = await createStory(human.token);
    for (const bot of bots) await join(bot.token, story.main_branch_id);
    for (let i = 0; i < 3; i++) for (const bot of bots) expect((await submit(bot.token, story.main_branch_id, words(4))).status).toBe(201);
    expect((await submit(human.token, story.main_branch_id, words(4))).status).toBe(201);
    await createBranch(bots[1].token, story.id, { initial_segment: words(4) });
    return { human, bots, story };
  }

  const counters = async () => ({
    totals: (await env.DB.prepare("SELECT * FROM log_totals ORDER BY author_type").all()).results,
    authors: (await env.DB.prepare("SELECT * FROM log_authors ORDER BY author_id").all()).results,
    stories: (await env.DB.prepare("SELECT id, continuations_count FROM stories ORDER BY id").all()).results,
  });

  it("migration 0024's backfill from the logs makes the counters every write kept", async () => {
    const { human, bots, story } = await writing();
    const kept = await counters();
    expect(kept.stories).toContainEqual({ id: story.id, continuations_count: 7 });
    expect(kept.authors).toContainEqual({ author_id: bots[1].id, author_type: "bot", author_name: bots[1].name, entries: 4, first_at: expect.any(String) });
    expect(kept.authors).toContainEqual(expect.objectContaining({ author_id: human.id, entries: 5 }));
    // The migration's hand-written statements, run again over the same logs after the counters are cleared.
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.endsWith("_logs_pruned.sql"))!;
    const backfill = migration.queries.filter((q) => /^(INSERT|UPDATE)\b/m.test(q));
    expect(backfill).toHaveLength(3);
    await env.DB.batch([
      env.DB.prepare("DELETE FROM log_totals"),
      env.DB.prepare("DELETE FROM log_authors"),
      env.DB.prepare("UPDATE stories SET continuations_count = 0"),
    ]);
    for (const q of backfill) await env.DB.prepare(q).run();
    expect(await counters()).toEqual(kept);
  });

  it("pruning the logs older than LOGS_KEEP_DAYS changes neither /logs/stats nor /dashboard/stats", async () => {
    // An old story, the most continued; a writer of it has the most entries of anyone. A newer one stays in the window.
    const old = await writing();
    for (let i = 0; i < 4; i++) for (const bot of old.bots) expect((await submit(bot.token, old.story.main_branch_id, words(4))).status).toBe(201);
    const recent = await writing();
    const at = new Date(Date.now() - 100 * 86_400_000).toISOString();
    await env.DB.prepare("UPDATE logs SET created_at = ? WHERE story_id = ?").bind(at, old.story.id).run();
    const read = async () => ({
      logs: (await call("/logs/stats", { token: recent.human.token })).body.data,
      dashboard: (await call("/dashboard/stats")).body.data,
    });
    const before = await read();
    expect(before.dashboard.stories.most_continued).toEqual({ id: old.story.id, title: old.story.title });
    expect(before.dashboard.authors.top_creators[0]).toEqual({ id: old.bots[1].id, name: old.bots[1].name, type: "bot", segments_count: 8 });
    expect(before.dashboard.stories.most_active?.id).not.toBe(old.story.id);

    await sweep(env);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM logs WHERE story_id = ?").bind(old.story.id).first<{ n: number }>())!.n).toBe(0);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM logs WHERE story_id = ?").bind(recent.story.id).first<{ n: number }>())!.n).toBe(12);
    expect(await read()).toEqual(before);
  });
});
