import { eq, sql } from "drizzle-orm";
import { type Db, getDb, nowIso } from "../db/client";
import { webhookAttempts, webhookDeliveries } from "../db/schema";
import { configOf } from "../config";
import { buildDeliveryBody, deliveryTarget, outboxProgress } from "../domain/bots/webhook-delivery";
import type { WebhookMessage } from "../domain/events/webhook-events";
import { BranchRooms, unlessRefused } from "../durable/branch-client";
import type { Env } from "../env";
import { hmacSha256Hex } from "../lib/crypto";
import { checkWebhookUrl } from "../lib/webhook-url";

export const WEBHOOK_DLQ = "webhooks-dlq";

/** Seconds before retry N+1 after N failed attempts: 10, 20, 40, 80, 160 … capped at 10 minutes. */
export const backoffSeconds = (attempts: number) => Math.min(600, 10 * 2 ** Math.max(0, attempts - 1));

/** `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`, keyed with the UTF-8 bytes of the bot's webhook secret. */
export async function signature(secret: string, timestamp: number, body: string) {
  return `sha256=${await hmacSha256Hex(secret, `${timestamp}.${body}`)}`;
}

interface AttemptResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  durationMs: number;
}

async function post(timeoutMs: number, url: string, secret: string, m: WebhookMessage, body: string): Promise<AttemptResult> {
  const timestamp = Math.floor(Date.now() / 1000);
  const started = Date.now();
  try {
    const res = await fetch(url, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        "content-type": "application/json",
        "user-agent": "Storyloom-Webhooks/1.0",
        "X-Service-Event": m.event,
        "X-Service-Delivery": m.deliveryId,
        "X-Service-Timestamp": String(timestamp),
        "X-Service-Signature": await signature(secret, timestamp, body),
      },
      body,
    });
    await res.body?.cancel();
    const ok = res.status >= 200 && res.status < 300;
    return { ok, status: res.status, error: ok ? null : `receiver answered ${res.status}`, durationMs: Date.now() - started };
  } catch (err) {
    const e = err as Error;
    const error = e.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : `${e.name}: ${e.message}`;
    return { ok: false, status: null, error, durationMs: Date.now() - started };
  }
}

type Progress = Parameters<typeof outboxProgress>[2];

/** Stores an attempt and the delivery's state, and moves its outbox row on, in one round trip. */
async function record(db: Db, m: WebhookMessage, attempt: number, r: AttemptResult, progress: Progress) {
  const now = nowIso();
  await db.batch([
    db.insert(webhookAttempts).values({
      id: crypto.randomUUID(),
      deliveryId: m.deliveryId,
      attempt,
      statusCode: r.status,
      error: r.error,
      durationMs: r.durationMs,
      createdAt: now,
    }),
    db
      .update(webhookDeliveries)
      .set({
        attempts: sql`max(${webhookDeliveries.attempts}, ${attempt})`,
        status: r.ok ? "delivered" : "settled" in progress ? "failed" : "retrying",
        lastStatusCode: r.status,
        lastError: r.error,
        deliveredAt: r.ok ? now : null,
        updatedAt: now,
      })
      .where(eq(webhookDeliveries.id, m.deliveryId)),
    outboxProgress(db, m.deliveryId, progress),
  ]);
}

async function expelFrom(env: Env, branchId: string, botId: string) {
  const expelled = await unlessRefused(new BranchRooms(env.BRANCH_ROOM).expel(branchId, botId));
  if (!expelled) console.error(JSON.stringify({ at: nowIso(), event: "expel failed", branch_id: branchId, bot_id: botId }));
}

/** One attempt at one delivery. Only a 2xx acknowledges it; anything else retries this message alone. */
async function deliver(env: Env, message: Message<WebhookMessage>) {
  const db = getDb(env.DB);
  const m = message.body;
  const settle = async () => {
    await outboxProgress(db, m.deliveryId, { settled: true });
    message.ack();
  };
  const { bot, storedBody, finished, suspended, hidden } = await deliveryTarget(db, m);
  // A turn begun for a suspended bot: the request that suspended it died before it told this room (a warm room
  // still counted the bot). Every turn a room begins for a suspended bot comes through here (`handOverQuery`), so
  // the room hears of it now, not at the sweeper's next run: it expels the bot and the turn passes on.
  if (suspended && m.event === "your_turn") await expelFrom(env, m.branchId, m.botId);
  // No receiver (any more), a suspended bot, a branch or story hidden since the event (no webhook names hidden
  // content, whatever the event carries), or a second hand-over (the sweeper's) of a delivery that already ended.
  if (!bot?.url || finished || suspended || hidden) return settle();
  const body = storedBody ?? (await buildDeliveryBody(db, m));
  if (body === null) return settle(); // the branch is gone
  const config = configOf(env);
  let url: string;
  try {
    url = checkWebhookUrl(bot.url, { allowPrivate: config.allowPrivateWebhooks });
  } catch {
    await record(db, m, message.attempts, { ok: false, status: null, error: "webhook_url is not allowed", durationMs: 0 }, { settled: true });
    return message.ack();
  }
  const result = await post(config.webhookTimeoutMs, url, bot.secret, m, body);
  const delay = backoffSeconds(message.attempts);
  await record(db, m, message.attempts, result, result.ok ? { settled: true } : { dueInSeconds: delay });
  if (result.ok) message.ack();
  else message.retry({ delaySeconds: delay });
}

/** Dead letters: the delivery ran out of attempts. */
async function markFailed(env: Env, message: Message<WebhookMessage>) {
  const db = getDb(env.DB);
  const now = nowIso();
  await db.batch([
    db.update(webhookDeliveries).set({ status: "failed", updatedAt: now }).where(eq(webhookDeliveries.id, message.body.deliveryId)),
    outboxProgress(db, message.body.deliveryId, { settled: true }),
  ]);
  message.ack();
}

export async function handleQueue(batch: MessageBatch<WebhookMessage>, env: Env): Promise<void> {
  const handle = batch.queue === WEBHOOK_DLQ ? markFailed : deliver;
  const results = await Promise.allSettled(batch.messages.map((message) => handle(env, message)));
  results.forEach((r, i) => {
    if (r.status === "rejected") {
      console.error(`webhook message ${batch.messages[i].id} failed in the consumer`, r.reason);
      batch.messages[i].retry({ delaySeconds: backoffSeconds(batch.messages[i].attempts) });
    }
  });
}
