import { and, desc, eq, exists, ne, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll, uniqueViolation } from "../../db/client";
import { type BotRow, bots } from "../../db/schema";
import { randomSecret, sha256Hex } from "../../lib/crypto";
import { ApiError, notFound } from "../../lib/errors";
import { nameKey } from "../../lib/names";
import type { Actor } from "../shared/actor";
import { BOT_KEY_PREFIX, WEBHOOK_SECRET_PREFIX } from "../accounts/auth";
import { endGrantsOf } from "../accounts/oauth-grants";
import { suspendedNow } from "../standing/rule";

/**
 * Bots people own: a human who registers a bot with their credential owns it, and only they manage it
 * (an admin moderates bots, it does not run them). Each write is one statement conditioned on the ownership, so a
 * refused one changes nothing; only then is the bot read to say why (404, 403, 409).
 * Why, and what was weighed: docs/decisions.md, "Bots people own and OAuth on `/mcp`".
 */

export type BotView = ReturnType<typeof botView>;

/** A bot as its owner sees it (never its key or webhook secret: those are shown once, when made). */
export const botView = (b: BotRow, now = nowIso()) => ({
  id: b.id,
  name: b.name,
  model: b.model,
  role: b.role,
  language: b.language,
  status: b.status as "active" | "retired",
  webhook_url: b.webhookUrl,
  suspended: suspendedNow({ suspended_at: b.suspendedAt, suspended_until: b.suspendedUntil }, now),
  created_at: b.createdAt,
  updated_at: b.updatedAt,
});

/** The owner's bots, newest first (retired ones too: their segments stay theirs). */
export async function listOwnedBots(db: Db, ownerId: string) {
  const rows = await db.select().from(bots).where(eq(bots.ownerId, ownerId)).orderBy(desc(bots.createdAt), desc(bots.id));
  const now = nowIso();
  return rows.map((b) => botView(b, now));
}

/**
 * Why an owner's write to a bot changed nothing: no such bot (404), someone else's or nobody's (403
 * PERMISSION_DENIED: an owner may claim nothing they did not create), or retired (409).
 */
async function refusal(db: Db, owner: Pick<Actor, "id">, botId: string): Promise<ApiError> {
  const [bot] = await db.select({ ownerId: bots.ownerId, status: bots.status }).from(bots).where(eq(bots.id, botId)).limit(1);
  if (!bot) return notFound("Bot");
  if (bot.ownerId !== owner.id) return new ApiError("PERMISSION_DENIED", "Only the person who created this bot manages it");
  return new ApiError("CONFLICT", "This bot is retired", { status: "retired" });
}

const ownedLive = (owner: Pick<Actor, "id">, botId: string) => and(eq(bots.id, botId), eq(bots.ownerId, owner.id), ne(bots.status, "retired"));

/** Reads a live bot the caller owns, or refuses as `refusal` says. */
export async function ownedBot(db: Db, owner: Pick<Actor, "id">, botId: string): Promise<BotRow> {
  const [bot] = await db.select().from(bots).where(ownedLive(owner, botId)).limit(1);
  if (!bot) throw await refusal(db, owner, botId);
  return bot;
}

/**
 * A new API key for the bot: the old one stops at once (its hash is replaced in the same statement), and so do the
 * JWTs it logged in to (`key_rotated_at`: the standing statement refuses a bot JWT issued before it).
 */
export async function rotateBotKey(db: Db, owner: Pick<Actor, "id">, botId: string) {
  const apiKey = randomSecret(BOT_KEY_PREFIX);
  const updatedAt = nowIso();
  const [row] = await db
    .update(bots)
    .set({ apiKeyHash: await sha256Hex(apiKey), keyRotatedAt: updatedAt, updatedAt })
    .where(ownedLive(owner, botId))
    .returning({ id: bots.id });
  if (!row) throw await refusal(db, owner, botId);
  return { bot_id: botId, api_key: apiKey, updated_at: updatedAt };
}

export interface BotEdit {
  name?: string;
  model?: string;
  role?: BotRow["role"];
  /** null clears it; a changed address gets a new signing secret (as `PUT /bots/{id}/webhook`). */
  webhookUrl?: string | null;
}

/** Edits what the owner may change; a changed webhook address answers its new signing secret, once. */
export async function editBot(db: Db, owner: Pick<Actor, "id">, botId: string, edit: BotEdit) {
  const changes: Partial<BotRow> = { updatedAt: nowIso() };
  if (edit.name !== undefined) Object.assign(changes, { name: edit.name, nameKey: nameKey(edit.name) });
  if (edit.model !== undefined) changes.model = edit.model;
  if (edit.role !== undefined) changes.role = edit.role;
  const secret = randomSecret(WEBHOOK_SECRET_PREFIX);
  if (edit.webhookUrl !== undefined) {
    changes.webhookUrl = edit.webhookUrl;
    // A new secret only when the address changes (the same address sent again keeps its receiver's secret valid).
    Object.assign(changes, { webhookSecret: sql`CASE WHEN ${bots.webhookUrl} IS ${edit.webhookUrl} THEN ${bots.webhookSecret} ELSE ${secret} END` });
  }
  const [row] = await db
    .update(bots)
    .set(changes)
    .where(ownedLive(owner, botId))
    .returning()
    .catch((err) => {
      if (uniqueViolation(err)) throw new ApiError("CONFLICT", "name is already taken", { field: "name" });
      throw err;
    });
  if (!row) throw await refusal(db, owner, botId);
  return { ...botView(row), ...(row.webhookUrl && row.webhookSecret === secret ? { webhook_secret: secret } : {}) };
}

/**
 * Retires the bot: it is `retired`, its key replaced by one nobody holds, its webhook cleared, in one batch that
 * answers the queues it is in (the rooms are told next, by the use case). From the next request on, its key,
 * its JWTs and its grants are refused (the standing query finds no live bot), its grants ended; its segments stay.
 * Every statement of the batch carries the same condition (the caller owns the bot, and it is live), read before the
 * bot's own row changes, so a refused retire changes nothing at all.
 */
export async function retireBot(db: Db, owner: Pick<Actor, "id">, botId: string) {
  const updatedAt = nowIso();
  const owned = ownedLive(owner, botId);
  const retiring = exists(db.select({ one: sql`1` }).from(bots).where(owned));
  const [grants, memberships, [row]] = await db.batch([
    // Its grants end with it: "Connected apps" no longer lists them (its standing already refuses them).
    endGrantsOf(db, botId, updatedAt, retiring),
    rawAll<{ branch_id: string; bot_id: string }>(db, sql`SELECT m.branch_id, m.bot_id FROM branch_members m WHERE m.bot_id = ${botId} AND ${retiring}`),
    db
      .update(bots)
      .set({ status: "retired", apiKeyHash: await sha256Hex(randomSecret(BOT_KEY_PREFIX)), webhookUrl: null, keyRotatedAt: updatedAt, updatedAt })
      .where(owned)
      .returning(),
  ]);
  if (!row) throw await refusal(db, owner, botId);
  return { bot: botView(row), memberships, grants };
}
