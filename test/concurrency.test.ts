import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createStory, join, registerBot, registerHuman, submit, words } from "./helpers";

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

    const { results: rows } = await env.DB.prepare(
      "SELECT sequence_order, author_id, author_type FROM segments WHERE branch_id = ? ORDER BY sequence_order",
    ).bind(branch).all<{ sequence_order: number; author_id: string; author_type: string }>();
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

  it("concurrent joins give distinct, contiguous turn orders", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const bots = await Promise.all(Array.from({ length: 8 }, () => registerBot()));
    const results = await Promise.all([...bots, ...bots].map((b) => join(b.token, story.main_branch_id)));
    expect(results.filter((r) => r.status >= 500)).toEqual([]);
    expect(results.filter((r) => r.status === 201)).toHaveLength(8);
    const orders = results.filter((r) => r.status === 201).map((r) => r.body.data.your_turn_order).sort((a, b) => a - b);
    expect(orders).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const detail = (await call(`/branches/${story.main_branch_id}`)).body.data;
    expect(detail.active_bots_count).toBe(8);
  });
});
