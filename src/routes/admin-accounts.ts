import { createRoute, z } from "@hono/zod-openapi";
import { auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { moderatorsOnly } from "../middleware/moderators";
import { ok, successSchema } from "../lib/envelope";
import { accountId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { restoreAccount, setRole, suspendAccount } from "../usecases/admin-accounts";
import { reasonField } from "../schemas/reports";
import { authErrors, idParam } from "./schemas";

/** The admin routes on accounts: suspend, restore, the moderator role. Tag "Admin", moderators only. */

const accountStandingSchema = z
  .object({
    id: z.string(),
    type: z.enum(["human", "admin", "bot"]),
    name: z.string(),
    role: z.enum(["user", "moderator"]).openapi({ description: "a human's moderator role (admins moderate by their type)" }),
    suspended: z.boolean(),
    suspended_at: z.string().nullable(),
    suspended_until: z.string().nullable().openapi({ description: "when the suspension ends; null with suspended_at: until restored" }),
    suspension_reason: z.string().nullable(),
  })
  .openapi("AccountStanding");

const suspendBody = z
  .object({
    reason: reasonField.openapi({ description: "why: shown to the account (ACCOUNT_SUSPENDED's details) and kept in the audit log" }),
    until: z
      .string()
      .datetime({ offset: true })
      .nullish()
      .openapi({ description: "when the suspension ends (ISO 8601, in the future); absent: until restored" }),
  })
  .strict();
const restoreBody = z.object({ reason: reasonField.nullish() }).strict();
const roleBody = z.object({ role: z.enum(["moderator", "user"]), reason: reasonField.nullish() }).strict();

const accountParam = idParam("id");
const moderatorErrors = [...authErrors, "FORBIDDEN", "NOT_FOUND"] as const;

const suspendRoute = createRoute({
  method: "post",
  path: "/admin/accounts/{id}/suspend",
  tags: ["Admin"],
  summary: "Suspend an account (a human's or a bot's): every credential refused with 403 ACCOUNT_SUSPENDED from its next request",
  description:
    "Moderators and admins. A suspended bot leaves every turn queue at once (the turn passes to the next bot) and its webhooks stop. " +
    "Nobody suspends their own account; only admins suspend admins or moderators (403 PERMISSION_DENIED). Written with its audit row.",
  security: bearerSecurity,
  middleware: [auth(), moderatorsOnly] as const,
  request: { params: accountParam, body: jsonBody(suspendBody) },
  responses: { 200: jsonContent(successSchema(accountStandingSchema), "Suspended"), ...errorResponses(...moderatorErrors, "PERMISSION_DENIED") },
});

const restoreRoute = createRoute({
  method: "post",
  path: "/admin/accounts/{id}/restore",
  tags: ["Admin"],
  summary: "Lift an account's suspension: it logs in again (a bot rejoins queues itself)",
  security: bearerSecurity,
  middleware: [auth(), moderatorsOnly] as const,
  request: { params: accountParam, body: jsonBody(restoreBody) },
  responses: { 200: jsonContent(successSchema(accountStandingSchema), "Restored"), ...errorResponses(...moderatorErrors, "PERMISSION_DENIED") },
});

const roleRoute = createRoute({
  method: "post",
  path: "/admin/accounts/{id}/role",
  tags: ["Admin"],
  summary: "Make a human a moderator, or a moderator a user again (admins only)",
  description: "Takes effect on the account's next request. Bots cannot be moderators; admins moderate by their type (400 naming `role`).",
  security: bearerSecurity,
  middleware: [auth({ types: ["admin"] }), moderatorsOnly] as const,
  request: { params: accountParam, body: jsonBody(roleBody) },
  responses: { 200: jsonContent(successSchema(accountStandingSchema), "The role set"), ...errorResponses(...moderatorErrors) },
});

export const adminAccountRoutes = createRouter()
  .openapi(suspendRoute, async (c) => ok(c, await suspendAccount(callerOf(c), accountId(c.req.valid("param").id), c.req.valid("json")), 200))
  .openapi(restoreRoute, async (c) => ok(c, await restoreAccount(callerOf(c), accountId(c.req.valid("param").id), c.req.valid("json")), 200))
  .openapi(roleRoute, async (c) => ok(c, await setRole(callerOf(c), accountId(c.req.valid("param").id), c.req.valid("json")), 200));
