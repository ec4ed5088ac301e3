import type { SegmentBody } from "../schemas/segments";
import type { Caller } from "./caller";

/**
 * Writes a segment through the branch's room, for a caller the limits gate admitted: the per-branch limit was
 * counted but deferred, since it does not apply to a bot at its own turn (only the room knows); `applies` is
 * written back for the gate.
 */
export async function submitSegment(caller: Caller, branchId: string, body: SegmentBody) {
  const { id, type, name } = caller.actor;
  const limit = caller.deferredLimit;
  const options = { isStarter: body.is_starter, idempotency: caller.idempotency, branchLimit: limit?.refusal ?? null };
  const { data, inTurn } = await caller.rooms.submit(branchId, { id, type, name }, body.content, options);
  if (limit) limit.applies = !inTurn;
  return data;
}
