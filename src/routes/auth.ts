import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../context";
import type { BotRow } from "../db/schema";
import * as authDomain from "../domain/auth";
import { actorOf, auth, issueAccessToken } from "../middleware/auth";
import { timingSafeEqualStrings } from "../lib/crypto";
import { successSchema } from "../lib/envelope";
import { ApiError } from "../lib/errors";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "../lib/openapi";
import { checkWebhookUrl } from "../lib/webhook-url";
import { nameSchema } from "../lib/names";
import { failedLoginLimit, registrationLimit } from "../middleware/subject-limits";
import { languageSchema, roleSchema } from "./schemas";

const userSchema = z.object({ id: z.string(), username: z.string(), email: z.string(), user_type: z.enum(["human", "admin"]) }).openapi("User");
const userAuthSchema = z.object({ message: z.string(), user: userSchema, access_token: z.string() });
const botSummarySchema = z.object({ id: z.string(), name: z.string(), model: z.string(), status: z.string() });
const botAuthSchema = z.object({ message: z.string(), access_token: z.string(), bot: botSummarySchema });

/** A human's registration and login (the web reader's account forms are parsed with them too). */
export const registerBody = z.object({
  username: nameSchema(50),
  email: z.email().max(254),
  password: z.string().min(8).max(256),
  user_type: z.literal("human"),
});
export const loginBody = z.object({ email: z.string().min(1).max(254), password: z.string().min(1).max(256) });

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
  middleware: [registrationLimit] as const,
  request: {
    body: jsonBody(
      z.object({
        name: nameSchema(50),
        model: z.string().trim().min(1).max(100),
        webhook_url: z.string().max(2048).nullish(),
        language: languageSchema.optional(),
        role: roleSchema.optional(),
      }),
    ),
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
          created_at: z.string(),
        }),
      ),
      "Registered",
    ),
    ...errorResponses("CONFLICT", "RATE_LIMIT_EXCEEDED"),
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
        userSchema.extend({ created_at: z.string() }),
        botSummarySchema.extend({
          role: roleSchema.nullable(),
          language: z.string(),
          user_type: z.literal("bot"),
          created_at: z.string(),
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

const userView = (u: { id: string; username: string; email: string; userType: "human" | "admin" }) => ({
  id: u.id,
  username: u.username,
  email: u.email,
  user_type: u.userType,
});
const botView = (b: BotRow) => ({ id: b.id, name: b.name, model: b.model, status: b.status });

async function loginBot(c: Context<AppEnv>, { api_key }: { api_key: string }) {
  const bot = await authDomain.findBotByApiKey(c.get("db"), api_key);
  if (!bot) throw new ApiError("UNAUTHORIZED", "API key is not valid");
  const access_token = await issueAccessToken(c.get("config"), { id: bot.id, type: "bot", name: bot.name });
  return c.json({ message: "Login successful", access_token, bot: botView(bot) }, 200);
}

async function loginBotByName(c: Context<AppEnv>, { bot_name, master_key }: { bot_name: string; master_key: string }) {
  const masterKey = c.get("config").masterKey;
  if (!masterKey) throw new ApiError("FORBIDDEN", "Recovery login is disabled on this server");
  if (!(await timingSafeEqualStrings(master_key, masterKey))) {
    throw new ApiError("UNAUTHORIZED", "Master key is not valid");
  }
  const bot = await authDomain.findBotByName(c.get("db"), bot_name);
  if (!bot) throw new ApiError("NOT_FOUND", "Bot not found");
  const access_token = await issueAccessToken(c.get("config"), { id: bot.id, type: "bot", name: bot.name });
  return c.json({ message: "Login successful", access_token, bot: botView(bot) }, 200);
}

export const authRoutes = createRouter()
  .openapi(registerRoute, async (c) => {
    const body = c.req.valid("json");
    const user = await authDomain.registerUser(c.get("db"), body);
    const access_token = await issueAccessToken(c.get("config"), { id: user.id, type: "human", name: user.username });
    return c.json({ message: "Registration successful", user: userView(user), access_token }, 201);
  })
  .openapi(loginRoute, async (c) => {
    const { email, password } = c.req.valid("json");
    const user = await authDomain.loginUser(c.get("db"), email, password);
    const access_token = await issueAccessToken(c.get("config"), { id: user.id, type: user.userType, name: user.username });
    return c.json({ message: "Login successful", user: userView(user), access_token }, 200);
  })
  .openapi(botRegisterRoute, async (c) => {
    const body = c.req.valid("json");
    const webhookUrl = body.webhook_url ? checkWebhookUrl(body.webhook_url, { allowPrivate: c.get("config").allowPrivateWebhooks }) : null;
    const { bot, apiKey } = await authDomain.registerBot(c.get("db"), { ...body, webhookUrl });
    const data = {
      bot_id: bot.id,
      api_key: apiKey,
      name: bot.name,
      model: bot.model,
      role: bot.role,
      language: bot.language,
      webhook_url: bot.webhookUrl,
      webhook_secret: bot.webhookSecret,
      created_at: bot.createdAt,
    };
    return c.json({ status: "success" as const, data }, 201);
  })
  .openapi(botLoginRoute, (c) => loginBot(c, c.req.valid("json")))
  .openapi(botLoginAliasRoute, (c) => loginBot(c, c.req.valid("json")))
  .openapi(botLoginByNameRoute, (c) => loginBotByName(c, c.req.valid("json")))
  .openapi(botLoginByNameAliasRoute, (c) => loginBotByName(c, c.req.valid("json")))
  .openapi(meRoute, async (c) => {
    const actor = actorOf(c);
    const db = c.get("db");
    if (actor.type === "bot") {
      const bot = await authDomain.getBot(db, actor.id);
      if (!bot) throw new ApiError("UNAUTHORIZED", "Account no longer exists");
      const { role, language, createdAt } = bot;
      return c.json({ ...botView(bot), role, language, user_type: "bot" as const, created_at: createdAt }, 200);
    }
    const user = await authDomain.getUser(db, actor.id);
    if (!user) throw new ApiError("UNAUTHORIZED", "Account no longer exists");
    return c.json({ ...userView(user), created_at: user.createdAt }, 200);
  })
  .openapi(apiTokenRoute, async (c) => {
    const { token, expiresAt, remainingDays } = await authDomain.generateApiToken(c.get("db"), actorOf(c).id);
    return c.json(
      {
        message: "API token generated; it replaces any earlier token",
        token,
        token_info: { expires_at: expiresAt, remaining_days: remainingDays },
      },
      200,
    );
  });
