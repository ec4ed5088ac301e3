import { type Db, nowIso, oneTrip, rawAll, readOf, runRead } from "../db/client";
import { type StandingRow, type Subject, inGoodStanding, refuseUnless, standingQuery, verdictOf } from "../domain/standing/rule";
import { closedError, closedRead } from "../domain/shared/writable";
import { type Room, writeTarget } from "./branch-state";

// Whether a write on the branch may happen: the writer's standing and the branch taking writes. They are conditions
// of the write's own batch (no read of their own before it); only when a batch wrote nothing are they read, to say why.

/**
 * The writer's standing as a condition of a write's own INSERT: a write reaching the room with no D1 trip of the
 * Worker's own is still refused by its batch, which then writes nothing.
 */
export const writerInGoodStanding = (subject: Subject) => inGoodStanding(subject, { claimed: subject.type, composed: true }, nowIso());

/**
 * Throws why a write's batch wrote nothing, when it was the writer's standing or the branch no longer taking
 * writes (hidden: 404; archived: 403, `takesWrites`). Both read alone in one round trip, on a refusal only.
 */
export async function explainRefusal(db: Db, subject: Subject, room: Room): Promise<void> {
  const [verdict, closed] = await oneTrip(db, standingRead(db, subject), closedRead(db, writeTarget(room)));
  refuseUnless(verdict);
  if (closed) throw closed;
}

/** Throws the refusal when the account is not in good standing (read alone: a refused leave's trip only). */
export async function refuseByStanding(db: Db, subject: Subject): Promise<void> {
  refuseUnless(await runRead(db, standingRead(db, subject)));
}

/**
 * A hidden branch (or story) takes no joins or segments and names no turn: 404, as reading it is, before the turn
 * rule could answer from memory (`NOT_YOUR_TURN` with the queue, an already-queued join). Asks D1 only when the
 * room believes it hidden; a restore since (no room is told) clears the belief.
 */
export async function refuseIfHidden(db: Db, room: Room): Promise<void> {
  if (!room.hidden) return;
  const closed = await closedError(db, writeTarget(room), { evenArchived: true });
  if (closed) throw closed;
  room.hidden = false;
}

/** The writer's standing as a read (`oneTrip`, `runRead`): its verdict. */
function standingRead(db: Db, subject: Subject) {
  return readOf([rawAll<StandingRow>(db, standingQuery(subject))], ([[row]]) => verdictOf(row ?? null, { claimed: subject.type, composed: true }, nowIso()));
}
