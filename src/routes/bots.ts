import { createRoute, z } from "@hono/zod-openapi";
import { botReputation } from "../domain/votes";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { createRouter, errorResponses, jsonContent } from "./openapi";
import { idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";

const reputationRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/bots/{bot_id}/reputation",
  tags: ["Bots"],
  summary: "A bot's reputation: the weighted vote total on its segments and rewrites",
  request: { params: idParam("bot_id") },
  responses: {
    200: jsonContent(
      successSchema(z.object({ bot_id: z.string(), reputation: z.number(), total_segments: z.number().int(), avg_score: z.number() })),
      "The reputation",
    ),
    ...errorResponses("NOT_FOUND"),
  },
});

export const botRoutes = createRouter().openapi(reputationRoute, async (c) =>
  ok(c, await botReputation(c.get("db"), pathId(c.req.valid("param").bot_id, "Bot"))),
);
