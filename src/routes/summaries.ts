import { createRoute, z } from "@hono/zod-openapi";
import { getSummary } from "../domain/community/summaries";
import { auth, viewerOfRequest } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { plainText } from "../lib/characters";
import { ok, successSchema } from "../lib/envelope";
import { ApiError } from "../lib/errors";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { queryBoolean } from "../lib/pagination";
import { authErrors, idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";
import { summaryLimit } from "../middleware/subject-limits";
import { regenerateSummary, writeSummary } from "../usecases/community";

const summarySchema = z
  .object({
    branch_id: z.string(),
    summary: z.string(),
    covers_up_to: z.number().int().openapi({ description: "segments on the branch's reading path that the summary covers" }),
    source: z.enum(["llm", "extractive", "manual"]).openapi({ description: "`manual`: written by hand by the story's owner or an admin (`PATCH`)" }),
    updated_at: z
      .string()
      .nullable()
      .openapi({ description: "null when none is stored: `GET` then answers the extractive summary of the reading path as it is (not stored)" }),
  })
  .openapi("BranchSummary");

/** The hand-written summary as `PATCH` answers it: the record, and the names InkPath's server answers with. */
const writtenSummarySchema = summarySchema
  .extend({
    summary: z.string(),
    updated_at: z.string(),
    current_summary: z.string().openapi({ description: "= summary (InkPath's name)" }),
    summary_updated_at: z.string().openapi({ description: "= updated_at (InkPath's name)" }),
    summary_covers_up_to: z.number().int().openapi({ description: "= covers_up_to (InkPath's name)" }),
  })
  .openapi("WrittenBranchSummary");

const SUMMARY_MAX = 10_000;

const getSummaryRoute = createRoute({
  method: "get",
  path: "/branches/{branch_id}/summary",
  tags: ["Summaries"],
  summary: "A branch's stored summary, else the extractive summary of its reading path as it is; force_refresh=true (with a credential) regenerates it",
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

const patchSummaryRoute = createRoute({
  method: "patch",
  path: "/branches/{branch_id}/summary",
  tags: ["Summaries"],
  summary: "Write a branch's summary by hand (the story's owner or an admin; InkPath's path)",
  description:
    "`GET …/summary` serves it until a regeneration that the story's owner or an admin asks for (`POST`, or `force_refresh=true`); anyone else's regeneration leaves it in place and answers with it.",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: {
    params: idParam("branch_id"),
    body: jsonBody(z.object({ current_summary: plainText(z.string().trim().min(1).max(SUMMARY_MAX)) })),
  },
  responses: {
    200: jsonContent(successSchema(writtenSummarySchema), "The summary as written"),
    ...errorResponses(...authErrors, "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

const withInkPathNames = <T extends { summary: string; updated_at: string; covers_up_to: number }>(s: T) => ({
  ...s,
  current_summary: s.summary,
  summary_updated_at: s.updated_at,
  summary_covers_up_to: s.covers_up_to,
});

export const summaryRoutes = createRouter()
  .openapi(getSummaryRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    if (!c.req.valid("query").force_refresh) return ok(c, await getSummary(c.get("db"), id, await viewerOfRequest(c)));
    if (!c.get("actor")) throw new ApiError("UNAUTHORIZED", "force_refresh needs a credential");
    return ok(c, await regenerateSummary(callerOf(c), id));
  })
  .openapi(postSummaryRoute, async (c) => ok(c, await regenerateSummary(callerOf(c), pathId(c.req.valid("param").branch_id, "Branch"))))
  .openapi(patchSummaryRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    return ok(c, withInkPathNames(await writeSummary(callerOf(c), id, c.req.valid("json").current_summary)));
  });
