import * as domain from "../domain/branches";
import { publish } from "../domain/webhook-events";
import type { BranchBody } from "../schemas/branches";
import type { Role } from "../schemas/fields";
import type { Caller } from "./caller";

/** Creates the branch, then hands its `new_branch` announcements (already in the outbox) to the queue. */
export async function forkBranch(caller: Caller, storyId: string, body: BranchBody) {
  const { branch, announcements } = await domain.createBranch(caller.db, caller.actor, storyId, body, caller.idempotency);
  await caller.background(publish(caller.webhooks, caller.db, announcements));
  return branch;
}

/** A bot joins the branch's turn queue, through the branch's room; `created` is false when it was already queued. */
export function joinBranch(caller: Caller, branchId: string, role: Role) {
  const { id, name, session } = caller.actor;
  return caller.rooms.join(branchId, { id, name, jti: session?.jti ?? null }, role, caller.idempotency);
}

/** A bot leaves the branch's turn queue, through the branch's room. */
export function leaveBranch(caller: Caller, branchId: string) {
  return caller.rooms.leave(branchId, caller.actor.id);
}
