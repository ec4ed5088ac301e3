import type { BatchItem } from "drizzle-orm/batch";
import { nowIso } from "../db/client";
import { publishInboxEvents, writtenEvents } from "../domain/events/inbox-events";
import { type LiveEvent, hiddenFrame } from "../domain/events/live-events";
import { type HideTarget, hidingStatements, hidingView, placeOf, refuseOwnCase, storyBranchIdsQuery } from "../domain/moderation/moderation";
import { asSegments, segmentRecords } from "../domain/stories/segments";
import { sql } from "drizzle-orm";
import type { Caller } from "./caller";
import { syncBeforeAnswer } from "./search";

/**
 * A moderator hides an item: one D1 batch with the item's hiding columns, its audit row, its author's
 * inbox event, the scores and summaries it touches and the caller's `extra` statements (a report's resolution), then,
 * in the same request, the branch's live stream learns it (a branch's or story's hide: the sweeper tells its rooms
 * again should this request die first, src/queue/sweeper.ts), its story's search shard takes the change (the sweeper
 * repeats it should this request die first), and the event goes to the fan-out queue. Hiding a
 * hidden item is idempotent: 200 with the first hide's record, no new
 * audit row, `changed: false` (the `extra` statements still run). Read caches: the door's write empties them.
 */
export function hideItem(caller: Caller, target: HideTarget, reason: string, extra: BatchItem<"sqlite">[] = []) {
  return setHidden(caller, target, { hide: true, reason }, extra);
}

/** A moderator restores a hidden item: the reverse of `hideItem`, with the same batch, audit row and live event. */
export function restoreItem(caller: Caller, target: HideTarget, reason: string | null = null, extra: BatchItem<"sqlite">[] = []) {
  return setHidden(caller, target, { hide: false, reason }, extra);
}

async function setHidden(caller: Caller, target: HideTarget, change: { hide: boolean; reason: string | null }, extra: BatchItem<"sqlite">[]) {
  const { db, actor } = caller;
  const place = await placeOf(db, target);
  refuseOwnCase(actor, place.author_id, `${change.hide ? "hide" : "restore"} your own ${target.type}`);
  if ((place.hidden_at !== null) === change.hide) {
    if (extra.length) await db.batch(extra as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
    return hidingView(target, place, false);
  }
  const at = nowIso();
  const hiding = hidingStatements(db, actor, target, place, change, at);
  const tell = change.hide && target.type === "story" ? storyBranchIdsQuery(db, place.story_id) : null;
  const statements = [...hiding.statements, ...extra, ...(tell ? [tell] : [])];
  const results = await db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]);
  const branchIds = tell ? (results.at(-1) as { id: string }[]).map((b) => b.id) : [];
  await tellRooms(caller, target, place, change.hide, branchIds);
  await syncBeforeAnswer(db, caller.search, place.story_id, caller.background);
  await caller.background(publishInboxEvents(caller.fanout, db, writtenEvents(statements, results, [hiding.event])));
  const record = change.hide ? { hidden_at: at, hidden_by: actor.id, hidden_reason: change.reason } : { hidden_at: null, hidden_by: null, hidden_reason: null };
  return hidingView(target, record, true);
}

/** The live streams that show the item: a segment's branch, a hidden branch, every branch of a hidden story. */
async function tellRooms(caller: Caller, target: HideTarget, place: Awaited<ReturnType<typeof placeOf>>, hide: boolean, storyBranches: string[]) {
  const at = nowIso();
  if (target.type === "segment" && place.branch_id) {
    const branchId = place.branch_id;
    let event: LiveEvent;
    if (hide) event = hiddenFrame(branchId, { type: "segment", id: target.id }, at, place.sequence_order);
    else {
      const [segment] = asSegments(await segmentRecords(caller.db, null, sql`WHERE s.id = ${target.id}`));
      event = { type: "restored", branch_id: branchId, at, segment };
    }
    await caller.rooms.moderated(branchId, event, false);
  } else if (hide && target.type === "branch") {
    await caller.rooms.moderated(target.id, hiddenFrame(target.id, { type: "branch", id: target.id }, at), true);
  } else if (hide && target.type === "story") {
    await Promise.all(storyBranches.map((branchId) => caller.rooms.moderated(branchId, hiddenFrame(branchId, { type: "story", id: target.id }, at), true)));
  }
}
