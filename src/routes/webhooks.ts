import { createRoute, z } from "@hono/zod-openapi";
import { listDeliveries, webhookStatus } from "../domain/bots/bot-webhooks";
import { actorOf, auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { authErrors, idParam } from "./schemas";
import { setWebhook } from "../usecases/bots";

// Any credential: an unknown bot id is 404 for everyone, so the kind of caller is checked after the id.
const anyCredential = auth();

const putRoute = createRoute({
  method: "put",
  path: "/bots/{bot_id}/webhook",
  tags: ["Webhooks"],
  summary: "Set the bot's webhook address; returns a new signing secret (the bot itself only)",
  security: bearerSecurity,
  middleware: [anyCredential] as const,
  request: { params: idParam("bot_id"), body: jsonBody(z.object({ webhook_url: z.string().min(1).max(2048) })) },
  responses: {
    200: jsonContent(
      successSchema(z.object({ bot_id: z.string(), webhook_url: z.string().nullable(), webhook_secret: z.string(), updated_at: z.string() })),
      "Updated",
    ),
    ...errorResponses(...authErrors, "FORBIDDEN", "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

const deliverySchema = z
  .object({
    id: z.string().openapi({ description: "the X-Service-Delivery id" }),
    event: z.enum(["your_turn", "new_branch"]),
    status: z.enum(["pending", "retrying", "delivered", "failed"]),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    delivered_at: z.string().nullable(),
  })
  .openapi("WebhookDelivery");

const deliveriesRoute = createRoute({
  method: "get",
  path: "/bots/{bot_id}/webhook/deliveries",
  tags: ["Webhooks"],
  summary: "The bot's recent webhook deliveries, newest first (the bot itself only)",
  security: bearerSecurity,
  middleware: [anyCredential] as const,
  request: { params: idParam("bot_id"), query: pageQuery(20) },
  responses: {
    200: jsonContent(successSchema(z.object({ deliveries: z.array(deliverySchema), pagination: paginationSchema })), "A page of deliveries"),
    ...errorResponses(...authErrors, "FORBIDDEN", "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

const statusSchema = z
  .object({
    bot_id: z.string(),
    webhook_url: z.string().nullable().openapi({ description: "the address as configured (null: none)" }),
    is_configured: z.boolean(),
    deliveries: z
      .object({ total: z.number().int(), pending: z.number().int(), retrying: z.number().int(), delivered: z.number().int(), failed: z.number().int() })
      .openapi({ description: "the deliveries kept (7 days), by outcome" }),
    last_attempt: z
      .object({
        delivery_id: z.string(),
        event: z.enum(["your_turn", "new_branch"]),
        attempt: z.number().int().openapi({ description: "1 for the first attempt at that delivery" }),
        at: z.string(),
        status_code: z.number().int().nullable().openapi({ description: "the receiver's answer; null when none came (timeout, refused)" }),
        error: z.string().nullable(),
        ok: z.boolean().openapi({ description: "a 2xx answer" }),
      })
      .nullable(),
  })
  .openapi("WebhookStatus");

const statusRoute = createRoute({
  method: "get",
  path: "/bots/{bot_id}/webhook/status",
  tags: ["Webhooks"],
  summary: "The bot's webhook: its address, its deliveries by outcome and its last attempt (the bot itself only; InkPath's path)",
  security: bearerSecurity,
  middleware: [anyCredential] as const,
  request: { params: idParam("bot_id") },
  responses: {
    200: jsonContent(successSchema(statusSchema), "The webhook's status"),
    ...errorResponses(...authErrors, "FORBIDDEN", "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

export const webhookRoutes = createRouter()
  .openapi(putRoute, async (c) => ok(c, await setWebhook(callerOf(c), c.req.valid("param").bot_id, c.req.valid("json").webhook_url)))
  .openapi(deliveriesRoute, async (c) => {
    const { limit, offset } = c.req.valid("query");
    return ok(c, await listDeliveries(c.get("db"), actorOf(c), pathId(c.req.valid("param").bot_id, "Bot"), limit, offset));
  })
  .openapi(statusRoute, async (c) => ok(c, await webhookStatus(c.get("db"), actorOf(c), pathId(c.req.valid("param").bot_id, "Bot"))));
