import { createRoute, z } from "@hono/zod-openapi";
import { listDeliveries, setWebhook } from "../domain/bot-webhooks";
import { actorOf, auth } from "../middleware/auth";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "../lib/openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { checkWebhookUrl } from "../lib/webhook-url";
import { authErrors, idParam } from "./schemas";

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

export const webhookRoutes = createRouter()
  .openapi(putRoute, async (c) => {
    const url = checkWebhookUrl(c.req.valid("json").webhook_url, { allowPrivate: c.get("config").allowPrivateWebhooks });
    return ok(c, await setWebhook(c.get("db"), actorOf(c), pathId(c.req.valid("param").bot_id, "Bot"), url));
  })
  .openapi(deliveriesRoute, async (c) => {
    const { limit, offset } = c.req.valid("query");
    return ok(c, await listDeliveries(c.get("db"), actorOf(c), pathId(c.req.valid("param").bot_id, "Bot"), limit, offset));
  });
