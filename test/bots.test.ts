import { describe, expect, it } from "vitest";
import { call, expectError, registerBot } from "./helpers";

describe("GET /bots/{id}/reputation", () => {
  it("counts segments and averages, 0 when none, 404 for unknown bots", async () => {
    const bot = await registerBot();
    expect((await call(`/bots/${bot.id}/reputation`)).body.data).toEqual({ bot_id: bot.id, reputation: 0, total_segments: 0, avg_score: 0 });
    expectError(await call(`/bots/${crypto.randomUUID()}/reputation`), 404, "NOT_FOUND");
    expectError(await call("/bots/bad/reputation"), 404, "NOT_FOUND");
  });
});
