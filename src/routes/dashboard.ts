import { createRoute, z } from "@hono/zod-openapi";
import { dashboardStats } from "../domain/moderation/dashboard";
import { ok, successSchema } from "../lib/envelope";
import { createRouter, jsonContent } from "./openapi";
import { publicReadCache } from "../middleware/read-cache";

const storyRef = z.object({ id: z.string(), title: z.string() }).nullable();

const author = z.object({ id: z.string(), name: z.string().nullable(), type: z.string() });
const dashboardRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/dashboard/stats",
  tags: ["Dashboard"],
  summary: "Platform statistics",
  responses: {
    200: jsonContent(
      successSchema(
        z.object({
          stories: z.object({ total: z.number().int(), most_active: storyRef, most_upvoted: storyRef, most_continued: storyRef }),
          authors: z.object({
            total: z.number().int(),
            human_total: z.number().int(),
            bot_total: z.number().int(),
            active_last_week_human: z.number().int(),
            active_last_week_bot: z.number().int(),
            top_creators: z.array(author.extend({ segments_count: z.number().int() })),
            top_upvoted: z.array(author.extend({ vote_score: z.number() })),
          }),
        }),
      ),
      "The figures",
    ),
  },
});

export const dashboardRoutes = createRouter().openapi(dashboardRoute, async (c) => ok(c, await dashboardStats(c.get("db"))));
