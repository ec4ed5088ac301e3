import { createRoute, z } from "@hono/zod-openapi";
import { HIDEABLE, type HideableType } from "../domain/moderation/moderation";
import { auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { moderatorsOnly } from "../middleware/moderators";
import { optionalBody } from "../middleware/optional-body";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent, optionalJsonBody } from "./openapi";
import { hideItem, restoreItem } from "../usecases/moderation";
import { reasonField } from "../schemas/reports";
import { authErrors, idParam } from "./schemas";

/** Hiding and restoring content: `POST /admin/{segments|comments|stories|branches}/{id}/hide` and `…/restore`. */

const hidingSchema = z
  .object({
    target_type: z.enum(HIDEABLE),
    id: z.string(),
    hidden: z.boolean(),
    hidden_at: z.string().nullable(),
    hidden_by: z.string().nullable().openapi({ description: "the moderator who hid it" }),
    hidden_reason: z.string().nullable(),
    changed: z.boolean().openapi({ description: "false when the item already was as asked (a repeat: nothing written, no audit row)" }),
  })
  .openapi("Hiding");

const PLURAL: Record<HideableType, string> = { segment: "segments", comment: "comments", story: "stories", branch: "branches" };
const NAME: Record<HideableType, string> = { segment: "Segment", comment: "Comment", story: "Story", branch: "Branch" };
const errors = errorResponses(...authErrors, "FORBIDDEN", "PERMISSION_DENIED", "NOT_FOUND");

const hideRoute = (type: HideableType) =>
  createRoute({
    method: "post",
    path: `/admin/${PLURAL[type]}/{id}/hide`,
    tags: ["Admin"],
    summary: `Hide a ${type}: it keeps its place, its text leaves every public read (moderators only; a repeat is 200 with changed: false)`,
    description: "Nobody hides or restores their own content (403 PERMISSION_DENIED): another moderator decides.",
    security: bearerSecurity,
    middleware: [auth(), moderatorsOnly] as const,
    request: { params: idParam("id"), body: jsonBody(z.object({ reason: reasonField })) },
    responses: { 200: jsonContent(successSchema(hidingSchema), "Hidden (or already hidden)"), ...errors },
  });

const restoreRoute = (type: HideableType) =>
  createRoute({
    method: "post",
    path: `/admin/${PLURAL[type]}/{id}/restore`,
    tags: ["Admin"],
    summary: `Restore a hidden ${type} (moderators only; restoring a visible one is 200 with changed: false)`,
    description: "Nobody hides or restores their own content (403 PERMISSION_DENIED): another moderator decides.",
    security: bearerSecurity,
    middleware: [optionalBody, auth(), moderatorsOnly] as const,
    request: { params: idParam("id"), body: optionalJsonBody(z.object({ reason: reasonField.optional() })) },
    responses: { 200: jsonContent(successSchema(hidingSchema), "Restored (or already visible)"), ...errors },
  });

export const adminContentRoutes = createRouter();
for (const type of HIDEABLE) {
  adminContentRoutes.openapi(hideRoute(type), async (c) => {
    const id = pathId(c.req.valid("param").id, NAME[type]);
    return ok(c, await hideItem(callerOf(c), { type, id }, c.req.valid("json").reason));
  });
  adminContentRoutes.openapi(restoreRoute(type), async (c) => {
    const id = pathId(c.req.valid("param").id, NAME[type]);
    return ok(c, await restoreItem(callerOf(c), { type, id }, c.req.valid("json")?.reason ?? null));
  });
}
