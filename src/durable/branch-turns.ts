import { sql } from "drizzle-orm";
import type { rawRun } from "../db/client";
import { configOf } from "../config";
import type { LiveEvent, TurnReason } from "../domain/events/live-events";
import { type WebhookMessage, handOverQuery, outboxStatements, publish, yourTurnMessage } from "../domain/events/webhook-events";
import { ApiError } from "../lib/errors";
import { type Refusal, type TurnEvent, type TurnState, estimatedWait, holder, isoOrNull, queueView, resumesAt, sitsOut, transition } from "../turns/rules";
import { memberStatement, turnColumnsStatement } from "../turns/store";
import type { Room, RoomHost } from "./branch-state";
import { type LiveSockets, liveTurn } from "./live";
import type { TurnWait, TurnWaiters } from "./turn-waiters";

/**
 * A transition the rule allowed, with the `your_turn` event of the turn it begins (if any). `probe` is the
 * statement of its batch that says whether the event goes to the queue (`handOverQuery`); `handOver` its answer
 * once the batch ran (unknown: the event is handed over).
 */
export type Applied = Extract<ReturnType<typeof transition>, { ok: true }> & { event: WebhookMessage | null; probe?: unknown; handOver?: boolean };

/**
 * How the room changes its turn, whatever the change (a join, a leave, a segment, a limit, a timeout): the rule
 * applied (`decide`), its statements for the change's own batch (`statements`), and once D1 has committed them, the
 * room's memory, the live stream, the waiting bots, the alarm and the webhook queue told (`keep`).
 */
export class TurnChanges {
  constructor(
    private readonly host: RoomHost,
    private readonly storage: DurableObjectStorage,
    private readonly live: LiveSockets,
    private readonly waiters: TurnWaiters,
  ) {}

  /** Applies the turn rule now; a refusal becomes the caller's error. */
  decide(room: Room, event: TurnEvent, botId = ""): Applied {
    const result = transition(room.turn, event, Date.now(), this.turnTimeoutMs);
    if (!result.ok) throw refusalError(result.refusal, botId);
    return { ...result, event: result.announce ? yourTurnMessage(result.announce.botId, room.branchId) : null };
  }

  /**
   * The statements of a transition: the queue member's change, the turn columns, and the outbox row of the turn it
   * begins with its hand-over probe (`applied.probe`). `condition` (`AND …`) ties them to the batch's own change (the
   * segment written, the leaver's standing); a join's member INSERT is that change itself, with `memberCondition`
   * (the branch taking writes, the bot's standing), and the rest conditional on its row.
   */
  statements(room: Room, applied: Applied, condition = sql``, memberCondition = condition) {
    const db = this.host.db;
    const { member, turn } = applied.writes;
    if (applied.event) applied.probe = handOverQuery(db, applied.event);
    return [
      ...(member ? [memberStatement(db, room, member, memberCondition)] : []),
      ...(member || turn ? [turnColumnsStatement(db, room.branchId, applied.state, condition)] : []),
      ...(applied.event ? [...outboxStatements(db, [applied.event], condition), applied.probe] : []),
    ];
  }

  /** A transition's statements alone, in one batch (its answer to the probe noted). */
  async commit(room: Room, applied: Applied): Promise<void> {
    const statements = this.statements(room, applied);
    heard(applied, statements, await this.host.db.batch(statements as [ReturnType<typeof rawRun>]));
  }

  /**
   * D1 has committed the transition: keep it, tell the live stream (the change's own events, then the turn that
   * began), re-arm the alarm for the new deadline and hand the `your_turn` to the queue unless its probe said
   * nobody will act on it (`handOver`). Called once per commit, inside the room's lock, so live events go out in
   * commit order.
   */
  async keep(room: Room, applied: Applied, { reason, events = [] }: { reason: TurnReason; events?: LiveEvent[] }): Promise<void> {
    room.turn = applied.state;
    for (const event of events) this.live.broadcast(event);
    if (!applied.writes.turn) return;
    this.live.broadcast(liveTurn(room.branchId, applied.state, reason));
    const begun = holder(applied.state);
    if (begun) this.waiters.wake(begun.botId, this.waitOf(room.turn, room.branchId, begun.botId));
    await this.armAlarm(applied.state.deadline);
    if (applied.event && applied.handOver !== false) await this.announce(applied.event);
  }

  /** The object's alarm at the turn's deadline (none without one). */
  async armAlarm(deadline: number | null): Promise<void> {
    if (deadline === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(deadline);
  }

  /** Where `botId` stands in `turn` now, as `waitForTurn` answers. */
  waitOf(turn: TurnState, branchId: string, botId: string): TurnWait {
    const me = turn.members.find((m) => m.botId === botId);
    const now = Date.now();
    return {
      your_turn: !!me && turn.current === botId,
      branch_id: branchId,
      queued: !!me,
      current_turn: queueView(turn, now).current_turn,
      estimated_wait: estimatedWait(turn, botId, this.turnTimeoutMs, now),
      sits_out_until: me && sitsOut(me, now) ? isoOrNull(me.sitsOutUntil) : null,
      resumes_at: isoOrNull(resumesAt(turn)),
    };
  }

  /**
   * The one place a turn begins (after a turn pass, a timeout, a join into an empty queue or one where every bot
   * sits out, the current bot leaving or expelled, a limit passing the holder's turn on, or the first bot sitting
   * out coming back): its `your_turn` was written to the outbox with the change (for a bot with a receiver); now
   * hand it to the queue.
   */
  private async announce(event: WebhookMessage): Promise<void> {
    await publish(this.host.env.WEBHOOKS, this.host.db, [event]);
  }

  private get turnTimeoutMs(): number {
    return configOf(this.host.env).turnTimeoutMs;
  }
}

/** A transition's batch ran: its probe's answer says whether the turn it begins is handed to the queue. */
export function heard(applied: Applied, statements: unknown[], results: unknown[]): void {
  const at = statements.indexOf(applied.probe);
  if (at >= 0) applied.handOver = (results[at] as unknown[]).length > 0;
}

function refusalError(refusal: Refusal, botId: string): ApiError {
  if (refusal.reason === "not_queued") return new ApiError("NOT_FOUND", "This bot is not in the branch's queue");
  const until = isoOrNull(refusal.sitsOutUntil);
  const message = !refusal.queued
    ? "Join this branch's queue first: it is in turn mode"
    : until
      ? `It is not your turn on this branch: a limit refused you at your turn, so you sit out until ${until}`
      : "It is not your turn on this branch";
  const wait = refusal.estimatedWait;
  const headers = wait === null ? undefined : { "Retry-After": String(wait) };
  const details = { current_turn: refusal.current, your_bot_id: botId, estimated_wait: wait, ...(until ? { sits_out_until: until } : {}) };
  return new ApiError("NOT_YOUR_TURN", message, details, headers);
}
