import { count, desc, eq, getTableColumns, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { nowIso } from "../../db/client";
import { bots, webhookAttempts, webhookDeliveries, type DeliveryRow } from "../../db/schema";
import { randomSecret } from "../../lib/crypto";
import { ApiError, notFound } from "../../lib/errors";
import { pagination } from "../../lib/pagination";
import type { Actor } from "../shared/actor";
import { WEBHOOK_SECRET_PREFIX } from "../accounts/auth";

/** A bot's own webhook settings: its address and secret, and the deliveries made to it. */

/**
 * Only the bot itself manages its webhook; its owner reads its deliveries and status too (`owner`). An id
 * that names no bot is 404 whoever asks; for an existing bot another bot is 403 PERMISSION_DENIED, and so is a
 * person reading an owned bot they do not own; any other human (or admin) is 403 FORBIDDEN (the wrong kind).
 */
async function requireOwnBot(db: Db, actor: Actor, botId: string, { owner = false } = {}) {
  if (actor.type === "bot" && actor.id === botId) return;
  const [bot] = await db.select({ id: bots.id, ownerId: bots.ownerId }).from(bots).where(eq(bots.id, botId)).limit(1);
  if (!bot) throw notFound("Bot");
  if (owner && actor.type !== "bot" && bot.ownerId !== null) {
    if (bot.ownerId === actor.id) return;
    throw new ApiError("PERMISSION_DENIED", "Only the bot and its owner read its webhook");
  }
  if (actor.type !== "bot") throw new ApiError("FORBIDDEN", "This endpoint is for bot accounts");
  throw new ApiError("PERMISSION_DENIED", "A bot may manage only its own webhook");
}

export async function setWebhook(db: Db, actor: Actor, botId: string, url: string) {
  await requireOwnBot(db, actor, botId);
  const updatedAt = nowIso();
  const [row] = await db
    .update(bots)
    .set({ webhookUrl: url, webhookSecret: randomSecret(WEBHOOK_SECRET_PREFIX), updatedAt })
    .where(eq(bots.id, botId))
    .returning({ webhookUrl: bots.webhookUrl, webhookSecret: bots.webhookSecret });
  if (!row) throw notFound("Bot");
  return { bot_id: botId, webhook_url: row.webhookUrl, webhook_secret: row.webhookSecret, updated_at: updatedAt };
}

const deliveryView = (d: Omit<DeliveryRow, "body" | "botId">) => ({
  id: d.id,
  event: d.event,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  created_at: d.createdAt,
  updated_at: d.updatedAt,
  delivered_at: d.deliveredAt,
});

export async function listDeliveries(db: Db, actor: Actor, botId: string, limit: number, offset: number) {
  await requireOwnBot(db, actor, botId, { owner: true });
  const { body: _b, botId: _id, ...columns } = getTableColumns(webhookDeliveries);
  const [rows, [{ total }]] = await db.batch([
    db
      .select(columns)
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.botId, botId))
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(limit)
      .offset(offset),
    db.select({ total: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.botId, botId)),
  ]);
  return { deliveries: rows.map(deliveryView), pagination: pagination(limit, offset, total) };
}

const OUTCOMES = ["pending", "retrying", "delivered", "failed"] as const;

const lastAttempt = {
  deliveryId: webhookAttempts.deliveryId,
  event: webhookDeliveries.event,
  attempt: webhookAttempts.attempt,
  at: webhookAttempts.createdAt,
  statusCode: webhookAttempts.statusCode,
  error: webhookAttempts.error,
};

const attemptView = (a: { deliveryId: string; event: DeliveryRow["event"]; attempt: number; at: string; statusCode: number | null; error: string | null }) => ({
  delivery_id: a.deliveryId,
  event: a.event,
  attempt: a.attempt,
  at: a.at,
  status_code: a.statusCode,
  error: a.error,
  ok: a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300,
});

/**
 * The bot's webhook as configured (InkPath's `webhook_url` and `is_configured`), its deliveries kept (7 days)
 * counted by outcome, and its last attempt: when, which delivery, and how the receiver answered. One round trip.
 */
export async function webhookStatus(db: Db, actor: Actor, botId: string) {
  await requireOwnBot(db, actor, botId, { owner: true });
  const [[bot], outcomes, [last]] = await db.batch([
    db.select({ url: bots.webhookUrl }).from(bots).where(eq(bots.id, botId)).limit(1),
    db
      .select({ status: webhookDeliveries.status, n: count() })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.botId, botId))
      .groupBy(webhookDeliveries.status),
    db
      .select(lastAttempt)
      .from(webhookDeliveries)
      .innerJoin(webhookAttempts, eq(webhookAttempts.deliveryId, webhookDeliveries.id))
      .where(eq(webhookDeliveries.botId, botId))
      .orderBy(desc(webhookAttempts.createdAt), sql`${webhookAttempts}.rowid DESC`)
      .limit(1),
  ]);
  if (!bot) throw notFound("Bot");
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, outcomes.find((r) => r.status === o)?.n ?? 0])) as Record<(typeof OUTCOMES)[number], number>;
  return {
    bot_id: botId,
    webhook_url: bot.url,
    is_configured: !!bot.url,
    deliveries: { total: outcomes.reduce((sum, r) => sum + r.n, 0), ...counts },
    last_attempt: last ? attemptView(last) : null,
  };
}
