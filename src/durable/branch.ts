import { DurableObject } from "cloudflare:workers";
import { eq, sql } from "drizzle-orm";
import { type Db, getDb, rawRun, uniqueViolation } from "../db/client";
import { meteredD1 } from "../db/metered";
import { branches, stories } from "../db/schema";
import type { Writer } from "../domain/actor";
import { type LengthRules, checkLength } from "../domain/length";
import { type NewSegment, branchHeadQuery, rowOf, segmentStatements, segmentView } from "../domain/segments";
import { publish, yourTurnMessage } from "../domain/webhook-events";
import { configOf } from "../config";
import type { Env } from "../env";
import { ApiError, notFound, storyArchived } from "../lib/errors";
import type { D1Counter } from "../lib/meter";
import { type Member, type Refusal, type TurnEvent, type TurnState, holder, transition, turnOrder } from "../turns/rules";
import { memberStatement, queueQuery, turnColumnsStatement, turnStateOf } from "../turns/store";
import { type Outcome, capture } from "./result";

/** What the room keeps about its branch: where the next segment goes, the story's length rules, the turn. */
interface Room {
  branchId: string;
  storyId: string;
  rules: LengthRules;
  nextSeq: number;
  lastSegmentId: string | null;
  /** join_seq of the latest member ever queued; join order is kept by increasing it. */
  joinSeq: number;
  turn: TurnState;
}

type Applied = Extract<ReturnType<typeof transition>, { ok: true }>;

export type Role = "narrator" | "challenger" | "voice";

export interface SubmitResult {
  segment: ReturnType<typeof segmentView>;
  next_bot: { id: string; name: string } | null;
}

export interface JoinResult {
  created: boolean;
  branch_id: string;
  bot_id: string;
  role: string;
  your_turn_order: number;
  join_order: number;
  queue_length: number;
  current_turn: string | null;
  joined_at: string;
}

export interface LeaveResult {
  branch_id: string;
  bot_id: string;
  left: true;
  queue_length: number;
  current_turn: string | null;
}

const STATE_KEY = "room.v2";

function refusalError(refusal: Refusal, botId: string): ApiError {
  if (refusal.reason === "not_queued") return new ApiError("NOT_FOUND", "This bot is not in the branch's queue");
  const message = refusal.queued ? "It is not your turn on this branch" : "Join this branch's queue first: it is in turn mode";
  return new ApiError("NOT_YOUR_TURN", message, { current_turn: refusal.current, your_bot_id: botId, estimated_wait: refusal.estimatedWait });
}

/**
 * One per branch (named by its id): it serializes the branch's joins, leaves, segment submissions and turn
 * timeouts. The rule itself is `transition` (src/turns/rules.ts); the room loads the state, applies the rule,
 * writes what it returns to D1 in one batch with the change, then keeps it and announces the turn that begins.
 */
export class BranchRoom extends DurableObject<Env> {
  /**
   * Why an explicit lock: awaiting D1 opens the input gate, so without it a second request could read the
   * room between our read and our write. Every call runs after the previous one has settled.
   */
  private tail: Promise<unknown> = Promise.resolve();
  private room: Room | null = null;
  /** The database of the call being served (calls are serialized, so there is at most one). */
  private callDb: Db | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  }

  submit(branchId: string, writer: Writer, content: string): Promise<Outcome<SubmitResult>> {
    return this.run(() => this.doSubmit(branchId, writer, content));
  }

  join(branchId: string, bot: { id: string; name: string }, role: Role): Promise<Outcome<JoinResult>> {
    return this.run(() => this.doJoin(branchId, bot, role));
  }

  leave(branchId: string, botId: string): Promise<Outcome<LeaveResult>> {
    return this.run(() => this.doLeave(branchId, botId));
  }

  /** The room's view of the turn, for tests and diagnostics: bot ids in order, the holder, the deadline. */
  turnSnapshot(): { members: string[]; currentTurn: string | null; deadline: number | null } | null {
    const room = this.stored();
    return room && { members: room.turn.members.map((m) => m.botId), currentTurn: room.turn.current, deadline: room.turn.deadline };
  }

  /** The current turn has run out: pass it on. Armed only for the current deadline (every turn change re-arms it). */
  override async alarm(): Promise<void> {
    await this.serialized(async () => {
      const room = this.stored();
      if (!room) return;
      const applied = this.decide(room, { type: "timeout" });
      if (!applied.writes.turn) return;
      await this.db.batch([turnColumnsStatement(this.db, room.branchId, applied.state)]);
      await this.keep(room, applied);
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
        const outcome = await capture(fn);
        return { ...outcome, d1: { ...counter, bookmark: session.getBookmark() } };
      } finally {
        this.callDb = null;
      }
    });
  }

  private get db(): Db {
    return this.callDb ?? getDb(this.env.DB);
  }

  /** Applies the turn rule now; a refusal becomes the caller's error. */
  private decide(room: Room, event: TurnEvent, botId = ""): Applied {
    const result = transition(room.turn, event, Date.now(), configOf(this.env).turnTimeoutMs);
    if (!result.ok) throw refusalError(result.refusal, botId);
    return result;
  }

  private stored(): Room | null {
    if (this.room) return this.room;
    const row = this.ctx.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", STATE_KEY).toArray()[0];
    this.room = row ? (JSON.parse(row.value) as Room) : null;
    return this.room;
  }

  private persist(room: Room): void {
    this.room = room;
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", STATE_KEY, JSON.stringify(room));
  }

  /** First use: read the branch, its story's rules, its head and its queue from D1, in one round trip. */
  private async load(branchId: string): Promise<Room> {
    const existing = this.stored();
    if (existing) return existing;
    const [[row], [head], queued] = await this.db.batch([
      this.db
        .select({ branch: branches, language: stories.language, minLength: stories.minLength, maxLength: stories.maxLength })
        .from(branches)
        .innerJoin(stories, eq(stories.id, branches.storyId))
        .where(eq(branches.id, branchId))
        .limit(1),
      branchHeadQuery(this.db, branchId),
      queueQuery(this.db, branchId),
    ]);
    if (!row) throw notFound("Branch");
    const { branch, ...rules } = row;
    const room: Room = {
      branchId,
      storyId: branch.storyId,
      rules,
      nextSeq: (head?.sequenceOrder ?? branch.forkSequence) + 1,
      lastSegmentId: head?.id ?? branch.forkAtSegmentId,
      joinSeq: queued.at(-1)?.joinSeq ?? 0,
      turn: turnStateOf(branch, queued),
    };
    this.persist(room);
    return room;
  }

  /** D1 has taken the transition: keep it, re-arm the alarm for the new deadline, announce whose turn began. */
  private async keep(room: Room, applied: Applied): Promise<void> {
    room.turn = applied.state;
    this.persist(room);
    if (!applied.writes.turn) return;
    if (applied.state.deadline === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(applied.state.deadline);
    if (applied.announce) await this.announceTurn(room, applied.announce);
  }

  /**
   * The one place a turn begins (after a turn pass, a timeout, a join into an empty queue, or the current bot
   * leaving): queue the `your_turn` webhook. The consumer builds its context and delivers it.
   */
  private async announceTurn(room: Room, bot: Member): Promise<void> {
    await publish(this.env.WEBHOOKS, [yourTurnMessage(bot.botId, room.branchId)]);
  }

  /** The queue member and turn-column statements of a transition; `condition` ties them to the batch's change. */
  private turnStatements(room: Room, applied: Applied, condition?: ReturnType<typeof sql>) {
    const { member, turn } = applied.writes;
    return [
      ...(member ? [memberStatement(this.db, room, member)] : []),
      ...(member || turn ? [turnColumnsStatement(this.db, room.branchId, applied.state, condition)] : []),
    ];
  }

  private async doSubmit(branchId: string, writer: Writer, content: string): Promise<SubmitResult> {
    const room = await this.load(branchId);
    const length = checkLength(content, room.rules);
    const applied = this.decide(room, { type: "submit", writer }, writer.id);
    const seg: NewSegment = {
      id: crypto.randomUUID(),
      branchId,
      storyId: room.storyId,
      author: writer,
      content,
      contentLength: length,
      sequenceOrder: room.nextSeq,
      createdAt: new Date().toISOString(),
      parentSegmentId: room.lastSegmentId,
      kind: "continuation",
    };
    await this.writeSegment(room, seg, applied);
    room.nextSeq = seg.sequenceOrder + 1;
    room.lastSegmentId = seg.id;
    await this.keep(room, applied);
    const next = holder(applied.state);
    return { segment: segmentView(rowOf(seg)), next_bot: next ? { id: next.botId, name: next.name } : null };
  }

  /** Segment, log, counters and turn in one batch; resyncs the sequence once if D1 is ahead of the room. */
  private async writeSegment(room: Room, seg: NewSegment, applied: Applied) {
    for (let attempt = 0; ; attempt++) {
      try {
        const written = sql`AND EXISTS (SELECT 1 FROM segments WHERE id = ${seg.id})`;
        const [inserted] = await this.db.batch([
          ...segmentStatements(this.db, seg, { onlyIfStoryActive: true }),
          rawRun(this.db, sql`UPDATE branches SET segments_count = segments_count + 1, updated_at = ${seg.createdAt} WHERE id = ${seg.branchId} ${written}`),
          ...this.turnStatements(room, applied, written),
        ]);
        if (inserted.meta.changes !== 1) throw storyArchived();
        return;
      } catch (err) {
        if (attempt > 0 || !uniqueViolation(err)) throw err;
        const [head] = await branchHeadQuery(this.db, seg.branchId);
        seg.sequenceOrder = (head?.sequenceOrder ?? 0) + 1;
        seg.parentSegmentId = head?.id ?? room.lastSegmentId;
      }
    }
  }

  private async doJoin(branchId: string, bot: { id: string; name: string }, role: Role): Promise<JoinResult> {
    const room = await this.load(branchId);
    const member: Member = { botId: bot.id, name: bot.name, role, joinSeq: room.joinSeq + 1, joinedAt: new Date().toISOString() };
    const applied = this.decide(room, { type: "join", member });
    if (!applied.writes.member) return this.joinView(room, bot.id, { created: false });
    const joined = sql`AND EXISTS (SELECT 1 FROM branch_members WHERE branch_id = ${branchId} AND bot_id = ${bot.id})`;
    const [inserted] = await this.db.batch(this.turnStatements(room, applied, joined) as [ReturnType<typeof rawRun>]);
    if (inserted.meta.changes !== 1) throw storyArchived();
    room.joinSeq = member.joinSeq;
    await this.keep(room, applied);
    return this.joinView(room, bot.id, { created: true });
  }

  private async doLeave(branchId: string, botId: string): Promise<LeaveResult> {
    const room = await this.load(branchId);
    const applied = this.decide(room, { type: "leave", botId });
    await this.db.batch(this.turnStatements(room, applied) as [ReturnType<typeof rawRun>]);
    await this.keep(room, applied);
    return { branch_id: branchId, bot_id: botId, left: true, queue_length: room.turn.members.length, current_turn: room.turn.current };
  }

  private joinView(room: Room, botId: string, { created }: { created: boolean }): JoinResult {
    const m = room.turn.members.find((x) => x.botId === botId)!;
    const order = turnOrder(room.turn, botId);
    return {
      created,
      branch_id: room.branchId,
      bot_id: botId,
      role: m.role,
      your_turn_order: order,
      join_order: order,
      queue_length: room.turn.members.length,
      current_turn: room.turn.current,
      joined_at: m.joinedAt,
    };
  }
}
