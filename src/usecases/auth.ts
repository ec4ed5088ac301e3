import type { Config } from "../config";
import type { BotRow, UserRow } from "../db/schema";
import type { Actor, ActorType } from "../domain/shared/actor";
import * as domain from "../domain/accounts/auth";
import { refuseIfSuspended } from "../domain/standing/rule";
import { timingSafeEqualStrings } from "../lib/crypto";
import { ApiError } from "../lib/errors";
import { signJwt } from "../lib/jwt";
import { checkWebhookUrl } from "../lib/webhook-url";
import type { BotRegisterBody, LoginBody, RegisterBody } from "../schemas/auth";
import type { Caller, Guest } from "./caller";

/** Signs the access token (HS256 JWT) every login and registration answers with. */
const accessToken = (config: Config, subject: { id: string; type: ActorType; name: string }) => signJwt(subject, config.jwt.secret, config.jwt.ttlSeconds);

const userView = (u: Pick<UserRow, "id" | "username" | "email" | "userType">) => ({ id: u.id, username: u.username, email: u.email, user_type: u.userType });
const botView = (b: BotRow) => ({ id: b.id, name: b.name, model: b.model, status: b.status });

/** A human signed in: the account and its access token. */
const signedIn = async (config: Config, user: UserRow) => ({
  user: userView(user),
  access_token: await accessToken(config, { id: user.id, type: user.userType, name: user.username }),
});

/** A bot signed in: its access token and the bot. */
/** A suspended bot gets no new token (403 ACCOUNT_SUSPENDED); restored, it logs in again. */
async function botSignedIn(config: Config, bot: BotRow) {
  refuseIfSuspended(bot);
  return { access_token: await accessToken(config, { id: bot.id, type: "bot", name: bot.name }), bot: botView(bot) };
}

/** Registers a human and signs them in. */
export const registerHuman = async ({ db, config }: Guest, body: RegisterBody) => signedIn(config, await domain.registerUser(db, body));

/** Logs a human in by email and password. */
export async function logIn({ db, config }: Guest, body: LoginBody) {
  const user = await domain.loginUser(db, body.email, body.password);
  refuseIfSuspended(user); // after the password: a suspension is told only to whoever knows it
  return signedIn(config, user);
}

/**
 * Registers a bot; its api_key and webhook_secret are shown only in this answer. With a human's credential
 * (`owner`), that human owns it; without one it is nobody's, as the spec has it.
 */
export async function registerBot({ db, config }: Guest, body: BotRegisterBody, owner?: Pick<Actor, "id">) {
  const webhookUrl = body.webhook_url ? checkWebhookUrl(body.webhook_url, { allowPrivate: config.allowPrivateWebhooks }) : null;
  const { bot, apiKey } = await domain.registerBot(db, { ...body, webhookUrl, ownerId: owner?.id ?? null }, config.limits.botsPerOwner);
  return {
    bot_id: bot.id,
    api_key: apiKey,
    name: bot.name,
    model: bot.model,
    role: bot.role,
    language: bot.language,
    webhook_url: bot.webhookUrl,
    webhook_secret: bot.webhookSecret,
    owner_id: bot.ownerId,
    created_at: bot.createdAt,
  };
}

/** Exchanges a bot's API key for an access token. */
export async function logInBot({ db, config }: Guest, apiKey: string) {
  const bot = await domain.findBotByApiKey(db, apiKey);
  if (!bot) throw new ApiError("UNAUTHORIZED", "API key is not valid");
  return botSignedIn(config, bot);
}

/** The operator's recovery login for a bot, by its name and the master key (403 when no master key is set). */
export async function logInBotByName({ db, config }: Guest, botName: string, masterKey: string) {
  if (!config.masterKey) throw new ApiError("FORBIDDEN", "Recovery login is disabled on this server");
  if (!(await timingSafeEqualStrings(masterKey, config.masterKey))) throw new ApiError("UNAUTHORIZED", "Master key is not valid");
  const bot = await domain.findBotByName(db, botName);
  if (!bot) throw new ApiError("NOT_FOUND", "Bot not found");
  return botSignedIn(config, bot);
}

/** The calling account, a bot's or a human's, with its unread inbox count. */
export async function account({ db, actor }: Caller) {
  if (actor.type === "bot") {
    const found = await domain.botWithUnread(db, actor.id);
    if (!found) throw new ApiError("UNAUTHORIZED", "Account no longer exists");
    const { role, language, createdAt } = found.bot;
    return { ...botView(found.bot), role, language, user_type: "bot" as const, created_at: createdAt, unread_count: found.unread };
  }
  const found = await domain.userWithUnread(db, actor.id);
  if (!found) throw new ApiError("UNAUTHORIZED", "Account no longer exists");
  return { ...userView(found.user), created_at: found.user.createdAt, unread_count: found.unread };
}

/** Logs the caller's credential out (a JWT revoked, an API token deleted): refused from the next request on. */
export const logOut = ({ db, actor }: Caller, credential: string) => domain.logOut(db, actor, credential);

/** A new 30-day API token for the calling human (or admin); any earlier one is revoked in the same batch. */
export const generateApiToken = ({ db, actor }: Caller) => domain.generateApiToken(db, actor.id);
