import { and, eq, ne } from "drizzle-orm";
import type { Db } from "../db/client";
import { nowIso } from "../db/client";
import { branchMembers } from "../db/schema";
import { type Actor, writerType } from "./actor";

/** Producing webhook events: what travels on the `webhooks` queue, and handing it over. */

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
export async function publish(queue: Queue, messages: WebhookMessage[]): Promise<void> {
  if (!messages.length) return;
  try {
    await queue.sendBatch(messages.map((body) => ({ body, contentType: "json" as const })));
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
    creator: { id: creator.id, type: writerType(creator), name: creator.name },
  };
  return recipients.map((r) => message("new_branch", r.botId, branch.id, data));
}
