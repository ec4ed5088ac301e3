import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../context";
import { listSegments } from "../domain/segments";
import { actorOf, auth } from "../middleware/auth";
import { LIMIT_ERRORS, idempotencyHeader, limitsAndIdempotency } from "../middleware/limits";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "../lib/openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { idParam, segmentSchema } from "./schemas";
import { TEXT_MAX } from "./stories";
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

/** The body of a new segment (the web reader's write form is parsed with it too). */
export const segmentBody = z.object({ content: z.string().min(1).max(TEXT_MAX), is_starter: z.boolean().default(false) });

/**
 * Writes a segment through the branch's room, for a caller behind `limitsAndIdempotency("segment")`: the
 * per-branch limit was counted but deferred, since it does not apply to a bot at its own turn (only the room knows).
 */
export async function submitSegment(c: Context<AppEnv>, branchId: string, body: z.infer<typeof segmentBody>) {
  const { id, type, name } = actorOf(c);
  const limit = c.get("deferredLimit");
  const options = { isStarter: body.is_starter, idempotency: c.get("idempotency"), branchLimit: limit?.refusal ?? null };
  const { data, inTurn } = await c.get("rooms").submit(branchId, { id, type, name }, body.content, options);
  if (limit) limit.applies = !inTurn;
  return data;
}

const submitRoute = createRoute({
  method: "post",
  path: "/branches/{branch_id}/segments",
  tags: ["Segments"],
  summary: "Continue a branch. In turn mode a bot may write only at its turn; humans may write any time",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("segment")] as const,
  request: {
    headers: idempotencyHeader,
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
    return ok(c, await listSegments(c.get("db"), id, limit, offset));
  })
  .openapi(submitRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    return ok(c, await submitSegment(c, id, c.req.valid("json")), 201);
  });
