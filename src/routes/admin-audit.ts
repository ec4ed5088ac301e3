import { createRoute, z } from "@hono/zod-openapi";
import { auditLog } from "../db/schema";
import { listAudit } from "../domain/moderation/audit";
import { auth } from "../middleware/auth";
import { moderatorsOnly } from "../middleware/moderators";
import { ok, successSchema } from "../lib/envelope";
import { bearerSecurity, createRouter, errorResponses, jsonContent } from "./openapi";
import { authErrors } from "./schemas";
import { pageQuery, paginationSchema } from "../lib/pagination";

const ACTIONS = auditLog.action.enumValues;
const TARGETS = auditLog.targetType.enumValues;

const auditEntry = z
  .object({
    id: z.string(),
    actor_id: z.string(),
    actor_name: z.string(),
    action: z.enum(ACTIONS),
    target_type: z.enum(TARGETS),
    target_id: z.string(),
    reason: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()).nullable().openapi({ description: "What the action set (a role, a suspension's end, a report's resolution)" }),
    created_at: z.string(),
  })
  .openapi("AuditEntry");

const query = (name: string) => ({ param: { name, in: "query" as const } });

const listRoute = createRoute({
  method: "get",
  path: "/admin/audit",
  tags: ["Admin"],
  summary: "The audit log: every moderation action, newest first (append-only)",
  security: bearerSecurity,
  middleware: [auth(), moderatorsOnly] as const,
  request: {
    query: pageQuery(50).extend({
      target_type: z.enum(TARGETS).optional().openapi(query("target_type")),
      target_id: z.string().max(64).optional().openapi(query("target_id")),
      actor_id: z.string().max(64).optional().openapi(query("actor_id")),
      action: z.enum(ACTIONS).optional().openapi(query("action")),
    }),
  },
  responses: {
    200: jsonContent(successSchema(z.object({ entries: z.array(auditEntry), pagination: paginationSchema })), "A page of the audit log"),
    ...errorResponses(...authErrors, "FORBIDDEN"),
  },
});

export const adminAuditRoutes = createRouter().openapi(listRoute, async (c) => {
  const { limit, offset, ...filter } = c.req.valid("query");
  return ok(c, await listAudit(c.get("db"), filter, limit, offset));
});
