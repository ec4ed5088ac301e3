import { type SQL, and, eq, ne, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Db } from "../../db/client";
import { nowIso, uniqueViolation } from "../../db/client";
import { checkBotCap, underBotCap } from "./bot-cap";
import { apiTokens, bots, revokedSessions, users, type BotRow, type UserRow, inGoodStanding } from "../../db/schema";
import type { Actor } from "../shared/actor";
import { unreadCountQuery } from "../following/inbox";
import { type KeyStanding, refuseIfSuspended } from "../standing/rule";
import { ApiError } from "../../lib/errors";
import { randomSecret, sha256Hex } from "../../lib/crypto";
import { nameKey } from "../../lib/names";
import { DUMMY_PASSWORD_HASH, hashPassword, verifyPassword } from "../../lib/password";

export const BOT_KEY_PREFIX = "slk_";
export const API_TOKEN_PREFIX = "slt_";
export const WEBHOOK_SECRET_PREFIX = "whsec_";
export const API_TOKEN_DAYS = 30;
const DAY_MS = 86_400_000;

function conflict(err: unknown, fields: string[]): never {
  const message = uniqueViolation(err);
  if (!message) throw err;
  const field = fields.find((f) => message.includes(f)) ?? fields[0];
  throw new ApiError("CONFLICT", `${field} is already taken`, { field });
}

export async function registerUser(db: Db, input: { username: string; email: string; password: string }) {
  const row: UserRow = {
    ...inGoodStanding,
    role: "user",
    id: crypto.randomUUID(),
    username: input.username,
    usernameKey: nameKey(input.username),
    email: input.email,
    passwordHash: await hashPassword(input.password),
    userType: "human",
    createdAt: nowIso(),
  };
  await db
    .insert(users)
    .values(row)
    .catch((err) => conflict(err, ["email", "username"]));
  return row;
}

export async function loginUser(db: Db, email: string, password: string): Promise<UserRow> {
  const [user] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1);
  // Verify against a dummy hash when the user is unknown so timing does not reveal which emails exist.
  const valid = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
  if (!user || !valid) throw new ApiError("UNAUTHORIZED", "Email or password is incorrect");
  return user;
}

export interface NewBot {
  name: string;
  model: string;
  role?: BotRow["role"];
  language?: string;
  webhookUrl?: string | null;
  /** The human registering it with their credential; none: an unowned bot. */
  ownerId?: string | null;
}

/**
 * Registers a bot; one with an owner only while the owner has fewer than `botCap` live bots (the insert's batch
 * aborts otherwise, so two at once cannot pass the cap together).
 */
export async function registerBot(db: Db, input: NewBot, botCap: number) {
  const made = await newBot(input);
  const owner = made.bot.ownerId;
  const insert = db.insert(bots).values(made.bot);
  await (owner ? db.batch([underBotCap(db, owner, botCap), insert]) : insert).catch(botRefused(db, owner, botCap));
  return made;
}

/** A bot's name already taken (its unique key): 409 naming the field, as registration answers; any other error as it is. */
export const botNameTaken = (err: unknown): never => conflict(err, ["name"]);

/** Why a new bot's batch failed: the owner at the cap (read again), else its name taken, else the error as it is. */
export const botRefused = (db: Db, ownerId: string | null, cap: number) => async (err: unknown) => {
  if (ownerId) await checkBotCap(db, ownerId, cap);
  return botNameTaken(err);
};

/** A new bot's row, not yet written, and its API key (stored only as its hash). */
export async function newBot(input: NewBot): Promise<{ bot: BotRow; apiKey: string }> {
  const apiKey = randomSecret(BOT_KEY_PREFIX);
  const now = nowIso();
  const row: BotRow = {
    ...inGoodStanding,
    id: crypto.randomUUID(),
    name: input.name,
    nameKey: nameKey(input.name),
    model: input.model,
    status: "active",
    ownerId: input.ownerId ?? null,
    role: input.role ?? null,
    language: input.language ?? "zh",
    webhookUrl: input.webhookUrl ?? null,
    webhookSecret: randomSecret(WEBHOOK_SECRET_PREFIX),
    apiKeyHash: await sha256Hex(apiKey),
    keyRotatedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  return { bot: row, apiKey };
}

/** A bot with its owner's suspension, read in the same statement; a retired bot is not found. */
export type OwnedBotRow = BotRow & { ownerSuspendedAt: string | null; ownerSuspendedUntil: string | null };

const owner = alias(users, "owner");

async function findLiveBot(db: Db, where: SQL): Promise<OwnedBotRow | undefined> {
  const [row] = await db
    .select({ bot: bots, ownerSuspendedAt: owner.suspendedAt, ownerSuspendedUntil: owner.suspendedUntil })
    .from(bots)
    .leftJoin(owner, eq(owner.id, bots.ownerId))
    .where(and(where, ne(bots.status, "retired")))
    .limit(1);
  return row && { ...row.bot, ownerSuspendedAt: row.ownerSuspendedAt, ownerSuspendedUntil: row.ownerSuspendedUntil };
}

export const findBotByApiKey = async (db: Db, apiKey: string) => findLiveBot(db, eq(bots.apiKeyHash, await sha256Hex(apiKey)));

export const findBotByName = (db: Db, name: string) => findLiveBot(db, eq(bots.nameKey, nameKey(name)));

/** What the route asks of a key's or token's standing, beyond the rule (a logout serves a suspended account too). */
/** Resolves a human API token to its owner; one indexed lookup by the token's hash. */
export async function actorForApiToken(db: Db, token: string, expect: KeyStanding = {}): Promise<Actor> {
  const [row] = await db
    .select({ id: users.id, type: users.userType, name: users.username, expiresAt: apiTokens.expiresAt, ...standingOf(users) })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.tokenHash, await sha256Hex(token)))
    .limit(1);
  if (!row) throw new ApiError("UNAUTHORIZED", "API token is not valid");
  if (row.expiresAt <= nowIso()) throw new ApiError("AUTH_EXPIRED_TOKEN", "API token has expired; generate a new one");
  refuseIfSuspended(row, expect);
  return { id: row.id, type: row.type, name: row.name, credential: "api_token", role: row.role };
}

export async function actorForBotKey(db: Db, apiKey: string, expect: KeyStanding = {}): Promise<Actor> {
  const bot = await findBotByApiKey(db, apiKey);
  if (!bot) throw new ApiError("UNAUTHORIZED", "API key is not valid");
  refuseIfSuspended(bot, expect);
  return { id: bot.id, type: "bot", name: bot.name, credential: "api_key", role: "user" };
}

/** The standing columns, read with a key's or token's own look-up (no trip of their own). */
const standingOf = (t: typeof users) => ({ role: t.role, suspendedAt: t.suspendedAt, suspendedUntil: t.suspendedUntil, suspensionReason: t.suspensionReason });

/** Issues a new API token for a human, revoking any earlier one in the same atomic batch. */
export async function generateApiToken(db: Db, userId: string) {
  const token = randomSecret(API_TOKEN_PREFIX);
  const now = Date.now();
  const expiresAt = new Date(now + API_TOKEN_DAYS * DAY_MS).toISOString();
  await db.batch([
    db.delete(apiTokens).where(eq(apiTokens.userId, userId)),
    db.insert(apiTokens).values({
      id: crypto.randomUUID(),
      userId,
      tokenHash: await sha256Hex(token),
      expiresAt,
      createdAt: new Date(now).toISOString(),
    }),
  ]);
  return { token, expiresAt, remainingDays: Math.ceil((Date.parse(expiresAt) - now) / DAY_MS) };
}

/** A human's (or admin's) account with its unread inbox count: one round trip. */
export async function userWithUnread(db: Db, id: string) {
  const [[user], [{ unread }]] = await db.batch([db.select().from(users).where(eq(users.id, id)).limit(1), unreadCountQuery(db, id)]);
  return user && { user, unread };
}

/** A bot's account with its unread inbox count: one round trip. */
export async function botWithUnread(db: Db, id: string) {
  const [[bot], [{ unread }]] = await db.batch([db.select().from(bots).where(eq(bots.id, id)).limit(1), unreadCountQuery(db, id)]);
  return bot && { bot, unread };
}

/**
 * A logout: a JWT's jti joins the revoked sessions until the token would have expired anyway (the
 * sweeper then prunes it); a human's API token is deleted (it was the token's own row). An API key is a bot's
 * identity, not a session: `POST /auth/logout` refuses it (403).
 */
export async function logOut(db: Db, actor: Actor, credential: string) {
  if (actor.credential === "api_token") {
    await db.delete(apiTokens).where(eq(apiTokens.tokenHash, await sha256Hex(credential)));
    return;
  }
  if (!actor.session?.jti) throw new ApiError("VALIDATION_ERROR", "This token has no session id to revoke");
  await db
    .insert(revokedSessions)
    .values({ jti: actor.session.jti, accountId: actor.id, expiresAt: new Date(actor.session.exp * 1000).toISOString() })
    .onConflictDoNothing();
}
