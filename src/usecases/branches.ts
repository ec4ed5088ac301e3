import { flushPrelude } from "../db/metered";
import * as domain from "../domain/stories/branches";
import { sessionOf } from "../domain/standing/rule";
import { publishInboxEvents } from "../domain/events/inbox-events";
import { publish } from "../domain/events/webhook-events";
import type { BranchBody } from "../schemas/branches";
import type { Role } from "../schemas/fields";
import type { Caller } from "./caller";

/**
 * Creates the branch, then hands its `new_branch` announcements (already in the outbox) to the webhook queue and
 * its inbox event (if written) to the fan-out queue, and its story (with a first segment) to the search queue.
 */
export async function forkBranch(caller: Caller, storyId: string, body: BranchBody) {
  const { branch, announcements, events } = await domain.createBranch(caller.db, caller.actor, storyId, body, caller.idempotency);
  const handOvers = [publish(caller.webhooks, caller.db, announcements), publishInboxEvents(caller.fanout, caller.db, events)];
  // Its first segment, when it has one, is the story's news for search.
  if ("segment" in branch) handOvers.push(caller.search.changed([storyId]));
  await caller.background(Promise.all(handOvers));
  return branch;
}

/**
 * A bot joins the branch's turn queue, through the branch's room; `created` is false when it was already queued.
 * A new member's standing is a condition of its INSERT; one already queued is answered from the room's memory,
 * with no trip for the caller's standing to ride in, so it is checked then, alone (a JWT's; a key's was read with it).
 */
export async function joinBranch(caller: Caller, branchId: string, role: Role) {
  const { id, name } = caller.actor;
  const joined = await caller.rooms.join(branchId, { id, name, ...sessionOf(caller.actor) }, role, caller.idempotency);
  if (!joined.created) await flushPrelude(caller.db.$client);
  return joined;
}

/** A bot leaves the branch's turn queue, through the branch's room (which checks its standing in the leave's batch). */
export function leaveBranch(caller: Caller, branchId: string) {
  return caller.rooms.leave(branchId, { id: caller.actor.id, ...sessionOf(caller.actor) });
}
