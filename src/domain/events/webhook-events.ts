import { and, eq, inArray, ne, sql, type SQL } from "drizzle-orm";
import { type Db, nowIso, rawAll, rawRun } from "../../db/client";
import { branchMembers, outbox, type OutboxRow } from "../../db/schema";
import { type Actor, writerType } from "../shared/actor";
import { botInGoodStandingSql } from "../standing/rule";

/**
 * Producing webhook events. An event is first an outbox row, written in the same D1 batch as the change that
 * causes it, so a committed change always has its event; then it is handed to the `webhooks` queue. If that
 * hand-over is lost (a crash, a queue that lost the message) or fails (recorded on the row), the scheduled
 * sweeper hands it over again, until the delivery settles.
 */

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

/**
 * The outbox rows of these events, for the batch of the change that causes them; bots without a webhook get
 * none, and a suspended bot is sent nothing: no event of its enters the outbox. `condition` (`AND …`)
 * ties them to the batch's own change.
 */
/** A suspended bot (or one whose owner is suspended) is sent nothing: no event of its enters the outbox. */
const notSuspended = (now: string) => botInGoodStandingSql("bots", now);

export const outboxStatements = (db: Db, messages: WebhookMessage[], condition: SQL = sql``) =>
  messages.map((m) =>
    rawRun(
      db,
      sql`INSERT INTO outbox (id, event, bot_id, branch_id, data, created_at, due_at)
      SELECT ${m.deliveryId}, ${m.event}, ${m.botId}, ${m.branchId}, ${m.data ? JSON.stringify(m.data) : null}, ${m.createdAt}, ${m.createdAt}
      WHERE EXISTS (SELECT 1 FROM bots WHERE id = ${m.botId} AND webhook_url IS NOT NULL AND ${notSuspended(m.createdAt)}) ${condition}`,
    ),
  );

/**
 * Whether a your_turn is worth handing to the queue, read in the batch that begins the turn: when the bot has a
 * receiver (its outbox row is there to deliver), or when it is suspended (the consumer then has the room expel
 * it, `src/queue/webhooks.ts`). Why: a bot that polls or waits for its turn has neither, and a message for it
 * cost a queue send inside the room's lock and a consumer run of two D1 trips, for nothing.
 */
export const handOverQuery = (db: Db, m: WebhookMessage) =>
  rawAll<{ hand_over: number }>(
    db,
    sql`SELECT 1 AS hand_over FROM bots WHERE id = ${m.botId} AND (webhook_url IS NOT NULL OR NOT ${notSuspended(m.createdAt)})`,
  );

/** An outbox row as the queue message it stands for. */
export const messageOf = (row: OutboxRow): WebhookMessage => ({
  deliveryId: row.id,
  event: row.event,
  botId: row.botId,
  branchId: row.branchId,
  createdAt: row.createdAt,
  data: (row.data as Record<string, unknown> | null) ?? undefined,
});

/**
 * Hands committed events to the queue; the request never waits on a receiver. A failed hand-over is logged and
 * recorded on the outbox rows (never swallowed); the sweeper hands them over again.
 */
export async function publish(queue: Queue, db: Db, messages: WebhookMessage[]): Promise<void> {
  const ids = messages.map((m) => m.deliveryId);
  await handOver(queue, messages, "webhook event", (error) => db.update(outbox).set({ lastError: error }).where(inArray(outbox.id, ids)));
}

/**
 * Sends messages of rows already committed to a queue. A failed send is logged and recorded on the rows (`record`,
 * given the error), never swallowed: the sweeper hands overdue rows over again.
 */
export async function handOver<M>(queue: Queue, messages: M[], what: string, record: (error: string) => PromiseLike<unknown>): Promise<void> {
  if (!messages.length) return;
  try {
    await queue.sendBatch(messages.map((body) => ({ body, contentType: "json" as const })));
  } catch (err) {
    console.error(`could not queue ${messages.length} ${what}(s); the sweeper will retry`, err);
    await record(`queue send failed: ${(err as Error).message}`.slice(0, 500));
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
    creator: { id: creator.id, type: writerType(creator), name: creator.name },
  };
  return recipients.map((r) => message("new_branch", r.botId, branch.id, data));
}
