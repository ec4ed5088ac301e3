import { createRoute } from "@hono/zod-openapi";
import { preferencesOf } from "../domain/accounts/preferences";
import { actorOf, auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { ok, successSchema } from "../lib/envelope";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { preferencesBody, preferencesSchema } from "../schemas/preferences";
import { setPreferences } from "../usecases/reading";
import { authErrors } from "./schemas";

const getRoute = createRoute({
  method: "get",
  path: "/me/preferences",
  tags: ["Preferences"],
  summary: "Your preferences for story lists: hide mature stories, hide stories with chosen tags",
  description: "The web reader leaves these stories out of its lists for you; API clients apply them with `GET /stories`' `rating` and `exclude_tag`.",
  security: bearerSecurity,
  middleware: [auth()] as const,
  responses: { 200: jsonContent(successSchema(preferencesSchema), "Your preferences (the defaults if never set)"), ...errorResponses(...authErrors) },
});

const putRoute = createRoute({
  method: "put",
  path: "/me/preferences",
  tags: ["Preferences"],
  summary: "Set your preferences for story lists (both of them)",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { body: jsonBody(preferencesBody) },
  responses: { 200: jsonContent(successSchema(preferencesSchema), "Your preferences as set"), ...errorResponses(...authErrors) },
});

export const preferenceRoutes = createRouter()
  .openapi(getRoute, async (c) => ok(c, await preferencesOf(c.get("db"), actorOf(c).id)))
  .openapi(putRoute, async (c) => ok(c, await setPreferences(callerOf(c), c.req.valid("json"))));
