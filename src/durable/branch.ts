import { DurableObject } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { type Db, getDb, nowIso, oneTrip, rawAll, type rawRun, readOf, runRead, uniqueViolation } from "../db/client";
import { meteredD1 } from "../db/metered";
import { branches, stories } from "../db/schema";
import type { Writer } from "../domain/actor";
import { type LengthRules, checkLength } from "../domain/length";
import { type NewSegment, branchHeadQuery, rowOf, segmentView } from "../domain/segments";
import { type Quota, segmentWrite, writeValues, written } from "../domain/segment-write";
import { type IdempotentRequest, KeyAlreadyCommitted, commit, recordStatements } from "../domain/idempotency";
import { writtenEvents } from "../domain/inbox-events";
import { type WebhookMessage, handOverQuery, outboxStatements, publish, yourTurnMessage } from "../domain/webhook-events";
import { configOf } from "../config";
import type { Role } from "../schemas/fields";
import type { Env } from "../env";
import { ApiError, notFound, storyArchived, validationError } from "../lib/errors";
import { type RateState, limitError } from "../lib/limit-error";
import { type SegmentLimits, type SegmentUsage, perBranchCounts, refusalOf, tightest } from "../domain/segment-quota";
import type { D1Counter } from "../lib/meter";
import {
  type Member,
  type Refusal,
  type TurnEvent,
  type TurnState,
  NO_TURN,
  estimatedWait,
  holder,
  inTurnMode,
  isoOrNull,
  queueView,
  resumesAt,
  sitsOut,
  transition,
  turnOrder,
} from "../turns/rules";
import { memberStatement, queueQuery, turnColumnsStatement, turnStateOf } from "../turns/store";
import type { LiveEvent, TurnReason } from "../domain/live-events";
import { SOCKET_HEADER, type SocketRequest } from "../domain/live-socket";
import { NO_SESSION, type Session, type StandingRow, type Subject, inGoodStanding, refuseUnless, standingQuery, verdictOf } from "../domain/standing";
import { closedError, closedRead, takesWrites } from "../domain/writable";
import { LiveSockets, liveQueue, liveSegment, liveTurn } from "./live";
import { type Outcome, capture } from "./result";
import { type TurnWait, TurnWaiters } from "./turn-waiters";

/** What the room keeps about its branch: where the next segment goes, the story's length rules, the turn. */
interface Room {
  branchId: string;
  storyId: string;
  /** Who created the branch: only they (or an admin) may open it with a starter segment. */
  creatorId: string;
  /** sequence_order of the fork point: the branch has no segments of its own while nextSeq is just after it. */
  forkSequence: number;
  rules: LengthRules;
  nextSeq: number;
  lastSegmentId: string | null;
  /** join_seq of the latest member ever queued; join order is kept by increasing it. */
  joinSeq: number;
  turn: TurnState;
  /**
   * A moderator hid the branch or its story, as D1 said on load or `moderated` told since. Only a hint of when to
   * ask D1 (a restore tells no room): `refuseIfHidden` confirms it before refusing anything.
   */
  hidden: boolean;
}

/**
 * A transition the rule allowed, with the `your_turn` event of the turn it begins (if any). `probe` is the
 * statement of its batch that says whether the event goes to the queue (`handOverQuery`); `handOver` its answer
 * once the batch ran (unknown: the event is handed over).
 */
type Applied = Extract<ReturnType<typeof transition>, { ok: true }> & { event: WebhookMessage | null; probe?: unknown; handOver?: boolean };

export interface SubmitOptions {
  /** The writer opens the branch with a starter segment (exempt from min_length). */
  isStarter?: boolean;
  idempotency?: IdempotentRequest;
  /** The writer's segment limits, counted in the write's own batch (none for admins). */
  limits?: SegmentLimits | null;
  /** The writer's session (a JWT's; none for a key or token): its standing is checked in the write's batch. */
  session?: Session;
}

type SegmentView = ReturnType<typeof segmentView>;

/** The answer to a submission: the record, nested again as `segment` for older clients, and whose turn it is. */
export type SubmitResult = SegmentView & { segment: SegmentView; next_bot: { id: string; name: string } | null };

/** What a submission gives the Worker: the answer, the writer's tightest limit, and the inbox event to hand over. */
export interface Submitted {
  data: SubmitResult;
  rate: RateState | null;
  inboxEvent: string | null;
}

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

export type { TurnWait } from "./turn-waiters";

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

const BRANCH_KEY = "branch_id";

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
  /** Bots waiting for their turn (`waitForTurn`), woken by `keep()` when it begins. */
  private readonly waiters = new TurnWaiters();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.live = new LiveSockets(ctx);
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
   * A moderator hid or restored something on this branch (issue 23), after D1 committed it: the live stream gets
   * the event (`hidden`, `restored`); with `close` (the branch or its story hidden) it is the last one and every
   * socket is closed. No load, no storage, inside the lock so it follows the events before it.
   */
  moderated(event: LiveEvent, close: boolean): Promise<Outcome<{ sockets: number }>> {
    return this.serialized(async () => {
      if (close && this.room) this.room.hidden = true;
      return { ok: true, value: { sockets: close ? this.live.last(event, "hidden") : this.live.broadcast(event) } };
    });
  }

  /**
   * Resolves when `botId`'s turn on this branch begins (at once if it holds it), or after `timeoutMs` with where
   * it stands. The check and the parking happen inside the room's lock, and every turn begins in `keep()` inside
   * the same lock, so no turn can begin unseen between them; the wait itself holds no lock. A bot that is not
   * queued is told to join first (404, as `leave`); a bot that leaves while waiting is answered at once.
   */
  async waitForTurn(branchId: string, botId: string, timeoutMs: number): Promise<Outcome<TurnWait>> {
    let parked = null as Promise<TurnWait> | null;
    const first = await this.run(async () => {
      const room = await this.load(branchId);
      await this.refuseIfHidden(room);
      if (!room.turn.members.some((m) => m.botId === botId)) {
        throw new ApiError("NOT_FOUND", "This bot is not in the branch's queue: join it first");
      }
      const now = this.turnWait(branchId, botId);
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
    return this.run(() => this.doSubmit(branchId, writer, content, options));
  }

  join(branchId: string, bot: { id: string; name: string } & Session, role: Role, idem?: IdempotentRequest): Promise<Outcome<JoinResult>> {
    return this.run(() => this.doJoin(branchId, bot, role, idem));
  }

  /**
   * A suspended bot leaves the queue at once (issue 23): as a leave (the turn passes, the next bot's `your_turn`
   * is in the outbox with the change), told to the live stream as `suspended`. Nothing when it is not queued.
   * A bot its owner retired (issue 57) leaves the same way, told as `left`.
   */
  expel(branchId: string, botId: string, change: "suspended" | "left" = "suspended"): Promise<Outcome<ExpelResult>> {
    return this.run(async () => {
      const room = await this.load(branchId);
      const leaving = room.turn.members.find((m) => m.botId === botId);
      if (!leaving) return { branch_id: branchId, bot_id: botId, expelled: false };
      const applied = this.decide(room, { type: "leave", botId });
      await this.commitTurn(room, applied);
      await this.keep(room, applied, { reason: change, events: [liveQueue(branchId, change, leaving, applied.state)] });
      this.waiters.wake(botId, this.turnWait(branchId, botId));
      return { branch_id: branchId, bot_id: botId, expelled: true };
    });
  }

  /** A bot leaves the queue (its session: none for a key): only while in good standing, checked in the leave's batch. */
  leave(branchId: string, bot: { id: string } & Session): Promise<Outcome<LeaveResult>> {
    return this.run(() => this.doLeave(branchId, { id: bot.id, type: "bot", jti: bot.jti, issuedAt: bot.issuedAt }));
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
      const reason = room.turn.current === null ? "resumed" : "timeout";
      const applied = this.decide(room, { type: "timeout" });
      if (!applied.writes.turn) return;
      await this.guarded(() => this.commitTurn(room, applied));
      await this.keep(room, applied, { reason });
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

  /** Applies the turn rule now; a refusal becomes the caller's error. */
  private decide(room: Room, event: TurnEvent, botId = ""): Applied {
    const result = transition(room.turn, event, Date.now(), configOf(this.env).turnTimeoutMs);
    if (!result.ok) throw refusalError(result.refusal, botId);
    return { ...result, event: result.announce ? yourTurnMessage(result.announce.botId, room.branchId) : null };
  }

  /**
   * Cold start: read the branch, its story's rules, its head and its queue from D1 in one round trip, and re-arm
   * the alarm for the deadline D1 holds (at once if it has passed). Runs inside the room's lock, which plays the
   * part of `blockConcurrencyWhile`: no other call of this room can observe it half-loaded.
   */
  private async load(branchId: string): Promise<Room> {
    if (this.room) return this.room;
    const [[row], [head], queued] = await this.db.batch([
      this.db
        .select({
          branch: branches,
          language: stories.language,
          minLength: stories.minLength,
          maxLength: stories.maxLength,
          // Named apart: in a batch D1 answers rows as objects, where two columns named `hidden_at` would be one.
          storyHiddenAt: sql<string | null>`${stories.hiddenAt}`.as("story_hidden_at"),
        })
        .from(branches)
        .innerJoin(stories, eq(stories.id, branches.storyId))
        .where(eq(branches.id, branchId))
        .limit(1),
      branchHeadQuery(this.db, branchId),
      queueQuery(this.db, branchId),
    ]);
    if (!row) throw notFound("Branch");
    const { branch, storyHiddenAt, ...rules } = row;
    const room: Room = {
      branchId,
      storyId: branch.storyId,
      creatorId: branch.creatorId,
      forkSequence: branch.forkSequence,
      rules,
      nextSeq: (head?.sequenceOrder ?? branch.forkSequence) + 1,
      lastSegmentId: head?.id ?? branch.forkAtSegmentId,
      joinSeq: queued.at(-1)?.joinSeq ?? 0,
      turn: turnStateOf(branch, queued),
      hidden: branch.hiddenAt !== null || storyHiddenAt !== null,
    };
    // Stored only once D1 has shown the branch exists: a request for an unknown branch leaves no object behind.
    await this.ctx.storage.put(BRANCH_KEY, branchId);
    await this.armAlarm(room.turn.deadline);
    this.room = room;
    return room;
  }

  private async armAlarm(deadline: number | null) {
    if (deadline === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(deadline);
  }

  /**
   * D1 has committed the transition: keep it, tell the live stream (the change's own events, then the turn that
   * began), re-arm the alarm for the new deadline and hand the `your_turn` to the queue unless its probe said
   * nobody will act on it (`handOver`). Called once per commit, inside the room's lock, so live events go out in
   * commit order.
   */
  private async keep(room: Room, applied: Applied, { reason, events = [] }: { reason: TurnReason; events?: LiveEvent[] }): Promise<void> {
    room.turn = applied.state;
    for (const event of events) this.live.broadcast(event);
    if (!applied.writes.turn) return;
    this.live.broadcast(liveTurn(room.branchId, applied.state, reason));
    const begun = holder(applied.state);
    if (begun) this.waiters.wake(begun.botId, this.turnWait(room.branchId, begun.botId));
    await this.armAlarm(applied.state.deadline);
    if (applied.event && applied.handOver !== false) await this.announceTurn(applied.event);
  }

  /**
   * The one place a turn begins (after a turn pass, a timeout, a join into an empty queue or one where every bot
   * sits out, the current bot leaving or expelled, a limit passing the holder's turn on, or the first bot sitting
   * out coming back): its `your_turn` was written to the outbox with the change (for a bot with a receiver); now
   * hand it to the queue.
   */
  private async announceTurn(event: WebhookMessage): Promise<void> {
    await publish(this.env.WEBHOOKS, this.db, [event]);
  }

  /**
   * The statements of a transition: the queue member's change, the turn columns, and the outbox row of the turn it
   * begins with its hand-over probe (`applied.probe`). `condition` (`AND …`) ties them to the batch's own change (the
   * segment written, the leaver's standing); a join's member INSERT is that change itself, with `memberCondition`
   * (the branch taking writes, the bot's standing), and the rest conditional on its row.
   */
  private turnStatements(room: Room, applied: Applied, condition = sql``, memberCondition = condition) {
    const { member, turn } = applied.writes;
    if (applied.event) applied.probe = handOverQuery(this.db, applied.event);
    return [
      ...(member ? [memberStatement(this.db, room, member, memberCondition)] : []),
      ...(member || turn ? [turnColumnsStatement(this.db, room.branchId, applied.state, condition)] : []),
      ...(applied.event ? [...outboxStatements(this.db, [applied.event], condition), applied.probe] : []),
    ];
  }

  /** A transition's statements alone, in one batch (its answer to the probe noted). */
  private async commitTurn(room: Room, applied: Applied): Promise<void> {
    const statements = this.turnStatements(room, applied);
    heard(applied, statements, await this.db.batch(statements as [ReturnType<typeof rawRun>]));
  }

  /** Where `botId` stands on this branch now, as `waitForTurn` answers (the room's cache; nothing when cold). */
  private turnWait(branchId: string, botId: string): TurnWait {
    const turn = this.room?.turn ?? NO_TURN;
    const me = turn.members.find((m) => m.botId === botId);
    const now = Date.now();
    return {
      your_turn: !!me && turn.current === botId,
      branch_id: branchId,
      queued: !!me,
      current_turn: queueView(turn, now).current_turn,
      estimated_wait: estimatedWait(turn, botId, configOf(this.env).turnTimeoutMs, now),
      sits_out_until: me && sitsOut(me, now) ? isoOrNull(me.sitsOutUntil) : null,
      resumes_at: isoOrNull(resumesAt(turn)),
    };
  }

  /**
   * The writer's standing as a condition of a write's own INSERT (issue 23): a write reaching the room with no D1
   * trip of the Worker's own is still refused by its batch, which then writes nothing.
   */
  private inGoodStanding(subject: Subject) {
    return inGoodStanding(subject, { claimed: subject.type, composed: true }, nowIso());
  }

  /**
   * Throws why a write's batch wrote nothing, when it was the writer's standing or the branch no longer taking
   * writes (hidden: 404; archived: 403, `takesWrites`). Both read alone in one round trip, on a refusal only.
   */
  private async explainRefusal(subject: Subject, room: Room): Promise<void> {
    const [verdict, closed] = await oneTrip(this.db, this.standingRead(subject), closedRead(this.db, writeTarget(room)));
    refuseUnless(verdict);
    if (closed) throw closed;
  }

  /** Throws the refusal when the account is not in good standing (read alone: a refused leave's trip only). */
  private async refuseByStanding(subject: Subject): Promise<void> {
    refuseUnless(await runRead(this.db, this.standingRead(subject)));
  }

  /**
   * A hidden branch (or story) takes no joins or segments and names no turn: 404, as reading it is (issue 56), before
   * the turn rule could answer from memory (`NOT_YOUR_TURN` with the queue, an already-queued join). Asks D1 only
   * when the room believes it hidden; a restore since (no room is told) clears the belief.
   */
  private async refuseIfHidden(room: Room): Promise<void> {
    if (!room.hidden) return;
    const closed = await closedError(this.db, writeTarget(room), { evenArchived: true });
    if (closed) throw closed;
    room.hidden = false;
  }

  /** The writer's standing as a read (`oneTrip`, `runRead`): its verdict. */
  private standingRead(subject: Subject) {
    return readOf([rawAll<StandingRow>(this.db, standingQuery(subject))], ([[row]]) =>
      verdictOf(row ?? null, { claimed: subject.type, composed: true }, nowIso()),
    );
  }

  private async doSubmit(branchId: string, writer: Writer, content: string, options: SubmitOptions) {
    const room = await this.load(branchId);
    await this.refuseIfHidden(room);
    if (options.isStarter) this.checkStarter(room, writer);
    const length = checkLength(content, options.isStarter ? { ...room.rules, minLength: 0 } : room.rules);
    const applied = this.decide(room, { type: "submit", writer }, writer.id);
    const now = Date.now();
    // In turn mode the queue paces the branch; the per-branch limit (a bot's) applies only to writes outside it.
    const quota = options.limits ? { limits: options.limits, perBranch: perBranchCounts(options.limits, inTurnMode(room.turn, writer.type)), now } : null;
    const seg: NewSegment = {
      id: crypto.randomUUID(),
      branchId,
      storyId: room.storyId,
      author: writer,
      content,
      contentLength: length,
      sequenceOrder: room.nextSeq,
      createdAt: new Date(now).toISOString(),
      parentSegmentId: room.lastSegmentId,
      isStarter: options.isStarter,
      kind: options.isStarter ? "fork" : "continuation",
    };
    const { data, usage, inboxEvent } = await this.writeSegment(room, seg, applied, options.idempotency, quota, options.session ?? NO_SESSION);
    room.nextSeq = seg.sequenceOrder + 1;
    room.lastSegmentId = seg.id;
    await this.keep(room, applied, { reason: "submitted", events: [liveSegment(branchId, data.segment, data.next_bot)] });
    return { data, rate: quota && usage ? tightest(usage, quota.limits, quota.perBranch, now) : null, inboxEvent };
  }

  /**
   * A write its batch refused, once `explainRefusal` found nothing else: a limit (a queued bot refused at its own turn
   * sits out until it may write again, and the turn passes at once, so the branch is not held up for the turn
   * timeout). Else only a race: what refused it in the batch (the story archived, it or the branch hidden, the
   * writer suspended) was undone before the read, and the write is answered as archived though the story is active.
   */
  private async refused(room: Room, writer: Writer, quota: Quota | null, usage: SegmentUsage | undefined): Promise<never> {
    const kept = room.turn.members.find((m) => m.botId === writer.id)?.sitsOutUntil ?? null;
    const refusal = quota && usage ? refusalOf(usage, quota.limits, quota.perBranch, quota.now, kept) : null;
    if (!refusal) throw storyArchived();
    throw limitError(refusal, writer.type === "bot" ? await this.sitOut(room, writer.id, refusal.writableAt) : {});
  }

  /**
   * A queued bot was refused by a limit until `until`: it sits out (the rotation skips it) and, if it held the
   * turn, the turn passes at once to the next bot not sitting out, or to nobody until the first comes back. A bot
   * refused again while it sits out changes nothing: no write, no event, no `your_turn`. The 429 tells it
   * `turn_passed`, `next_bot` (null when nobody holds the turn) and `sits_out_until`; nothing for a bot not queued.
   */
  private async sitOut(room: Room, botId: string, until: number): Promise<Record<string, unknown>> {
    const member = room.turn.members.find((m) => m.botId === botId);
    if (!member) return {};
    const held = room.turn.current === botId;
    const applied = this.decide(room, { type: "limited", botId, until });
    if (applied.writes.member) {
      await this.commitTurn(room, applied);
      const events = [liveQueue(room.branchId, "sits_out", { ...member, sitsOutUntil: until }, applied.state)];
      await this.keep(room, applied, { reason: "limited", events });
    }
    const next = holder(room.turn);
    const sitsOutUntil = room.turn.members.find((m) => m.botId === botId)?.sitsOutUntil ?? until;
    return { turn_passed: held, next_bot: next && { id: next.botId, name: next.name }, sits_out_until: isoOrNull(sitsOutUntil) };
  }

  /** A starter opens a branch: only while it has no segments of its own, and only by its creator or an admin. */
  private checkStarter(room: Room, writer: Writer) {
    if (room.nextSeq !== room.forkSequence + 1) {
      throw validationError([{ field: "is_starter", issue: "the branch already has segments of its own; only its first segment can be a starter" }]);
    }
    if (writer.type !== "admin" && writer.id !== room.creatorId) {
      throw validationError([{ field: "is_starter", issue: "only the branch's creator (or an admin) may open it with a starter" }]);
    }
  }

  private submitResult(seg: NewSegment, applied: Applied): SubmitResult {
    const segment = segmentView(rowOf(seg));
    const next = holder(applied.state);
    return { ...segment, segment, next_bot: next ? { id: next.botId, name: next.name } : null };
  }

  /**
   * Segment, log, counters, turn, outbox and idempotency record in one batch; resyncs the sequence once if D1 is
   * ahead of the room (it cannot be, unless a writer outside the room wrote to this branch).
   */
  private async writeSegment(
    room: Room,
    seg: NewSegment,
    applied: Applied,
    idem: IdempotentRequest | undefined,
    quota: Quota | null,
    session: Session,
  ): Promise<{ data: SubmitResult; usage?: SegmentUsage; inboxEvent: string | null }> {
    const subject: Subject = { id: seg.author.id, type: seg.author.type, ...session };
    for (let attempt = 0; ; attempt++) {
      try {
        const data = this.submitResult(seg, applied);
        // The writer's standing and limits are conditions of the segment's own INSERT (no statement of their own):
        // a refused write inserts nothing, and every later statement is conditional on the segment being there.
        const write = segmentWrite(this.db, writeValues(seg, subject, quota, configOf(this.env).inbox));
        const ifWritten = written(seg.id);
        const statements = [
          ...write.statements,
          ...this.turnStatements(room, applied, ifWritten),
          ...recordStatements(this.db, idem, { status: 201, data }, ifWritten),
          ...(write.usage ? [write.usage] : []),
        ];
        const results = await commit(() => this.db.batch(statements as [ReturnType<typeof rawRun>]));
        const inserted = results[0] as D1Result;
        const usage = quota ? (results.at(-1) as unknown as SegmentUsage[])[0] : undefined;
        if (inserted.meta.changes !== 1) {
          await this.explainRefusal(subject, room); // read alone, on a refusal only
          return await this.refused(room, seg.author, quota, usage);
        }
        heard(applied, statements, results);
        return { data, usage, inboxEvent: writtenEvents(statements, results, [{ id: seg.id, statement: write.event }])[0] ?? null };
      } catch (err) {
        if (attempt > 0 || !uniqueViolation(err)?.includes("segments")) throw err;
        const [head] = await branchHeadQuery(this.db, seg.branchId);
        seg.sequenceOrder = (head?.sequenceOrder ?? 0) + 1;
        seg.parentSegmentId = head?.id ?? room.lastSegmentId;
      }
    }
  }

  private async doJoin(branchId: string, bot: { id: string; name: string } & Session, role: Role, idem?: IdempotentRequest): Promise<JoinResult> {
    const room = await this.load(branchId);
    await this.refuseIfHidden(room);
    const member: Member = { botId: bot.id, name: bot.name, role, joinSeq: room.joinSeq + 1, joinedAt: new Date().toISOString(), sitsOutUntil: null };
    const applied = this.decide(room, { type: "join", member });
    const subject: Subject = { id: bot.id, type: "bot", jti: bot.jti, issuedAt: bot.issuedAt };
    if (!applied.writes.member) {
      // Already queued. With a key, record the answer, only while the bot is in good standing (as a new member's
      // INSERT is; without a key nothing is written, and the Worker checks a JWT's standing then). If this key was
      // committed by the join that queued the bot (its answer lost in a crash), that batch fails and the original
      // 201 is replayed instead.
      const view = joinView(room.branchId, room.turn, bot.id);
      const [record] = recordStatements(this.db, idem, { status: 200, data: view }, sql`AND ${this.inGoodStanding(subject)}`);
      if (record && ((await commit(() => this.db.batch([record])))[0] as D1Result).meta.changes !== 1) await this.refuseByStanding(subject);
      return { created: false, ...view };
    }
    const view = joinView(room.branchId, applied.state, bot.id);
    const joined = sql`AND EXISTS (SELECT 1 FROM branch_members WHERE branch_id = ${branchId} AND bot_id = ${bot.id})`;
    const statements = [
      ...this.turnStatements(room, applied, joined, sql`AND ${takesWrites(writeTarget(room))} AND ${this.inGoodStanding(subject)}`),
      ...recordStatements(this.db, idem, { status: 201, data: view }, joined),
    ];
    const results = await commit(() => this.db.batch(statements as [ReturnType<typeof rawRun>]));
    const inserted = results[0] as D1Result;
    if (inserted.meta.changes !== 1) {
      await this.explainRefusal(subject, room); // read alone, on a refusal only
      throw storyArchived();
    }
    room.joinSeq = member.joinSeq;
    heard(applied, statements, results);
    await this.keep(room, applied, { reason: "joined", events: [liveQueue(branchId, "joined", member, applied.state)] });
    return { created: true, ...view };
  }

  /**
   * The member's DELETE, the turn columns and the next bot's `your_turn` are each conditional on the leaver's
   * standing (issue 56: a logged-out or suspended session neither leaves nor passes the turn). Its standing is
   * read alone only when the leave is refused: by the rule (not queued) or by its batch.
   */
  private async doLeave(branchId: string, subject: Subject, again = false): Promise<LeaveResult> {
    const botId = subject.id;
    const room = await this.load(branchId);
    const leaving = room.turn.members.find((m) => m.botId === botId);
    if (!leaving) await this.refuseByStanding(subject);
    const applied = this.decide(room, { type: "leave", botId });
    const statements = this.turnStatements(room, applied, sql`AND ${this.inGoodStanding(subject)}`);
    const results: unknown[] = await this.db.batch(statements as [ReturnType<typeof rawRun>]);
    // The turn columns' UPDATE (after the member's DELETE) touched the branch's row only if the standing held.
    if ((results[1] as D1Result).meta.changes !== 1) {
      await this.refuseByStanding(subject);
      // Restored between the batch and the read: nothing was written, so once again.
      if (again) throw new Error("a leave's batch wrote nothing for a bot in good standing");
      return this.doLeave(branchId, subject, true);
    }
    heard(applied, statements, results);
    await this.keep(room, applied, { reason: "left", events: [liveQueue(branchId, "left", leaving!, applied.state)] });
    this.waiters.wake(botId, this.turnWait(branchId, botId));
    return { branch_id: branchId, bot_id: botId, left: true, queue_length: room.turn.members.length, current_turn: room.turn.current };
  }
}

/** What the room's writes go into: its branch, in its story (`takesWrites`). */
const writeTarget = (room: Room) => ({ storyId: room.storyId, branchId: room.branchId });

/** A transition's batch ran: its probe's answer says whether the turn it begins is handed to the queue. */
function heard(applied: Applied, statements: unknown[], results: unknown[]): void {
  const at = statements.indexOf(applied.probe);
  if (at >= 0) applied.handOver = (results[at] as unknown[]).length > 0;
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
