import { sql } from "drizzle-orm";
import { commit, type IdempotentRequest, recordStatements } from "../domain/shared/idempotency";
import type { Session, Subject } from "../domain/standing/rule";
import { takesWrites } from "../domain/shared/writable";
import type { rawRun } from "../db/client";
import { ApiError, storyArchived } from "../lib/errors";
import type { Role } from "../schemas/fields";
import { type Member, type TurnState, holder, isoOrNull, turnOrder } from "../turns/rules";
import { explainRefusal, refuseByStanding, refuseIfHidden, writerInGoodStanding } from "./branch-checks";
import { type Room, type RoomHost, writeTarget } from "./branch-state";
import { type TurnChanges, heard } from "./branch-turns";
import { liveQueue } from "./live";
import type { TurnWait, TurnWaiters } from "./turn-waiters";

export interface JoinView {
  branch_id: string;
  bot_id: string;
  role: string;
  your_turn_order: number;
  join_order: number;
  queue_length: number;
  current_turn: string | null;
  joined_at: string;
}

export type JoinResult = JoinView & { created: boolean };

export interface ExpelResult {
  branch_id: string;
  bot_id: string;
  /** False when the bot was not queued here (already gone). */
  expelled: boolean;
}

export interface LeaveResult {
  branch_id: string;
  bot_id: string;
  left: true;
  queue_length: number;
  current_turn: string | null;
}

/**
 * The branch's queue of bots: joining, leaving, being expelled, sitting out after a limit, the turn's timeout, and
 * where a waiting bot stands. Each is called by `BranchRoom` inside its lock with the room loaded, and each writes
 * its change with the turn's in one batch (`TurnChanges`), keeping it only once D1 has committed it.
 */
export class TurnQueue {
  constructor(
    private readonly host: RoomHost,
    private readonly turns: TurnChanges,
    private readonly waiters: TurnWaiters,
  ) {}

  async join(room: Room, bot: { id: string; name: string } & Session, role: Role, idem?: IdempotentRequest): Promise<JoinResult> {
    const db = this.host.db;
    await refuseIfHidden(db, room);
    const member: Member = { botId: bot.id, name: bot.name, role, joinSeq: room.joinSeq + 1, joinedAt: new Date().toISOString(), sitsOutUntil: null };
    const applied = this.turns.decide(room, { type: "join", member });
    const subject: Subject = { id: bot.id, type: "bot", jti: bot.jti, issuedAt: bot.issuedAt };
    if (!applied.writes.member) {
      // Already queued. With a key, record the answer, only while the bot is in good standing (as a new member's
      // INSERT is; without a key nothing is written, and the Worker checks a JWT's standing then). If this key was
      // committed by the join that queued the bot (its answer lost in a crash), that batch fails and the original
      // 201 is replayed instead.
      const view = joinView(room.branchId, room.turn, bot.id);
      const [record] = recordStatements(db, idem, { status: 200, data: view }, sql`AND ${writerInGoodStanding(subject)}`);
      if (record && ((await commit(() => db.batch([record])))[0] as D1Result).meta.changes !== 1) await refuseByStanding(db, subject);
      return { created: false, ...view };
    }
    const view = joinView(room.branchId, applied.state, bot.id);
    const joined = sql`AND EXISTS (SELECT 1 FROM branch_members WHERE branch_id = ${room.branchId} AND bot_id = ${bot.id})`;
    const statements = [
      ...this.turns.statements(room, applied, joined, sql`AND ${takesWrites(writeTarget(room))} AND ${writerInGoodStanding(subject)}`),
      ...recordStatements(db, idem, { status: 201, data: view }, joined),
    ];
    const results = await commit(() => db.batch(statements as [ReturnType<typeof rawRun>]));
    const inserted = results[0] as D1Result;
    if (inserted.meta.changes !== 1) {
      await explainRefusal(db, subject, room); // read alone, on a refusal only
      throw storyArchived();
    }
    room.joinSeq = member.joinSeq;
    heard(applied, statements, results);
    await this.turns.keep(room, applied, { reason: "joined", events: [liveQueue(room.branchId, "joined", member, applied.state)] });
    return { created: true, ...view };
  }

  /**
   * The member's DELETE, the turn columns and the next bot's `your_turn` are each conditional on the leaver's
   * standing (a logged-out or suspended session neither leaves nor passes the turn). Its standing is read alone only
   * when the leave is refused: by the rule (not queued) or by its batch.
   */
  async leave(room: Room, subject: Subject, again = false): Promise<LeaveResult> {
    const db = this.host.db;
    const botId = subject.id;
    const leaving = room.turn.members.find((m) => m.botId === botId);
    if (!leaving) await refuseByStanding(db, subject);
    const applied = this.turns.decide(room, { type: "leave", botId });
    const statements = this.turns.statements(room, applied, sql`AND ${writerInGoodStanding(subject)}`);
    const results: unknown[] = await db.batch(statements as [ReturnType<typeof rawRun>]);
    // The turn columns' UPDATE (after the member's DELETE) touched the branch's row only if the standing held.
    if ((results[1] as D1Result).meta.changes !== 1) {
      await refuseByStanding(db, subject);
      // Restored between the batch and the read: nothing was written, so once again.
      if (again) throw new Error("a leave's batch wrote nothing for a bot in good standing");
      return this.leave(room, subject, true);
    }
    heard(applied, statements, results);
    await this.turns.keep(room, applied, { reason: "left", events: [liveQueue(room.branchId, "left", leaving!, applied.state)] });
    this.waiters.wake(botId, this.turns.waitOf(room.turn, room.branchId, botId));
    return { branch_id: room.branchId, bot_id: botId, left: true, queue_length: room.turn.members.length, current_turn: room.turn.current };
  }

  /**
   * A suspended bot leaves the queue at once: as a leave (the turn passes, the next bot's `your_turn` is in the outbox
   * with the change), told to the live stream as `suspended`; a bot its owner retired leaves the same way, told as
   * `left`. Nothing when it is not queued.
   */
  async expel(room: Room, botId: string, change: "suspended" | "left"): Promise<ExpelResult> {
    const leaving = room.turn.members.find((m) => m.botId === botId);
    if (!leaving) return { branch_id: room.branchId, bot_id: botId, expelled: false };
    const applied = this.turns.decide(room, { type: "leave", botId });
    await this.turns.commit(room, applied);
    await this.turns.keep(room, applied, { reason: change, events: [liveQueue(room.branchId, change, leaving, applied.state)] });
    this.waiters.wake(botId, this.turns.waitOf(room.turn, room.branchId, botId));
    return { branch_id: room.branchId, bot_id: botId, expelled: true };
  }

  /**
   * A queued bot was refused by a limit until `until`: it sits out (the rotation skips it) and, if it held the
   * turn, the turn passes at once to the next bot not sitting out, or to nobody until the first comes back. A bot
   * refused again while it sits out changes nothing: no write, no event, no `your_turn`. The 429 tells it
   * `turn_passed`, `next_bot` (null when nobody holds the turn) and `sits_out_until`; nothing for a bot not queued.
   */
  async sitOut(room: Room, botId: string, until: number): Promise<Record<string, unknown>> {
    const member = room.turn.members.find((m) => m.botId === botId);
    if (!member) return {};
    const held = room.turn.current === botId;
    const applied = this.turns.decide(room, { type: "limited", botId, until });
    if (applied.writes.member) {
      await this.turns.commit(room, applied);
      const events = [liveQueue(room.branchId, "sits_out", { ...member, sitsOutUntil: until }, applied.state)];
      await this.turns.keep(room, applied, { reason: "limited", events });
    }
    const next = holder(room.turn);
    const sitsOutUntil = room.turn.members.find((m) => m.botId === botId)?.sitsOutUntil ?? until;
    return { turn_passed: held, next_bot: next && { id: next.botId, name: next.name }, sits_out_until: isoOrNull(sitsOutUntil) };
  }

  /**
   * The alarm: the current turn has run out, so it passes on; or, with nobody holding it, the first bot sitting out
   * is back and its turn begins (`resumed`).
   */
  async timeout(room: Room): Promise<void> {
    const reason = room.turn.current === null ? "resumed" : "timeout";
    const applied = this.turns.decide(room, { type: "timeout" });
    if (!applied.writes.turn) return;
    // Only the commit drops the cache when it fails: what failed after it (the alarm re-armed, the queue told)
    // leaves the room holding what D1 committed.
    await this.host.guarded(() => this.turns.commit(room, applied));
    await this.turns.keep(room, applied, { reason });
  }

  /**
   * Where a bot about to wait for its turn stands now: a hidden branch is 404 and a bot not queued is told to join
   * first (404, as `leave`).
   */
  async waitingBot(room: Room, botId: string): Promise<TurnWait> {
    await refuseIfHidden(this.host.db, room);
    if (!room.turn.members.some((m) => m.botId === botId)) {
      throw new ApiError("NOT_FOUND", "This bot is not in the branch's queue: join it first");
    }
    return this.turns.waitOf(room.turn, room.branchId, botId);
  }
}

/** A bot's place in the queue, as join answers it. */
function joinView(branchId: string, turn: TurnState, botId: string): JoinView {
  const m = turn.members.find((x) => x.botId === botId)!;
  const order = turnOrder(turn, botId);
  return {
    branch_id: branchId,
    bot_id: botId,
    role: m.role,
    your_turn_order: order,
    join_order: order,
    queue_length: turn.members.length,
    current_turn: turn.current,
    joined_at: m.joinedAt,
  };
}
