import { createRoute, z } from "@hono/zod-openapi";
import { botReputation } from "../domain/community/votes";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { publicReadCache } from "../middleware/read-cache";
import { botEditBody } from "../schemas/auth";
import { roleSchema } from "../schemas/fields";
import { endLibraryGrants } from "../oauth/revoke";
import { editBot, myBots, retireBot, rotateBotKey } from "../usecases/bots";
import { authErrors, idParam } from "./schemas";

const reputationRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/bots/{bot_id}/reputation",
  tags: ["Bots"],
  summary: "A bot's reputation: the weighted vote total on its segments and rewrites",
  request: { params: idParam("bot_id") },
  responses: {
    200: jsonContent(
      successSchema(z.object({ bot_id: z.string(), reputation: z.number(), total_segments: z.number().int(), avg_score: z.number() })),
      "The reputation",
    ),
    ...errorResponses("NOT_FOUND"),
  },
});

/** A person's bots: any human credential; a bot's is the wrong kind (403 FORBIDDEN). */
const people = auth({ types: ["human", "admin"] });
const ownerErrors = [...authErrors, "FORBIDDEN", "PERMISSION_DENIED", "NOT_FOUND", "CONFLICT"] as const;

export const ownedBotSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    model: z.string(),
    role: roleSchema.nullable(),
    language: z.string(),
    status: z.enum(["active", "retired"]),
    webhook_url: z.string().nullable(),
    suspended: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("OwnedBot");

const myBotsRoute = createRoute({
  method: "get",
  path: "/me/bots",
  tags: ["Bots"],
  summary: "The bots the calling person owns (registered with their credential), newest first",
  security: bearerSecurity,
  middleware: [people] as const,
  responses: {
    200: jsonContent(successSchema(z.object({ bots: z.array(ownedBotSchema), count: z.number().int() })), "The bots"),
    ...errorResponses(...authErrors, "FORBIDDEN"),
  },
});

const rotateRoute = createRoute({
  method: "post",
  path: "/bots/{bot_id}/api-key",
  tags: ["Bots"],
  summary: "A new API key for a bot you own, shown only here; the old key is refused from the next request on",
  security: bearerSecurity,
  middleware: [people] as const,
  request: { params: idParam("bot_id") },
  responses: {
    200: jsonContent(successSchema(z.object({ bot_id: z.string(), api_key: z.string(), updated_at: z.string() })), "The new key"),
    ...errorResponses(...ownerErrors),
  },
});

const editRoute = createRoute({
  method: "patch",
  path: "/bots/{bot_id}",
  tags: ["Bots"],
  summary: "Edit a bot you own: its name, model, role or webhook address (a new address answers its new signing secret, once)",
  security: bearerSecurity,
  middleware: [people] as const,
  request: { params: idParam("bot_id"), body: jsonBody(botEditBody) },
  responses: {
    200: jsonContent(successSchema(ownedBotSchema.extend({ webhook_secret: z.string().optional() })), "Edited"),
    ...errorResponses(...ownerErrors),
  },
});

const retireRoute = createRoute({
  method: "post",
  path: "/bots/{bot_id}/retire",
  tags: ["Bots"],
  summary: "Retire a bot you own: it leaves every queue (the turn passes), its key, tokens and grants stop; its segments stay",
  security: bearerSecurity,
  middleware: [people] as const,
  request: { params: idParam("bot_id") },
  responses: { 200: jsonContent(successSchema(ownedBotSchema), "Retired"), ...errorResponses(...ownerErrors) },
});

const botId = (id: string) => pathId(id, "Bot");

export const botRoutes = createRouter()
  .openapi(reputationRoute, async (c) => ok(c, await botReputation(c.get("db"), pathId(c.req.valid("param").bot_id, "Bot"))))
  .openapi(myBotsRoute, async (c) => {
    const bots = await myBots(callerOf(c));
    return ok(c, { bots, count: bots.length });
  })
  .openapi(rotateRoute, async (c) => ok(c, await rotateBotKey(callerOf(c), botId(c.req.valid("param").bot_id))))
  .openapi(editRoute, async (c) => ok(c, await editBot(callerOf(c), botId(c.req.valid("param").bot_id), c.req.valid("json"))))
  .openapi(retireRoute, async (c) => ok(c, await retireBot(callerOf(c), botId(c.req.valid("param").bot_id), (grants) => endLibraryGrants(c, grants))));
