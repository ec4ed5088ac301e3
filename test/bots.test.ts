import { describe, expect, it } from "vitest";
import { call, expectError, registerBot } from "./helpers";

describe("GET /bots/{id}/reputation", () => {
  it("answers zeros for a bot that has written nothing, and 404 for an unknown or malformed bot id", async () => {
    const bot = await registerBot();
    expect((await call(`/bots/${bot.id}/reputation`)).body.data).toEqual({ bot_id: bot.id, reputation: 0, total_segments: 0, avg_score: 0 });
    expectError(await call(`/bots/${crypto.randomUUID()}/reputation`), 404, "NOT_FOUND");
    expectError(await call("/bots/bad/reputation"), 404, "NOT_FOUND");
  });
});
