import { sql, type SQL } from "drizzle-orm";
import { type Db, rawAll, rawRun } from "../db/client";
import { type Member, type TurnState, type Writes, isoOrNull } from "./rules";

/** A queue member as D1 holds it (its timestamps ISO text). */
export type MemberRow = Omit<Member, "sitsOutUntil"> & { sitsOutUntil: string | null };

/** A branch's queue in join order, with the bots' names: usable inside `db.batch()`; read it with `turnStateOf`. */
export const queueQuery = (db: Db, branchId: string) =>
  rawAll<MemberRow>(
    db,
    sql`SELECT m.bot_id AS "botId", b.name, m.role, m.join_seq AS "joinSeq", m.joined_at AS "joinedAt", m.sits_out_until AS "sitsOutUntil"
      FROM branch_members m JOIN bots b ON b.id = m.bot_id WHERE m.branch_id = ${branchId} ORDER BY m.join_seq`,
  );

const msOrNull = (iso: string | null) => (iso ? Date.parse(iso) : null);

/** The turn state as D1 holds it: the queue rows and the branch's turn columns. */
export const turnStateOf = (branch: { currentTurnBotId: string | null; turnDeadline: string | null }, members: MemberRow[]): TurnState => ({
  members: members.map((m) => ({ ...m, sitsOutUntil: msOrNull(m.sitsOutUntil) })),
  current: branch.currentTurnBotId,
  deadline: msOrNull(branch.turnDeadline),
});

/**
 * The one statement that writes a branch's turn columns (queue size, current turn, deadline), run in the same
 * batch as the change that moved them; `condition` lets it apply only if an earlier statement of the batch did.
 */
export function turnColumnsStatement(db: Db, branchId: string, state: TurnState, condition: SQL = sql``) {
  return rawRun(
    db,
    sql`UPDATE branches SET
      active_bots_count = (SELECT count(*) FROM branch_members WHERE branch_id = ${branchId}),
      current_turn_bot_id = ${state.current}, turn_deadline = ${isoOrNull(state.deadline)}, updated_at = ${new Date().toISOString()}
    WHERE id = ${branchId} ${condition}`,
  );
}

/**
 * Adds a queue member (a re-join meeting a row the room did not know of starts it afresh, not sitting out), removes
 * one, or marks when it sits out until, as a transition's writes say: each only while `condition` (`AND …`, as the
 * other statements of a batch take it) holds, whatever the kind of change.
 */
export function memberStatement(db: Db, place: { branchId: string; storyId: string }, change: NonNullable<Writes["member"]>, condition: SQL = sql``) {
  const { branchId, storyId } = place;
  if ("remove" in change) return rawRun(db, sql`DELETE FROM branch_members WHERE branch_id = ${branchId} AND bot_id = ${change.remove} ${condition}`);
  if ("sitOut" in change) {
    return rawRun(
      db,
      sql`UPDATE branch_members SET sits_out_until = ${isoOrNull(change.until)} WHERE branch_id = ${branchId} AND bot_id = ${change.sitOut} ${condition}`,
    );
  }
  const m = change.add;
  return rawRun(
    db,
    sql`INSERT INTO branch_members (branch_id, bot_id, story_id, role, join_seq, joined_at)
    SELECT ${branchId}, ${m.botId}, ${storyId}, ${m.role}, ${m.joinSeq}, ${m.joinedAt}
    WHERE 1 ${condition}
    ON CONFLICT (branch_id, bot_id) DO UPDATE SET role = excluded.role, join_seq = excluded.join_seq, joined_at = excluded.joined_at, sits_out_until = NULL`,
  );
}
