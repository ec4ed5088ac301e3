import { sessionOf } from "../domain/standing/rule";
import { publishInboxEvents } from "../domain/events/inbox-events";
import type { SegmentBody } from "../schemas/segments";
import type { Caller } from "./caller";

/**
 * Writes a segment through the branch's room, which counts the writer's segment limits in the write's own batch;
 * where the writer then stands is written back on `segmentQuota.rate`. Its inbox event, when the room wrote one,
 * is handed to the fan-out queue after the answer, and its story to the search queue (search finds it in seconds).
 */
export async function submitSegment(caller: Caller, branchId: string, body: SegmentBody) {
  const { id, type, name } = caller.actor;
  const quota = caller.segmentQuota;
  // The room checks the writer's standing in its write batch (the Worker may make no D1 trip of its own).
  const options = { isStarter: body.is_starter, idempotency: caller.idempotency, limits: quota?.limits ?? null, session: sessionOf(caller.actor) };
  const { data, storyId, rate, inboxEvent } = await caller.rooms.submit(branchId, { id, type, name }, body.content, options);
  if (quota) quota.rate = rate;
  if (inboxEvent) await caller.background(publishInboxEvents(caller.fanout, caller.db, [inboxEvent]));
  await caller.background(caller.search.changed([storyId]));
  return data;
}
