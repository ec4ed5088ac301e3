import { DurableObject } from "cloudflare:workers";
import { type Db, getDb } from "../db/client";
import { meteredD1 } from "../db/metered";
import type { Writer } from "../domain/shared/actor";
import { type IdempotentRequest, KeyAlreadyCommitted } from "../domain/shared/idempotency";
import type { LiveEvent } from "../domain/events/live-events";
import { SOCKET_HEADER, type SocketRequest } from "../domain/events/live-socket";
import type { Session } from "../domain/standing/rule";
import type { Env } from "../env";
import { ApiError } from "../lib/errors";
import type { D1Counter } from "../lib/meter";
import type { Role } from "../schemas/fields";
import { NO_TURN } from "../turns/rules";
import { type ExpelResult, type JoinResult, type LeaveResult, TurnQueue } from "./branch-queue";
import { type Room, type RoomHost, readRoom } from "./branch-state";
import { type SubmitOptions, type Submitted, Submissions } from "./branch-submit";
import { TurnChanges } from "./branch-turns";
import { LiveSockets } from "./live";
import { type Outcome, capture } from "./result";
import { type TurnWait, TurnWaiters } from "./turn-waiters";

export type { ExpelResult, JoinResult, JoinView, LeaveResult } from "./branch-queue";
export type { SubmitOptions, SubmitResult, Submitted } from "./branch-submit";
export type { TurnWait } from "./turn-waiters";

const BRANCH_KEY = "branch_id";

/**
 * One per branch (named by its id): it serializes the branch's joins, leaves, segment submissions and turn
 * timeouts. The rule itself is `transition` (src/turns/rules.ts); the room loads the state, applies the rule,
 * writes what it returns to D1 in one batch with the change, then keeps it and announces the turn that begins.
 *
 * D1 is the one source of truth. The room's memory is a cache of what D1 holds, filled from D1 whenever the
 * object starts cold (after a crash, an eviction, a deploy) and changed only after D1 has committed, so no
 * crash between two awaits can leave the room believing anything D1 does not hold. Its own storage keeps only
 * its branch id (for the alarm) and the alarm itself, which is re-armed from D1's deadline on every cold start;
 * it writes nothing before D1 has shown that the branch exists.
 *
 * This class is the RPC surface: each method takes the lock, loads the room and hands the work to its parts —
 * `TurnQueue` (join, leave, expel, sitting out, the timeout: branch-queue.ts), `Submissions` (a segment with its
 * standing, limits and idempotency record: branch-submit.ts), both changing the turn through `TurnChanges`
 * (branch-turns.ts); `LiveSockets` the live stream (live.ts), `TurnWaiters` the bots waiting for their turn.
 * Each RPC answers an `Outcome` (result.ts): errors thrown across RPC lose their properties.
 */
export class BranchRoom extends DurableObject<Env> {
  /**
   * Why an explicit lock: awaiting D1 opens the input gate, so without it a second request could read the
   * room between our read and our write. Every call runs after the previous one has settled.
   */
  private tail: Promise<unknown> = Promise.resolve();
  /** The cache of D1's state; null when cold. */
  private room: Room | null = null;
  /** The database of the call being served (calls are serialized, so there is at most one). */
  private callDb: Db | null = null;
  /** The branch's live stream: hibernatable WebSockets this object accepted. */
  private readonly live: LiveSockets;
  /** Bots waiting for their turn (`waitForTurn`), woken by `TurnChanges.keep` when it begins. */
  private readonly waiters = new TurnWaiters();
  private readonly turns: TurnChanges;
  private readonly queue: TurnQueue;
  private readonly submissions: Submissions;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.live = new LiveSockets(ctx);
    // The parts read the call's database and the env through the room at each use, never a copy of their own.
    const self = this;
    const host: RoomHost = {
      get db() {
        return self.db;
      },
      get env() {
        return self.env;
      },
      guarded: (fn) => this.guarded(fn),
    };
    this.turns = new TurnChanges(host, ctx.storage, this.live, this.waiters);
    this.queue = new TurnQueue(host, this.turns, this.waiters);
    this.submissions = new Submissions(host, this.turns, this.queue);
  }

  /**
   * `GET /branches/{id}/live` (the Worker checked the upgrade, the origin, `?after=`, the read limit and that the
   * branch exists): within the bounds, accept the socket, send `hello` and the segments after `?after=`, inside
   * the lock, so no live event can slip between them.
   */
  override async fetch(request: Request): Promise<Response> {
    const socket = JSON.parse(request.headers.get(SOCKET_HEADER) ?? "null") as SocketRequest | null;
    if (!socket) return new Response(null, { status: 400 });
    return this.serialized(async () => {
      const refused = this.live.refusal(socket);
      if (refused) return refused;
      const room = await this.guarded(() => this.load(socket.branchId)).catch(() => null);
      if (!room) return new Response(null, { status: 404 });
      return this.live.accept(socket, { turn: room.turn, lastSequence: room.nextSeq - 1, db: this.db });
    });
  }

  /** Only `ping` is read (answered `pong` by the runtime without waking the object); anything else costs a counter. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    this.live.received(ws, message);
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.live.closed(ws, code, reason);
  }

  /** The story was archived: tell the live stream and close it (no load, no storage: a room nobody watches stays empty). */
  archived(branchId: string): Promise<Outcome<{ sockets: number }>> {
    return this.serialized(async () => {
      this.waiters.wakeAll((botId) => this.turnWait(branchId, botId));
      return { ok: true, value: { sockets: this.live.archive(branchId) } };
    });
  }

  /**
   * A moderator hid or restored something on this branch, after D1 committed it: the live stream gets the event
   * (`hidden`, `restored`); with `close` (the branch or its story hidden) it is the last one and every socket is
   * closed. No load, no storage, inside the lock so it follows the events before it.
   */
  moderated(event: LiveEvent, close: boolean): Promise<Outcome<{ sockets: number }>> {
    return this.serialized(async () => {
      if (close && this.room) this.room.hidden = true;
      return { ok: true, value: { sockets: close ? this.live.last(event, "hidden") : this.live.broadcast(event) } };
    });
  }

  /**
   * Resolves when `botId`'s turn on this branch begins (at once if it holds it), or after `timeoutMs` with where
   * it stands. The check and the parking happen inside the room's lock, and every turn begins in `TurnChanges.keep` inside
   * the same lock, so no turn can begin unseen between them; the wait itself holds no lock. A bot that is not
   * queued is told to join first (404, as `leave`); a bot that leaves while waiting is answered at once.
   */
  async waitForTurn(branchId: string, botId: string, timeoutMs: number): Promise<Outcome<TurnWait>> {
    let parked = null as Promise<TurnWait> | null;
    const first = await this.run(async () => {
      const now = await this.queue.waitingBot(await this.load(branchId), botId);
      if (!now.your_turn) parked = this.waiters.park(botId, timeoutMs, () => this.turnWait(branchId, botId));
      return now;
    });
    if (!first.ok || !parked) return first;
    return { ...first, value: await parked };
  }

  /**
   * A segment, with where the writer now stands against its tightest limit (`rate`, null without limits) and its
   * inbox event when one was written (`inboxEvent`: someone follows the branch or the writer), for the Worker to hand
   * to the fan-out queue after the answer, outside this lock.
   */
  submit(branchId: string, writer: Writer, content: string, options: SubmitOptions = {}): Promise<Outcome<Submitted>> {
    return this.run(async () => this.submissions.submit(await this.load(branchId), writer, content, options));
  }

  join(branchId: string, bot: { id: string; name: string } & Session, role: Role, idem?: IdempotentRequest): Promise<Outcome<JoinResult>> {
    return this.run(async () => this.queue.join(await this.load(branchId), bot, role, idem));
  }

  /**
   * A suspended bot leaves the queue at once, told to the live stream as `suspended`; a bot its owner retired leaves
   * the same way, told as `left`. Nothing when it is not queued.
   */
  expel(branchId: string, botId: string, change: "suspended" | "left" = "suspended"): Promise<Outcome<ExpelResult>> {
    return this.run(async () => this.queue.expel(await this.load(branchId), botId, change));
  }

  /** A bot leaves the queue (its session: none for a key): only while in good standing, checked in the leave's batch. */
  leave(branchId: string, bot: { id: string } & Session): Promise<Outcome<LeaveResult>> {
    return this.run(async () => this.queue.leave(await this.load(branchId), { id: bot.id, type: "bot", jti: bot.jti, issuedAt: bot.issuedAt }));
  }

  /**
   * The sweeper's nudge for a turn whose deadline passed unnoticed: loading a cold room re-arms its alarm from
   * D1's deadline; a warm room without an alarm gets one.
   */
  wake(branchId: string): Promise<Outcome<{ deadline: number | null }>> {
    return this.run(async () => {
      const { deadline } = (await this.load(branchId)).turn;
      if (deadline !== null && (await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(deadline);
      return { deadline };
    });
  }

  /**
   * The room's view of the turn, for tests and diagnostics: bot ids in order, the holder, the deadline, and until
   * when each bot sitting out (by id) sits out; null when cold.
   */
  turnSnapshot(): { members: string[]; currentTurn: string | null; deadline: number | null; sittingOut: Record<string, number> } | null {
    const room = this.room;
    if (!room) return null;
    const { members, current, deadline } = room.turn;
    const sittingOut = Object.fromEntries(members.flatMap((m) => (m.sitsOutUntil === null ? [] : [[m.botId, m.sitsOutUntil]])));
    return { members: members.map((m) => m.botId), currentTurn: current, deadline, sittingOut };
  }

  /**
   * The current turn has run out: pass it on; or, with nobody holding it, the first bot sitting out is back: its
   * turn begins (`resumed`). Every turn change re-arms the alarm for the new deadline, so a warm room acts
   * without re-checking the clock. A cold room cannot know that (a crash may have come between D1's commit of a
   * new deadline and its re-arming), so it obeys D1's deadline instead.
   */
  override async alarm(): Promise<void> {
    await this.serialized(async () => {
      const branchId = await this.ctx.storage.get<string>(BRANCH_KEY);
      if (!branchId) return;
      const cold = !this.room;
      const room = await this.guarded(() => this.load(branchId));
      if (cold && room.turn.deadline !== null && room.turn.deadline > Date.now()) return; // load() re-armed it
      await this.queue.timeout(room);
    });
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** One RPC: serialized, on a metered primary session, reporting its D1 work with the outcome. */
  private run<T>(fn: () => Promise<T>): Promise<Outcome<T>> {
    return this.serialized(async () => {
      const counter: D1Counter = { roundTrips: 0, ms: 0 };
      const session = this.env.DB.withSession("first-primary");
      this.callDb = getDb(meteredD1(session, counter));
      try {
        const outcome = await capture(() => this.guarded(fn));
        return { ...outcome, d1: { ...counter, bookmark: session.getBookmark() } };
      } finally {
        this.callDb = null;
      }
    });
  }

  private get db(): Db {
    return this.callDb ?? getDb(this.env.DB);
  }

  /**
   * Runs `fn`; if it fails in a way the room did not decide (D1 unreachable, a batch whose outcome is unknown),
   * the cache is dropped, so the next call reads what D1 really committed.
   */
  private async guarded<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ApiError) && !(err instanceof KeyAlreadyCommitted)) this.room = null;
      throw err;
    }
  }

  /**
   * Cold start: read the room from D1 (`readRoom`, one round trip) and re-arm the alarm for the deadline D1 holds
   * (at once if it has passed). Runs inside the room's lock, which plays the part of `blockConcurrencyWhile`: no
   * other call of this room can observe it half-loaded.
   */
  private async load(branchId: string): Promise<Room> {
    if (this.room) return this.room;
    const room = await readRoom(this.db, branchId);
    // Stored only once D1 has shown the branch exists: a request for an unknown branch leaves no object behind.
    await this.ctx.storage.put(BRANCH_KEY, branchId);
    await this.turns.armAlarm(room.turn.deadline);
    this.room = room;
    return room;
  }

  /** Where `botId` stands on this branch now, as `waitForTurn` answers (the room's cache; nothing when cold). */
  private turnWait(branchId: string, botId: string): TurnWait {
    return this.turns.waitOf(this.room?.turn ?? NO_TURN, branchId, botId);
  }
}
