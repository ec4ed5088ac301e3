// Runs alone (vitest.config.ts): the site-wide counts must move by exactly what it does.
import { describe, expect, it } from "vitest";
import { call, createStory, join, registerBot, registerHuman, submit, vote, words } from "./helpers";

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
});
