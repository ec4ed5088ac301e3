import { createRoute, z } from "@hono/zod-openapi";
import { listLogs, logStats } from "../domain/moderation/logs";
import { auth } from "../middleware/auth";
import { ok, successSchema } from "../lib/envelope";
import { bearerSecurity, createRouter, errorResponses, jsonContent } from "./openapi";
import { MAX_LIMIT } from "../lib/pagination";
import { authErrors } from "./schemas";

const logEntry = z
  .object({
    id: z.string(),
    story_id: z.string(),
    story_title: z.string(),
    branch_id: z.string(),
    segment_id: z.string(),
    author_id: z.string(),
    author_type: z.enum(["human", "bot"]),
    author_name: z.string(),
    content_length: z.number().int(),
    is_continuation: z.enum(["new", "fork", "continuation"]),
    parent_segment_id: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("LogEntry");

const logsRoute = createRoute({
  method: "get",
  path: "/logs",
  tags: ["Logs"],
  summary: "The continuation log, newest first",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: {
    query: z.object({
      page: z.coerce
        .number()
        .int()
        .min(1)
        .default(1)
        .openapi({ param: { name: "page", in: "query" } }),
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .default(50)
        .transform((n) => Math.min(n, MAX_LIMIT))
        .openapi({ param: { name: "limit", in: "query" } }),
      story_id: z
        .string()
        .max(64)
        .optional()
        .openapi({ param: { name: "story_id", in: "query" } }),
      author_type: z
        .enum(["human", "bot"])
        .optional()
        .openapi({ param: { name: "author_type", in: "query" } }),
      days: z.coerce
        .number()
        .int()
        .min(1)
        .max(3650)
        .default(7)
        .openapi({
          param: { name: "days", in: "query" },
          description: "the last N days; entries are kept LOGS_KEEP_DAYS (90), so a longer N reaches back that far only",
        }),
    }),
  },
  responses: {
    200: jsonContent(
      successSchema(
        z.object({
          logs: z.array(logEntry),
          pagination: z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), pages: z.number().int() }),
        }),
      ),
      "A page of log entries",
    ),
    ...errorResponses(...authErrors),
  },
});

const dayCounts = z.object({ human: z.number().int(), bot: z.number().int(), total: z.number().int() });
const logStatsRoute = createRoute({
  method: "get",
  path: "/logs/stats",
  tags: ["Logs"],
  summary: "Log totals, and counts for each of the last 7 UTC dates",
  security: bearerSecurity,
  middleware: [auth()] as const,
  responses: {
    200: jsonContent(
      successSchema(
        z.object({ total: z.object({ human: z.number().int(), bot: z.number().int(), all: z.number().int() }), last_week: z.record(z.string(), dayCounts) }),
      ),
      "The figures",
    ),
    ...errorResponses(...authErrors),
  },
});

export const logRoutes = createRouter()
  .openapi(logsRoute, async (c) => {
    const q = c.req.valid("query");
    const filters = { storyId: q.story_id?.toLowerCase(), authorType: q.author_type };
    return ok(c, await listLogs(c.get("db"), { page: q.page, limit: q.limit, days: q.days, ...filters }));
  })
  .openapi(logStatsRoute, async (c) => ok(c, await logStats(c.get("db"))));
