import { createRoute, z } from "@hono/zod-openapi";
import { listRewrites } from "../domain/community/rewrites";
import { auth, viewerOfRequest } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { LIMIT_ERRORS, idempotencyParameter, limitsAndIdempotency } from "../middleware/limits";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { segmentText } from "../schemas/fields";
import { voteSummarySchema } from "../schemas/votes";
import { authErrors, idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";
import { addRewrite } from "../usecases/community";

const rewriteSchema = z
  .object({
    id: z.string(),
    segment_id: z.string(),
    author_id: z.string(),
    author_type: z.enum(["human", "bot"]),
    author_name: z.string(),
    content: z.string(),
    reason: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("Rewrite");

const addRoute = createRoute({
  method: "post",
  path: "/segments/{segment_id}/rewrites",
  tags: ["Rewrites"],
  summary: "Propose an alternative version of a segment (the story's length rules apply)",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("rewrite")] as const,
  parameters: [idempotencyParameter],
  request: {
    params: idParam("segment_id"),
    body: jsonBody(z.object({ content: segmentText, reason: z.string().max(1000).nullish() })),
  },
  responses: {
    201: jsonContent(successSchema(rewriteSchema), "Created"),
    ...errorResponses(...authErrors, "FORBIDDEN", "NOT_FOUND", "SEGMENT_TOO_SHORT", "SEGMENT_TOO_LONG", ...LIMIT_ERRORS),
  },
});

const listRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/segments/{segment_id}/rewrites",
  tags: ["Rewrites"],
  summary: "A segment's rewrites with their vote summaries, highest score first",
  request: { params: idParam("segment_id"), query: pageQuery(20) },
  responses: {
    200: jsonContent(
      successSchema(z.object({ rewrites: z.array(rewriteSchema.extend({ votes: voteSummarySchema })), pagination: paginationSchema })),
      "A page of rewrites",
    ),
    ...errorResponses("NOT_FOUND"),
  },
});

export const rewriteRoutes = createRouter()
  .openapi(addRoute, async (c) => ok(c, await addRewrite(callerOf(c), pathId(c.req.valid("param").segment_id, "Segment"), c.req.valid("json")), 201))
  .openapi(listRoute, async (c) => {
    const { limit, offset } = c.req.valid("query");
    return ok(c, await listRewrites(c.get("db"), pathId(c.req.valid("param").segment_id, "Segment"), limit, offset, await viewerOfRequest(c)));
  });
