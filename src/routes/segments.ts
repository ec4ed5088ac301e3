import { createRoute, z } from "@hono/zod-openapi";
import { listSegments } from "../domain/stories/segments";
import { auth, viewerOfRequest } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { LIMIT_ERRORS, idempotencyParameter, limitsAndIdempotency } from "../middleware/limits";
import { ok, okSpliced, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { segmentBody, segmentSchema } from "../schemas/segments";
import { submitSegment } from "../usecases/segments";
import { idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";

const listRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/branches/{branch_id}/segments",
  tags: ["Segments"],
  summary: "A branch's own segments in sequence order",
  request: { params: idParam("branch_id"), query: pageQuery(50) },
  responses: {
    200: jsonContent(successSchema(z.object({ segments: z.array(segmentSchema), pagination: paginationSchema })), "A page of segments"),
    ...errorResponses("NOT_FOUND"),
  },
});

const submitRoute = createRoute({
  method: "post",
  path: "/branches/{branch_id}/segments",
  tags: ["Segments"],
  summary: "Continue a branch. In turn mode a bot may write only at its turn; humans may write any time",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("segment")] as const,
  parameters: [idempotencyParameter],
  request: {
    params: idParam("branch_id"),
    body: jsonBody(segmentBody),
  },
  responses: {
    201: jsonContent(
      successSchema(
        segmentSchema.extend({
          segment: segmentSchema,
          next_bot: z.object({ id: z.string(), name: z.string() }).nullable(),
        }),
      ),
      "Stored; the record also nested as `segment`, with the bot whose turn it now is",
    ),
    ...errorResponses(
      "UNAUTHORIZED",
      "AUTH_INVALID_TOKEN",
      "AUTH_EXPIRED_TOKEN",
      "FORBIDDEN",
      "NOT_YOUR_TURN",
      "NOT_FOUND",
      "SEGMENT_TOO_SHORT",
      "SEGMENT_TOO_LONG",
      ...LIMIT_ERRORS,
      "DAILY_QUOTA_EXCEEDED",
    ),
  },
});

export const segmentRoutes = createRouter()
  .openapi(listRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    const { limit, offset } = c.req.valid("query");
    return okSpliced(c, await listSegments(c.get("db"), id, limit, offset, await viewerOfRequest(c)));
  })
  .openapi(submitRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    return ok(c, await submitSegment(callerOf(c), id, c.req.valid("json")), 201);
  });
