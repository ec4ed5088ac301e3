import type { Writer } from "../domain/shared/actor";
import { type IdempotentRequest, KeyAlreadyCommitted } from "../domain/shared/idempotency";
import type { Session } from "../domain/standing/rule";
import type { LiveEvent } from "../domain/events/live-events";
import { ApiError } from "../lib/errors";
import { RequestMeter } from "../lib/meter";
import type { Role } from "../schemas/fields";
import type { BranchRoom, ExpelResult, JoinResult, LeaveResult, SubmitOptions, Submitted, TurnWait } from "./branch";
import { type Outcome, unwrap } from "./result";

/**
 * The caller's side of the branch rooms: finds a branch's object, times the call for Server-Timing, and turns
 * the outcome back into the value or the ApiError the room reported. Routes use it from `c.var.rooms`; the sweeper
 * and the queue consumers make their own, with no request to time (their meter is read by nobody).
 */
export class BranchRooms {
  constructor(
    private readonly namespace: DurableObjectNamespace<BranchRoom>,
    private readonly meter: RequestMeter = new RequestMeter(),
  ) {}

  submit(branchId: string, writer: Writer, content: string, options: SubmitOptions): Promise<Submitted> {
    return this.call(branchId, (room) => room.submit(branchId, writer, content, options));
  }

  join(branchId: string, bot: { id: string; name: string } & Session, role: Role, idem?: IdempotentRequest): Promise<JoinResult> {
    return this.call(branchId, (room) => room.join(branchId, bot, role, idem));
  }

  /** A suspended (or retired: `left`) bot leaves the branch's queue (the turn passes at once). */
  expel(branchId: string, botId: string, change: "suspended" | "left" = "suspended"): Promise<ExpelResult> {
    return this.call(branchId, (room) => room.expel(branchId, botId, change));
  }

  leave(branchId: string, bot: { id: string } & Session): Promise<LeaveResult> {
    return this.call(branchId, (room) => room.leave(branchId, bot));
  }

  /** Resolves when the bot's turn begins on the branch (at once if it holds it), or after `timeoutMs`. */
  waitForTurn(branchId: string, botId: string, timeoutMs: number): Promise<TurnWait> {
    return this.call(branchId, (room) => room.waitForTurn(branchId, botId, timeoutMs));
  }

  /** The sweeper's nudge for a turn whose deadline passed unnoticed: the room re-arms its alarm from D1. */
  wake(branchId: string): Promise<{ deadline: number | null }> {
    return this.call(branchId, (room) => room.wake(branchId));
  }

  /** Tells a branch's live stream that its story was archived. */
  archived(branchId: string): Promise<{ sockets: number }> {
    return this.call(branchId, (room) => room.archived(branchId));
  }

  /** Tells a branch's live stream what a moderator hid or restored (`close`: the branch or its story, the last event). */
  moderated(branchId: string, event: LiveEvent, close: boolean): Promise<{ sockets: number }> {
    return this.call(branchId, (room) => room.moderated(event, close));
  }

  private async call<T>(branchId: string, fn: (room: DurableObjectStub<BranchRoom>) => Promise<unknown>): Promise<T> {
    const room = this.namespace.get(this.namespace.idFromName(branchId));
    return unwrap((await this.meter.timeObject("BranchRoom", () => fn(room))) as Outcome<T>);
  }
}

/**
 * For a caller with no request to answer (the sweeper, the queue consumers): a room's refusal (the ApiError, or the
 * committed key, that `unwrap` throws) is null, to be ignored or logged; a failure of the call itself still throws.
 */
export async function unlessRefused<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof ApiError || err instanceof KeyAlreadyCommitted) return null;
    throw err;
  }
}
