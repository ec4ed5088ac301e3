import { configOf } from "../config";
import { getDb, nowIso } from "../db/client";
import { fanOutStep } from "../domain/following/fanout";
import type { FanoutMessage } from "../domain/events/inbox-events";
import type { Env } from "../env";
import { backoffSeconds } from "./webhooks";

export const FANOUT_QUEUE = "inbox-fanout";

/**
 * The inbox's fan-out consumer: each message is one step of one event (a page of its followers, one D1
 * batch: src/domain/following/fanout.ts), and a step that leaves more queues the next step as a message of its own, so an
 * invocation writes at most a batch of pages however many follow. A failed step is retried (its page is written at
 * most once: the event's cursor guards it); one the queue gives up on is handed over again by the sweeper.
 */
async function step(env: Env, message: Message<FanoutMessage>) {
  const { eventId } = message.body;
  const next = await fanOutStep(getDb(env.DB), eventId, configOf(env).inbox, nowIso());
  if (next === "more") await env.FANOUT.send({ eventId } satisfies FanoutMessage, { contentType: "json" });
  message.ack();
}

export async function handleFanout(batch: MessageBatch<FanoutMessage>, env: Env): Promise<void> {
  const results = await Promise.allSettled(batch.messages.map((message) => step(env, message)));
  results.forEach((r, i) => {
    if (r.status === "rejected") {
      console.error(`fan-out message ${batch.messages[i].id} failed`, r.reason);
      batch.messages[i].retry({ delaySeconds: backoffSeconds(batch.messages[i].attempts) });
    }
  });
}
