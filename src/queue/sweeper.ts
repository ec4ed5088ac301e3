import { and, asc, inArray, isNotNull, isNull, lt, sql } from "drizzle-orm";
import { configOf } from "../config";
import { getDb, rawAll, rawRun } from "../db/client";
import { branches, idempotencyKeys, inboxEvents, outbox } from "../db/schema";
import { publishInboxEvents } from "../domain/events/inbox-events";
import { hiddenFrame } from "../domain/events/live-events";
import { messageOf } from "../domain/events/webhook-events";
import { BranchRooms, unlessRefused } from "../durable/branch-client";
import { overdueQuery } from "../domain/discovery/search-move";
import { searchShardsOf } from "../durable/search-shards";
import { continueMove } from "./search";
import type { Env } from "../env";

const SWEEP_LIMIT = 100;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Webhook deliveries and their attempts are kept this long (GET /bots/{id}/webhook/deliveries shows them). */
export const DELIVERY_RETENTION_DAYS = 7;
const PRUNE_LIMIT = 1000;

/**
 * The scheduled sweeper (a Cron Trigger, every minute), the safety net under crash-safe writes:
 * - hands over again the webhook events whose delivery has not settled and is overdue by
 *   OUTBOX_RESEND_AFTER_SECONDS (the send after the commit was lost in a crash or failed, or the queue lost the
 *   message: the consumer moves a row's due time on with every attempt, so a retry waiting out its delay is
 *   not overdue);
 * - wakes the rooms of branches whose turn deadline passed that long ago unnoticed (a crash came between
 *   D1's commit of a deadline and the room's alarm): a room that starts cold re-arms its alarm from D1;
 * - expels bots suspended in the last hour that are still queued somewhere (a suspension whose request died
 *   before telling every room: until then the bot's webhooks are settled undelivered and its credentials refused);
 * - tells again the rooms of branches and stories hidden in the last hour and still hidden (a hide whose request died
 *   before telling them: a warm room would answer its queue from memory; the writes themselves are refused in
 *   their batch meanwhile). Telling a room again changes nothing: it already refuses, and its stream is closed;
 * - hands over again the inbox events whose fan-out has not settled and made no step for as long (a
 *   hand-over lost after the commit, a step the queue gave up on: the event's cursor says where to go on from);
 * - hands over again the stories behind in their search shard for as long (a hand-over lost after the commit, a
 *   sync that failed), and the move's next step while a deployment's older stories remain in D1's index;
 * - prunes idempotency records older than a day, outbox rows and inbox events settled more than a day ago, inbox
 *   items whose last activity is older than INBOX_KEEP_DAYS, log entries older than LOGS_KEEP_DAYS (what is counted
 *   over all time has counters of its own), webhook
 *   deliveries with their attempts older than DELIVERY_RETENTION_DAYS, revoked sessions whose token has expired
 *   anyway, and OAuth's mirrored KV writes past their window
 *   (at most PRUNE_LIMIT a minute each; every one of these deletes walks an index).
 */
export async function sweep(env: Env, now = Date.now()) {
  const db = getDb(env.DB);
  const cutoff = new Date(now - configOf(env).outboxResendAfterMs).toISOString();
  const dayAgo = new Date(now - DAY_MS).toISOString();
  const inboxCutoff = new Date(now - configOf(env).inbox.keepMs).toISOString();
  const logsCutoff = new Date(now - configOf(env).logsKeepMs).toISOString();
  const expired = sql`SELECT id FROM webhook_deliveries WHERE created_at < ${new Date(now - DELIVERY_RETENTION_DAYS * DAY_MS).toISOString()} LIMIT ${PRUNE_LIMIT}`;
  const nowText = new Date(now).toISOString();
  const hourAgo = new Date(now - HOUR_MS).toISOString();
  const [unpicked, stalled, stuck, leftovers, hides, behind] = await db.batch([
    db
      .select()
      .from(outbox)
      .where(and(isNull(outbox.settledAt), lt(outbox.dueAt, cutoff)))
      .orderBy(asc(outbox.dueAt))
      .limit(SWEEP_LIMIT),
    db
      .select({ id: inboxEvents.id })
      .from(inboxEvents)
      .where(and(isNull(inboxEvents.settledAt), lt(inboxEvents.dueAt, cutoff)))
      .orderBy(asc(inboxEvents.dueAt))
      .limit(SWEEP_LIMIT),
    db.select({ id: branches.id }).from(branches).where(lt(branches.turnDeadline, cutoff)).limit(SWEEP_LIMIT),
    rawAll<{ branch_id: string; bot_id: string }>(
      db,
      // Suspensions of the last hour (the audit log's time index), not a scan of every bot.
      sql`SELECT DISTINCT m.branch_id, m.bot_id FROM audit_log a JOIN bots b ON b.id = a.target_id JOIN branch_members m ON m.bot_id = b.id
        WHERE a.created_at > ${hourAgo} AND a.action = 'suspend' AND a.target_type = 'account'
        AND b.suspended_at IS NOT NULL AND (b.suspended_until IS NULL OR b.suspended_until > ${nowText}) LIMIT ${SWEEP_LIMIT}`,
    ),
    rawAll<{ branch_id: string; target_type: "branch" | "story"; target_id: string; at: string }>(
      db,
      // Branch and story hides of the last hour (the audit log's index by action and time), still hidden.
      sql`SELECT b.id AS branch_id, a.target_type, a.target_id, a.created_at AS at FROM audit_log a JOIN branches b ON b.id = a.target_id
          WHERE a.action = 'hide' AND a.created_at > ${hourAgo} AND a.target_type = 'branch' AND b.hidden_at IS NOT NULL
        UNION ALL
        SELECT b.id, a.target_type, a.target_id, a.created_at FROM audit_log a JOIN stories s ON s.id = a.target_id JOIN branches b ON b.story_id = s.id
          WHERE a.action = 'hide' AND a.created_at > ${hourAgo} AND a.target_type = 'story' AND s.hidden_at IS NOT NULL
        LIMIT ${SWEEP_LIMIT}`,
    ),
    overdueQuery(db, cutoff, SWEEP_LIMIT),
    db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, dayAgo)),
    db.delete(outbox).where(and(isNotNull(outbox.settledAt), lt(outbox.settledAt, dayAgo))),
    rawRun(db, sql`DELETE FROM inbox_events WHERE id IN (SELECT id FROM inbox_events WHERE settled_at < ${dayAgo} LIMIT ${PRUNE_LIMIT})`),
    rawRun(db, sql`DELETE FROM inbox_items WHERE id IN (SELECT id FROM inbox_items WHERE updated_at < ${inboxCutoff} LIMIT ${PRUNE_LIMIT})`),
    // The oldest first, through the logs' index by time.
    rawRun(db, sql`DELETE FROM logs WHERE id IN (SELECT id FROM logs WHERE created_at < ${logsCutoff} ORDER BY created_at LIMIT ${PRUNE_LIMIT})`),
    rawRun(db, sql`DELETE FROM webhook_attempts WHERE delivery_id IN (${expired})`),
    rawRun(db, sql`DELETE FROM webhook_deliveries WHERE id IN (${expired})`),
    rawRun(db, sql`DELETE FROM revoked_sessions WHERE jti IN (SELECT jti FROM revoked_sessions WHERE expires_at < ${nowText} LIMIT ${PRUNE_LIMIT})`),
    // OAuth's KV writes, mirrored while KV may not show them everywhere (src/oauth/consistent-kv.ts).
    rawRun(db, sql`DELETE FROM oauth_kv WHERE key IN (SELECT key FROM oauth_kv WHERE expires_at < ${nowText} LIMIT ${PRUNE_LIMIT})`),
  ]);
  if (unpicked.length) {
    const ids = unpicked.map((r) => r.id);
    try {
      await env.WEBHOOKS.sendBatch(unpicked.map((row) => ({ body: messageOf(row), contentType: "json" as const })));
      await db
        .update(outbox)
        .set({ sends: sql`${outbox.sends} + 1`, lastError: null, dueAt: new Date(now).toISOString() })
        .where(inArray(outbox.id, ids));
    } catch (err) {
      console.error(`sweeper could not queue ${ids.length} webhook event(s)`, err);
      await db
        .update(outbox)
        .set({ lastError: `queue send failed: ${(err as Error).message}`.slice(0, 500) })
        .where(inArray(outbox.id, ids));
    }
  }
  if (stalled.length) {
    const ids = stalled.map((e) => e.id);
    await publishInboxEvents(env.FANOUT, db, ids);
    await db
      .update(inboxEvents)
      .set({ sends: sql`${inboxEvents.sends} + 1`, dueAt: nowText })
      .where(inArray(inboxEvents.id, ids));
  }
  const shards = searchShardsOf(env);
  await shards.changed(
    behind.map((s) => s.id),
    true,
  );
  await continueMove(env, db);
  // A room that refuses (its branch gone since, say) has nothing to catch up on: no failure of the sweep.
  const rooms = new BranchRooms(env.BRANCH_ROOM);
  await Promise.all(stuck.map(({ id }) => unlessRefused(rooms.wake(id))));
  await Promise.all(leftovers.map((m) => unlessRefused(rooms.expel(m.branch_id, m.bot_id))));
  const told = new Map(hides.map((h) => [h.branch_id, hiddenFrame(h.branch_id, { type: h.target_type, id: h.target_id }, h.at)]));
  await Promise.all([...told].map(([id, frame]) => unlessRefused(rooms.moderated(id, frame, true))));
  return { requeued: unpicked.length, refanned: stalled.length, woken: stuck.length, expelled: leftovers.length, told: told.size, resynced: behind.length };
}
