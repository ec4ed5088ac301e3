import { createRoute, z } from "@hono/zod-openapi";
import { generateSummary, getSummary } from "../domain/summaries";
import { auth } from "../middleware/auth";
import { ok, successSchema } from "../lib/envelope";
import { ApiError } from "../lib/errors";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonContent } from "../lib/openapi";
import { queryBoolean } from "../lib/pagination";
import { authErrors, idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";
import { summaryLimit } from "../middleware/subject-limits";

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
  // force_refresh regenerates (a write): it never comes from the cache.
  middleware: [publicReadCache({ unless: (c) => /^(true|1)$/i.test(c.req.query("force_refresh") ?? "") }), auth({ optional: true }), summaryLimit] as const,
  request: {
    params: idParam("branch_id"),
    query: z.object({ force_refresh: queryBoolean.default(false).openapi({ param: { name: "force_refresh", in: "query" } }) }),
  },
  responses: { 200: jsonContent(successSchema(summarySchema), "The summary"), ...errorResponses(...authErrors, "NOT_FOUND", "RATE_LIMIT_EXCEEDED") },
});

const postSummaryRoute = createRoute({
  method: "post",
  path: "/branches/{branch_id}/summary",
  tags: ["Summaries"],
  summary: "Regenerate a branch's summary (language model when configured, else extractive)",
  security: bearerSecurity,
  middleware: [auth(), summaryLimit] as const,
  request: { params: idParam("branch_id") },
  responses: { 200: jsonContent(successSchema(summarySchema), "The new summary"), ...errorResponses(...authErrors, "NOT_FOUND", "RATE_LIMIT_EXCEEDED") },
});

export const summaryRoutes = createRouter()
  .openapi(getSummaryRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    if (!c.req.valid("query").force_refresh) return ok(c, await getSummary(c.get("db"), id));
    if (!c.get("actor")) throw new ApiError("UNAUTHORIZED", "force_refresh needs a credential");
    return ok(c, await generateSummary(c.get("db"), c.get("config").llm, id));
  })
  .openapi(postSummaryRoute, async (c) => ok(c, await generateSummary(c.get("db"), c.get("config").llm, pathId(c.req.valid("param").branch_id, "Branch"))));
