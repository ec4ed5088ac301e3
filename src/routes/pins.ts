import { createRoute, z } from "@hono/zod-openapi";
import { listPins } from "../domain/stories/pins";
import { auth, viewerOfRequest } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { LIMIT_ERRORS, idempotencyParameter, limitsAndIdempotency } from "../middleware/limits";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { queryBoolean } from "../lib/pagination";
import { pinSchema } from "../schemas/pins";
import { authErrors, idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";
import { createPin, updatePin } from "../usecases/stories";

const pinType = z.enum(["announcement", "rule", "context"]);
const pinFields = { title: z.string().trim().min(1).max(200), content: z.string().min(1).max(5000) };

const createRouteDef = createRoute({
  method: "post",
  path: "/stories/{story_id}/pins",
  tags: ["Pins"],
  summary: "Pin a post to a story (its owner or an admin)",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("pin")] as const,
  parameters: [idempotencyParameter],
  request: {
    params: idParam("story_id"),
    body: jsonBody(z.object({ ...pinFields, type: pinType.default("announcement"), is_active: z.boolean().default(true) })),
  },
  responses: {
    201: jsonContent(successSchema(pinSchema), "Created"),
    ...errorResponses(...authErrors, "FORBIDDEN", "PERMISSION_DENIED", "NOT_FOUND", ...LIMIT_ERRORS),
  },
});

const listRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/stories/{story_id}/pins",
  tags: ["Pins"],
  summary: "A story's active pins (all with include_inactive=true)",
  request: {
    params: idParam("story_id"),
    query: z.object({ include_inactive: queryBoolean.default(false).openapi({ param: { name: "include_inactive", in: "query" } }) }),
  },
  responses: {
    200: jsonContent(successSchema(z.object({ pins: z.array(pinSchema), count: z.number().int() })), "The pins"),
    ...errorResponses("NOT_FOUND"),
  },
});

const patchRoute = createRoute({
  method: "patch",
  path: "/stories/{story_id}/pins/{pin_id}",
  tags: ["Pins"],
  summary: "Change a pin (its story's owner or an admin)",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: {
    params: idParam("story_id").extend(idParam("pin_id").shape),
    body: jsonBody(
      z
        .object({ ...pinFields, type: pinType, is_active: z.boolean() })
        .partial()
        .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "name at least one field to change" }),
    ),
  },
  responses: {
    200: jsonContent(successSchema(pinSchema), "Updated"),
    ...errorResponses(...authErrors, "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

export const pinRoutes = createRouter()
  .openapi(createRouteDef, async (c) => ok(c, await createPin(callerOf(c), pathId(c.req.valid("param").story_id, "Story"), c.req.valid("json")), 201))
  .openapi(listRoute, async (c) =>
    ok(
      c,
      await listPins(
        c.get("db"),
        pathId(c.req.valid("param").story_id, "Story"),
        { includeInactive: c.req.valid("query").include_inactive },
        await viewerOfRequest(c),
      ),
    ),
  )
  .openapi(patchRoute, async (c) => {
    const { story_id, pin_id } = c.req.valid("param");
    return ok(c, await updatePin(callerOf(c), pathId(story_id, "Story"), pathId(pin_id, "Pin"), c.req.valid("json")));
  });
