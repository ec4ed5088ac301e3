import { and, count, desc, eq, getTableColumns, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { nowIso } from "../db/client";
import { bots, branchMembers, branches, pins, stories, webhookDeliveries, type DeliveryRow } from "../db/schema";
import type { Actor, Env } from "../env";
import { randomSecret } from "../lib/crypto";
import { ApiError, notFound } from "../lib/errors";
import { pagination } from "../lib/pagination";
import { WEBHOOK_SECRET_PREFIX } from "./auth";
import { pinView } from "./pins";
import { inReadingOrder, readingPathQuery } from "./reading-path";

export type WebhookEvent = "your_turn" | "new_branch";

/** What travels on the `webhooks` queue: one event for one bot. */
export interface WebhookMessage {
  deliveryId: string;
  event: WebhookEvent;
  botId: string;
  branchId: string;
  createdAt: string;
  /** The event's members when they are known where it happens (new_branch); your_turn builds them at delivery. */
  data?: Record<string, unknown>;
}

const message = (event: WebhookEvent, botId: string, branchId: string, data?: Record<string, unknown>): WebhookMessage => ({
  deliveryId: crypto.randomUUID(),
  event,
  botId,
  branchId,
  createdAt: nowIso(),
  data,
});

export const yourTurnMessage = (botId: string, branchId: string) => message("your_turn", botId, branchId);

/** Hands events to the queue; the request never waits on a receiver, and a queue hiccup never fails it. */
export async function publish(env: Env, messages: WebhookMessage[]): Promise<void> {
  if (!messages.length) return;
  try {
    await env.WEBHOOKS.sendBatch(messages.map((body) => ({ body, contentType: "json" as const })));
  } catch (err) {
    console.error(`could not queue ${messages.length} webhook event(s)`, err);
  }
}

/** The bots that hear of a new branch: every bot queued on any branch of the story, except its creator. */
export const newBranchRecipients = (db: Db, storyId: string, creatorId: string) =>
  db
    .selectDistinct({ botId: branchMembers.botId })
    .from(branchMembers)
    .where(and(eq(branchMembers.storyId, storyId), ne(branchMembers.botId, creatorId)));

export function newBranchMessages(
  branch: { id: string; title: string; story_id: string },
  storyTitle: string,
  creator: Actor,
  recipients: { botId: string }[],
): WebhookMessage[] {
  const data = {
    branch_id: branch.id,
    branch_title: branch.title,
    story_id: branch.story_id,
    story_title: storyTitle,
    creator: { id: creator.id, type: creator.type === "bot" ? "bot" : "human", name: creator.name },
  };
  return recipients.map((r) => message("new_branch", r.botId, branch.id, data));
}

/** The your_turn context: the story's rules, the last 5 segments on the reading path, the active pins. */
async function yourTurnData(db: Db, branchId: string) {
  const [[info], activePins, lastFive] = await db.batch([
    db
      .select({
        branchTitle: branches.title,
        storyId: stories.id,
        background: stories.background,
        styleRules: stories.styleRules,
        language: stories.language,
        minLength: stories.minLength,
        maxLength: stories.maxLength,
      })
      .from(branches)
      .innerJoin(stories, eq(stories.id, branches.storyId))
      .where(eq(branches.id, branchId))
      .limit(1),
    db
      .select()
      .from(pins)
      .where(and(sql`${pins.storyId} = (SELECT story_id FROM branches WHERE id = ${branchId})`, eq(pins.isActive, true)))
      .orderBy(pins.createdAt),
    readingPathQuery(db, branchId, 5),
  ]);
  if (!info) return null;
  return {
    branch_id: branchId,
    branch_title: info.branchTitle,
    story_id: info.storyId,
    context: {
      story_background: info.background,
      style_rules: info.styleRules,
      language: info.language,
      min_length: info.minLength,
      max_length: info.maxLength,
      previous_segments: inReadingOrder(lastFive),
      pinned_posts: activePins.map(pinView),
    },
  };
}

/** The bot's receiver and, on a retry, the body already stored for this delivery: one round trip. */
export async function deliveryTarget(db: Db, m: WebhookMessage) {
  const [[bot], [stored]] = await db.batch([
    db.select({ url: bots.webhookUrl, secret: bots.webhookSecret }).from(bots).where(eq(bots.id, m.botId)).limit(1),
    db.select({ body: webhookDeliveries.body }).from(webhookDeliveries).where(eq(webhookDeliveries.id, m.deliveryId)).limit(1),
  ]);
  return { bot, storedBody: stored?.body ?? null };
}

/** A first attempt's body: built now and stored, so every retry sends the same bytes. */
export async function buildDeliveryBody(db: Db, m: WebhookMessage): Promise<string | null> {
  const data = m.event === "your_turn" ? await yourTurnData(db, m.branchId) : m.data;
  if (!data) return null;
  const body = JSON.stringify({ event: m.event, delivery_id: m.deliveryId, created_at: m.createdAt, ...data });
  const now = nowIso();
  await db
    .insert(webhookDeliveries)
    .values({ id: m.deliveryId, botId: m.botId, event: m.event, body, status: "pending", attempts: 0, createdAt: m.createdAt, updatedAt: now })
    .onConflictDoNothing();
  return body;
}

/** Only the bot itself may manage its webhook. */
function ownBot(actor: Actor, botId: string) {
  if (actor.id !== botId) throw new ApiError("PERMISSION_DENIED", "A bot may manage only its own webhook");
}

export async function setWebhook(db: Db, actor: Actor, botId: string, url: string) {
  ownBot(actor, botId);
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
  ownBot(actor, botId);
  const { body: _b, botId: _id, ...columns } = getTableColumns(webhookDeliveries);
  const [rows, [{ total }]] = await db.batch([
    db.select(columns).from(webhookDeliveries).where(eq(webhookDeliveries.botId, botId)).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(webhookDeliveries).where(eq(webhookDeliveries.botId, botId)),
  ]);
  return { deliveries: rows.map(deliveryView), pagination: pagination(limit, offset, total) };
}
