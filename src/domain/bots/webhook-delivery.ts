import { eq, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll } from "../../db/client";
import { bots, outbox, webhookDeliveries } from "../../db/schema";
import { branchShown } from "../shared/visibility";
import { botInGoodStandingSql } from "../standing/rule";
import { turnContext } from "./turn-context";
import type { WebhookMessage } from "../events/webhook-events";

/**
 * The outbox row's part of a delivery's progress: settled when the delivery ended (nothing more will happen), or
 * due again when the consumer next expects to act (now, or after a retry's delay). The sweeper hands over again
 * only rows that are overdue: a message the queue lost.
 */
export const outboxProgress = (db: Db, deliveryId: string, progress: { settled: true } | { dueInSeconds: number }) =>
  db
    .update(outbox)
    .set("settled" in progress ? { settledAt: nowIso() } : { dueAt: new Date(Date.now() + progress.dueInSeconds * 1000).toISOString() })
    .where(eq(outbox.id, deliveryId));

/** Consuming webhook events: the receiver, and the body a delivery sends (built once and stored; again only to mask text hidden since). */

/**
 * SQL: the delivery's stored body shows a segment of its reading path (`your_turn`'s `previous_segments`) that a
 * moderator has hidden since, or whose branch they have: the body must be built again.
 */
const staleQuery = (db: Db, deliveryId: string) =>
  rawAll<{ stale: number }>(
    db,
    sql`SELECT 1 AS stale FROM webhook_deliveries d, json_each(d.body, '$.context.previous_segments') p
      JOIN segments s ON s.id = json_extract(p.value, '$.id') JOIN branches b ON b.id = s.branch_id
      WHERE d.id = ${deliveryId} AND NOT json_extract(p.value, '$.hidden') AND (s.hidden_at IS NOT NULL OR b.hidden_at IS NOT NULL) LIMIT 1`,
  );

/**
 * The bot's receiver, on a retry the body already stored for this delivery (null when none is, or when it shows text
 * hidden since: it is then built again), and whether the event's branch and story may still be named (`hidden`: a
 * moderator hid one since the event was written): one round trip.
 */
export async function deliveryTarget(db: Db, m: WebhookMessage) {
  const [[bot], [stored], shown, stale] = await db.batch([
    db
      .select({ url: bots.webhookUrl, secret: bots.webhookSecret, standing: sql<number>`${botInGoodStandingSql("bots", nowIso())}` })
      .from(bots)
      .where(eq(bots.id, m.botId))
      .limit(1),
    db
      .select({ body: webhookDeliveries.body, status: webhookDeliveries.status })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, m.deliveryId))
      .limit(1),
    rawAll<{ shown: number }>(db, sql`SELECT 1 AS shown FROM branches b WHERE b.id = ${m.branchId} AND ${branchShown("b", null)}`),
    staleQuery(db, m.deliveryId),
  ]);
  const finished = stored?.status === "delivered" || stored?.status === "failed";
  // A suspended bot's webhooks stop, and a bot's whose owner is suspended: its events are settled undelivered.
  const suspended = !!bot && !bot.standing;
  return { bot, storedBody: stale.length ? null : (stored?.body ?? null), finished, suspended, hidden: !shown.length };
}

/**
 * A delivery's body: built now (on its first attempt, or again when the stored one shows text hidden since) and
 * stored, so every later retry sends the same bytes (the same delivery id and creation time).
 */
export async function buildDeliveryBody(db: Db, m: WebhookMessage): Promise<string | null> {
  const data = m.event === "your_turn" ? await turnContext(db, m.branchId) : m.data;
  if (!data) return null;
  const body = JSON.stringify({ event: m.event, delivery_id: m.deliveryId, created_at: m.createdAt, ...data });
  const now = nowIso();
  await db
    .insert(webhookDeliveries)
    .values({ id: m.deliveryId, botId: m.botId, event: m.event, body, status: "pending", attempts: 0, createdAt: m.createdAt, updatedAt: now })
    .onConflictDoUpdate({ target: webhookDeliveries.id, set: { body, updatedAt: now } });
  return body;
}
