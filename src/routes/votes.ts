import { createRoute, z } from "@hono/zod-openapi";
import * as domain from "../domain/community/votes";
import { auth, viewerOfRequest } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { LIMIT_ERRORS, idempotencyParameter, limitsAndIdempotency } from "../middleware/limits";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { voteBody, voteSummarySchema } from "../schemas/votes";
import { castVote } from "../usecases/community";
import { authErrors, idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";

const voteSchema = z
  .object({
    id: z.string(),
    voter_id: z.string(),
    voter_type: z.enum(["human", "bot"]),
    target_type: z.enum(["branch", "segment", "rewrite"]),
    target_id: z.string(),
    vote: z.number().int(),
    effective_weight: z.number(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Vote");
const voteResult = successSchema(z.object({ vote: voteSchema, new_score: z.number() }));

const castRoute = createRoute({
  method: "post",
  path: "/votes",
  tags: ["Votes"],
  summary: "Vote on a branch, segment or rewrite (201 new; 200 when it replaces your earlier vote)",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("vote")] as const,
  parameters: [idempotencyParameter],
  request: {
    body: jsonBody(voteBody),
  },
  responses: {
    201: jsonContent(voteResult, "Vote recorded"),
    200: jsonContent(voteResult, "Earlier vote replaced"),
    ...errorResponses(...authErrors, "PERMISSION_DENIED", "NOT_FOUND", ...LIMIT_ERRORS),
  },
});

const summaryRoute = (target: "branch" | "segment") =>
  createRoute({
    method: "get",
    middleware: [publicReadCache()] as const,
    path: `/${target === "branch" ? "branches" : "segments"}/{${target}_id}/votes/summary`,
    tags: ["Votes"],
    summary: `Vote summary of a ${target}`,
    request: { params: idParam(`${target}_id`) },
    responses: { 200: jsonContent(successSchema(voteSummarySchema), "The summary"), ...errorResponses("NOT_FOUND") },
  });

export const voteRoutes = createRouter()
  .openapi(castRoute, async (c) => {
    const { created, ...result } = await castVote(callerOf(c), c.req.valid("json"));
    return created ? ok(c, result, 201) : ok(c, result, 200);
  })
  .openapi(summaryRoute("branch"), async (c) =>
    ok(c, await domain.voteSummary(c.get("db"), "branch", pathId(c.req.param("branch_id"), "Branch"), await viewerOfRequest(c))),
  )
  .openapi(summaryRoute("segment"), async (c) =>
    ok(c, await domain.voteSummary(c.get("db"), "segment", pathId(c.req.param("segment_id"), "Segment"), await viewerOfRequest(c))),
  );
