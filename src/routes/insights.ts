import { createRoute, z } from "@hono/zod-openapi";
import { getDb } from "../db/client";
import { dashboardStats } from "../domain/dashboard";
import { listLogs, logStats } from "../domain/logs";
import { generateSummary, getSummary } from "../domain/summaries";
import { botReputation } from "../domain/votes";
import { auth } from "../lib/auth";
import { ok, successSchema } from "../lib/envelope";
import { ApiError, notFound } from "../lib/errors";
import { isUuid } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonContent } from "../lib/openapi";
import { MAX_LIMIT, queryBoolean } from "../lib/pagination";
import { authErrors, idParam } from "./schemas";

const storyRef = z.object({ id: z.string(), title: z.string() }).nullable();

const reputationRoute = createRoute({
  method: "get",
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
      page: z.coerce.number().int().min(1).default(1).openapi({ param: { name: "page", in: "query" } }),
      limit: z.coerce.number().int().min(1).default(50).transform((n) => Math.min(n, MAX_LIMIT)).openapi({ param: { name: "limit", in: "query" } }),
      story_id: z.string().max(64).optional().openapi({ param: { name: "story_id", in: "query" } }),
      author_type: z.enum(["human", "bot"]).optional().openapi({ param: { name: "author_type", in: "query" } }),
      days: z.coerce.number().int().min(1).max(3650).default(7).openapi({ param: { name: "days", in: "query" } }),
    }),
  },
  responses: {
    200: jsonContent(
      successSchema(z.object({ logs: z.array(logEntry), pagination: z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), pages: z.number().int() }) })),
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
      successSchema(z.object({ total: z.object({ human: z.number().int(), bot: z.number().int(), all: z.number().int() }), last_week: z.record(z.string(), dayCounts) })),
      "The figures",
    ),
    ...errorResponses(...authErrors),
  },
});

const author = z.object({ id: z.string(), name: z.string().nullable(), type: z.string() });
const dashboardRoute = createRoute({
  method: "get",
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

const summarySchema = z
  .object({
    branch_id: z.string(),
    summary: z.string().nullable(),
    covers_up_to: z.number().int().openapi({ description: "segments on the branch's reading path that the summary covers" }),
    source: z.enum(["llm", "extractive"]).nullable(),
    updated_at: z.string().nullable(),
  })
  .openapi("BranchSummary");

const getSummaryRoute = createRoute({
  method: "get",
  path: "/branches/{branch_id}/summary",
  tags: ["Summaries"],
  summary: "A branch's stored summary; force_refresh=true (with a credential) regenerates it",
  middleware: [auth({ optional: true })] as const,
  request: {
    params: idParam("branch_id"),
    query: z.object({ force_refresh: queryBoolean.default(false).openapi({ param: { name: "force_refresh", in: "query" } }) }),
  },
  responses: { 200: jsonContent(successSchema(summarySchema), "The summary"), ...errorResponses(...authErrors, "NOT_FOUND") },
});

const postSummaryRoute = createRoute({
  method: "post",
  path: "/branches/{branch_id}/summary",
  tags: ["Summaries"],
  summary: "Regenerate a branch's summary (language model when configured, else extractive)",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { params: idParam("branch_id") },
  responses: { 200: jsonContent(successSchema(summarySchema), "The new summary"), ...errorResponses(...authErrors, "NOT_FOUND") },
});

export const insightRoutes = createRouter()
  .openapi(reputationRoute, async (c) => ok(c, await botReputation(getDb(c.env.DB), c.req.valid("param").bot_id.toLowerCase())))
  .openapi(logsRoute, async (c) => {
    const q = c.req.valid("query");
    if (q.story_id !== undefined && !isUuid(q.story_id)) throw notFound("Story");
    return ok(c, await listLogs(getDb(c.env.DB), { page: q.page, limit: q.limit, storyId: q.story_id?.toLowerCase(), authorType: q.author_type, days: q.days }));
  })
  .openapi(logStatsRoute, async (c) => ok(c, await logStats(getDb(c.env.DB))))
  .openapi(dashboardRoute, async (c) => ok(c, await dashboardStats(getDb(c.env.DB))))
  .openapi(getSummaryRoute, async (c) => {
    const id = c.req.valid("param").branch_id.toLowerCase();
    if (!c.req.valid("query").force_refresh) return ok(c, await getSummary(getDb(c.env.DB), id));
    if (!c.get("actor")) throw new ApiError("UNAUTHORIZED", "force_refresh needs a credential");
    return ok(c, await generateSummary(getDb(c.env.DB), c.env, id));
  })
  .openapi(postSummaryRoute, async (c) => ok(c, await generateSummary(getDb(c.env.DB), c.env, c.req.valid("param").branch_id.toLowerCase())));
