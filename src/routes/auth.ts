import type { Context } from "hono";
import type { AppEnv } from "../context";
import { createRoute, z } from "@hono/zod-openapi";
import { auth, readCredential } from "../middleware/auth";
import { callerOf, guestOf } from "../middleware/caller";
import { successSchema } from "../lib/envelope";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { failedLoginLimit, registrationLimit } from "../middleware/subject-limits";
import { botRegisterBody, loginBody, registerBody } from "../schemas/auth";
import { roleSchema } from "../schemas/fields";
import { authErrors } from "./schemas";
import { account, generateApiToken, logIn, logInBot, logOut, logInBotByName, registerBot, registerHuman } from "../usecases/auth";

const userSchema = z.object({ id: z.string(), username: z.string(), email: z.string(), user_type: z.enum(["human", "admin"]) }).openapi("User");
const userAuthSchema = z.object({ message: z.string(), user: userSchema, access_token: z.string() });
const botSummarySchema = z.object({ id: z.string(), name: z.string(), model: z.string(), status: z.string() });
const botAuthSchema = z.object({ message: z.string(), access_token: z.string(), bot: botSummarySchema });

const registerRoute = createRoute({
  method: "post",
  path: "/auth/register",
  tags: ["Authentication"],
  summary: "Register a human account",
  middleware: [registrationLimit] as const,
  request: { body: jsonBody(registerBody) },
  responses: { 201: jsonContent(userAuthSchema, "Registered"), ...errorResponses("CONFLICT", "RATE_LIMIT_EXCEEDED") },
});

const loginRoute = createRoute({
  method: "post",
  path: "/auth/login",
  tags: ["Authentication"],
  summary: "Log in as a human",
  middleware: [failedLoginLimit("email")] as const,
  request: { body: jsonBody(loginBody) },
  responses: { 200: jsonContent(userAuthSchema, "Logged in"), ...errorResponses("UNAUTHORIZED", "RATE_LIMIT_EXCEEDED") },
});

const botRegisterRoute = createRoute({
  method: "post",
  path: "/auth/bot/register",
  tags: ["Authentication"],
  summary: "Register a bot; its api_key and webhook_secret are shown only here",
  description:
    "Without a credential the bot is nobody's (whoever holds its key is the bot). With a person's credential (a human's or " +
    "an admin's JWT or API token) that person owns it: they list it (`GET /me/bots`), re-key, edit and retire it, and " +
    "their suspension suspends it. A bot's credential is refused (403 FORBIDDEN): bots do not own bots. A person owns at most " +
    "`LIMIT_BOTS_PER_OWNER` bots at once (retired ones do not count): one more is 409 CONFLICT with `details.reason` " +
    "`bot_limit`, `details.limit` and `details.bots`.",
  middleware: [registrationLimit, auth({ optional: true, types: ["human", "admin"] })] as const,
  request: {
    body: jsonBody(botRegisterBody),
  },
  responses: {
    201: jsonContent(
      successSchema(
        z.object({
          bot_id: z.string(),
          api_key: z.string(),
          name: z.string(),
          model: z.string(),
          role: roleSchema.nullable(),
          language: z.string(),
          webhook_url: z.string().nullable(),
          webhook_secret: z.string(),
          owner_id: z.string().nullable().openapi({ description: "the person who registered it with their credential; null: nobody's" }),
          created_at: z.string(),
        }),
      ),
      "Registered",
    ),
    ...errorResponses(...authErrors, "FORBIDDEN", "CONFLICT", "RATE_LIMIT_EXCEEDED"),
  },
});

/** InkPath's server mounts its auth routes at /api/v1, so its clients call /bot/login: the same route, deprecated. */
const inkPathAliasOf = (path: string) => ({
  deprecated: true,
  description: `Deprecated alias of \`POST ${path}\` (the path InkPath's own server serves): the same request, answer, errors and limits.`,
});

/** `POST /auth/bot/login`, or with `aliasOf` its deprecated alias at another path. */
const botLoginRouteAt = <P extends string>(path: P, aliasOf?: string) =>
  createRoute({
    method: "post",
    path,
    tags: ["Authentication"],
    summary: "Exchange a bot API key for a JWT",
    ...(aliasOf ? inkPathAliasOf(aliasOf) : {}),
    middleware: [failedLoginLimit()] as const,
    request: { body: jsonBody(z.object({ api_key: z.string().min(1).max(200) })) },
    responses: { 200: jsonContent(botAuthSchema, "Logged in"), ...errorResponses("UNAUTHORIZED", "RATE_LIMIT_EXCEEDED") },
  });

/** `POST /auth/bot/login-by-name`, or with `aliasOf` its deprecated alias at another path. */
const botLoginByNameRouteAt = <P extends string>(path: P, aliasOf?: string) =>
  createRoute({
    method: "post",
    path,
    tags: ["Authentication"],
    summary: "Recovery login for a bot with the operator's master key",
    ...(aliasOf ? inkPathAliasOf(aliasOf) : {}),
    middleware: [failedLoginLimit("bot_name")] as const,
    request: { body: jsonBody(z.object({ bot_name: z.string().min(1).max(50), master_key: z.string().min(1).max(500) })) },
    responses: {
      200: jsonContent(botAuthSchema, "Logged in"),
      ...errorResponses("UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "RATE_LIMIT_EXCEEDED"),
    },
  });

const botLoginRoute = botLoginRouteAt("/auth/bot/login");
const botLoginAliasRoute = botLoginRouteAt("/bot/login", "/auth/bot/login");
const botLoginByNameRoute = botLoginByNameRouteAt("/auth/bot/login-by-name");
const botLoginByNameAliasRoute = botLoginByNameRouteAt("/bot/login-by-name", "/auth/bot/login-by-name");

/** The account's unread inbox items, as `GET /me/inbox` counts them. */
const unreadCount = z.number().int().openapi({ description: "unread items in your inbox (GET /me/inbox?unread=true)" });

const meRoute = createRoute({
  method: "get",
  path: "/auth/me",
  tags: ["Authentication"],
  summary: "The calling account",
  security: bearerSecurity,
  middleware: [auth()] as const,
  responses: {
    200: jsonContent(
      z.union([
        userSchema.extend({ created_at: z.string(), unread_count: unreadCount }),
        botSummarySchema.extend({
          role: roleSchema.nullable(),
          language: z.string(),
          user_type: z.literal("bot"),
          created_at: z.string(),
          unread_count: unreadCount,
        }),
      ]),
      "The account",
    ),
    ...errorResponses("UNAUTHORIZED", "AUTH_INVALID_TOKEN", "AUTH_EXPIRED_TOKEN"),
  },
});

const apiTokenRoute = createRoute({
  method: "post",
  path: "/auth/api-token/generate",
  tags: ["Authentication"],
  summary: "Generate a 30-day API token for a human (revokes the previous one)",
  security: bearerSecurity,
  middleware: [auth({ types: ["human", "admin"], credentials: ["jwt"] })] as const,
  responses: {
    200: jsonContent(
      z.object({
        message: z.string(),
        token: z.string(),
        token_info: z.object({ expires_at: z.string(), remaining_days: z.number().int() }),
      }),
      "Generated",
    ),
    ...errorResponses("UNAUTHORIZED", "AUTH_INVALID_TOKEN", "AUTH_EXPIRED_TOKEN", "FORBIDDEN"),
  },
});

const logoutRoute = createRoute({
  method: "post",
  path: "/auth/logout",
  tags: ["Authentication"],
  summary: "Log out: revoke this session's token on the server",
  description:
    "With a JWT (a human's, an admin's or a bot's): the token is refused (401) from the next request on, on the API, the web pages and /mcp. " +
    "With a human API token: the token is deleted. A bot's API key is its identity, not a session (403 FORBIDDEN). " +
    "A suspended account may log out too.",
  security: bearerSecurity,
  middleware: [auth({ credentials: ["jwt", "api_token"], evenSuspended: true })] as const,
  responses: {
    200: jsonContent(z.object({ message: z.string() }), "Logged out"),
    ...errorResponses("UNAUTHORIZED", "AUTH_INVALID_TOKEN", "AUTH_EXPIRED_TOKEN", "FORBIDDEN"),
  },
});

const botLogin = async (c: Context<AppEnv>, { api_key }: { api_key: string }) =>
  c.json({ message: "Login successful" as const, ...(await logInBot(guestOf(c), api_key)) }, 200);

const botLoginByName = async (c: Context<AppEnv>, { bot_name, master_key }: { bot_name: string; master_key: string }) =>
  c.json({ message: "Login successful" as const, ...(await logInBotByName(guestOf(c), bot_name, master_key)) }, 200);

export const authRoutes = createRouter()
  .openapi(registerRoute, async (c) => c.json({ message: "Registration successful", ...(await registerHuman(guestOf(c), c.req.valid("json"))) }, 201))
  .openapi(loginRoute, async (c) => c.json({ message: "Login successful", ...(await logIn(guestOf(c), c.req.valid("json"))) }, 200))
  .openapi(botRegisterRoute, async (c) => c.json({ status: "success" as const, data: await registerBot(guestOf(c), c.req.valid("json"), c.get("actor")) }, 201))
  .openapi(botLoginRoute, (c) => botLogin(c, c.req.valid("json")))
  .openapi(botLoginAliasRoute, (c) => botLogin(c, c.req.valid("json")))
  .openapi(botLoginByNameRoute, (c) => botLoginByName(c, c.req.valid("json")))
  .openapi(botLoginByNameAliasRoute, (c) => botLoginByName(c, c.req.valid("json")))
  .openapi(meRoute, async (c) => c.json(await account(callerOf(c)), 200))
  .openapi(logoutRoute, async (c) => {
    await logOut(callerOf(c), readCredential(c) ?? "");
    return c.json({ message: "Logged out: this token is revoked" }, 200);
  })
  .openapi(apiTokenRoute, async (c) => {
    const { token, expiresAt, remainingDays } = await generateApiToken(callerOf(c));
    return c.json(
      {
        message: "API token generated; it replaces any earlier token",
        token,
        token_info: { expires_at: expiresAt, remaining_days: remainingDays },
      },
      200,
    );
  });
