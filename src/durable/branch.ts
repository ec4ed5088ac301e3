import { DurableObject } from "cloudflare:workers";
import { asc, desc, eq, sql } from "drizzle-orm";
import { type Db, getDb, rawRun, uniqueViolation } from "../db/client";
import { branches, branchMembers, bots, segments, stories } from "../db/schema";
import { checkLength } from "../domain/length";
import { type NewSegment, rowOf, segmentStatements, segmentView } from "../domain/segments";
import { publish, yourTurnMessage } from "../domain/webhooks";
import type { Actor, Env } from "../env";
import { ApiError, notFound } from "../lib/errors";
import { meteredD1, newMeter } from "../db/metered";
import { type Outcome, capture } from "./result";
import { type Member, estimatedWait, nextAfter } from "./turns";

interface RoomState {
  branchId: string;
  storyId: string;
  language: string;
  minLength: number;
  maxLength: number;
  nextSeq: number;
  lastSegmentId: string | null;
  joinSeq: number;
  currentTurn: string | null;
  deadline: number | null;
}

export type Role = "narrator" | "challenger" | "voice";
export type Writer = Pick<Actor, "id" | "type" | "name">;

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

const archived = () => new ApiError("FORBIDDEN", "This story is archived");
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * One per branch (named by its id). Its own SQLite holds the authoritative turn queue, current turn and next
 * sequence_order; D1 gets the segments and a mirror of the queue. Every mutation runs through `serialized`,
 * because awaiting D1 opens the input gate and would otherwise let requests interleave.
 */
export class BranchRoom extends DurableObject<Env> {
  private tail: Promise<unknown> = Promise.resolve();
  private state: RoomState | null = null;
  /** The database of the RPC being served (calls are serialized, so there is at most one). */
  private op: { db: Db } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS members (bot_id TEXT PRIMARY KEY, name TEXT NOT NULL, role TEXT NOT NULL,
        join_seq INTEGER NOT NULL, joined_at TEXT NOT NULL);`);
  }

  submit(branchId: string, actor: Writer, content: string): Promise<Outcome<SubmitResult>> {
    return this.run(() => this.doSubmit(branchId, actor, content));
  }

  join(branchId: string, bot: { id: string; name: string }, role: Role): Promise<Outcome<JoinResult>> {
    return this.run(() => this.doJoin(branchId, bot, role));
  }

  leave(branchId: string, botId: string): Promise<Outcome<LeaveResult>> {
    return this.run(() => this.doLeave(branchId, botId));
  }

  /** The current turn has run out: pass it to the next bot. Scheduled only for the current deadline. */
  override async alarm(): Promise<void> {
    await this.serialized(async () => {
      const st = this.stored();
      const members = this.members();
      if (!st?.currentTurn || !members.length) return;
      const next = nextAfter(members, st.currentTurn)!;
      await this.passTurn(st, next);
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
      const meter = newMeter();
      const session = this.env.DB.withSession("first-primary");
      this.op = { db: getDb(meteredD1(session, meter)) };
      try {
        const outcome = await capture(fn);
        return { ...outcome, d1: { roundTrips: meter.roundTrips, ms: meter.ms, bookmark: session.getBookmark() } };
      } finally {
        this.op = null;
      }
    });
  }

  private get db(): Db {
    return this.op?.db ?? getDb(this.env.DB);
  }

  private get timeoutMs(): number {
    return Number(this.env.TURN_TIMEOUT_SECONDS ?? 3600) * 1000;
  }

  private stored(): RoomState | null {
    if (this.state) return this.state;
    const row = this.ctx.storage.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'state'").toArray()[0];
    this.state = row ? (JSON.parse(row.value) as RoomState) : null;
    return this.state;
  }

  private save(st: RoomState): void {
    this.state = st;
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES ('state', ?)", JSON.stringify(st));
  }

  private members(): Member[] {
    return this.ctx.storage.sql
      .exec<{ bot_id: string; name: string; role: string; join_seq: number; joined_at: string }>(
        "SELECT * FROM members ORDER BY join_seq",
      )
      .toArray()
      .map((m) => ({ botId: m.bot_id, name: m.name, role: m.role, joinSeq: m.join_seq, joinedAt: m.joined_at }));
  }

  /** First use: read the branch, its story's rules, its head and its queue mirror from D1. */
  private async load(branchId: string): Promise<RoomState> {
    const existing = this.stored();
    if (existing) return existing;
    const [[row], [head], queued] = await this.db.batch([
      this.db
        .select({ branch: branches, language: stories.language, minLength: stories.minLength, maxLength: stories.maxLength })
        .from(branches)
        .innerJoin(stories, eq(stories.id, branches.storyId))
        .where(eq(branches.id, branchId))
        .limit(1),
      this.db.select({ id: segments.id, seq: segments.sequenceOrder }).from(segments).where(eq(segments.branchId, branchId)).orderBy(desc(segments.sequenceOrder)).limit(1),
      this.db
        .select({ botId: branchMembers.botId, name: bots.name, role: branchMembers.role, joinSeq: branchMembers.joinSeq, joinedAt: branchMembers.joinedAt })
        .from(branchMembers)
        .innerJoin(bots, eq(bots.id, branchMembers.botId))
        .where(eq(branchMembers.branchId, branchId))
        .orderBy(asc(branchMembers.joinSeq)),
    ]);
    if (!row) throw notFound("Branch");
    const b = row.branch;
    for (const m of queued) this.putMember(m);
    const st: RoomState = {
      branchId,
      storyId: b.storyId,
      language: row.language,
      minLength: row.minLength,
      maxLength: row.maxLength,
      nextSeq: (head?.seq ?? b.forkSequence) + 1,
      lastSegmentId: head?.id ?? b.forkAtSegmentId,
      joinSeq: queued.at(-1)?.joinSeq ?? 0,
      currentTurn: b.currentTurnBotId,
      deadline: b.turnDeadline ? Date.parse(b.turnDeadline) : null,
    };
    this.save(st);
    return st;
  }

  private putMember(m: Member) {
    this.ctx.storage.sql.exec(
      "INSERT OR REPLACE INTO members (bot_id, name, role, join_seq, joined_at) VALUES (?, ?, ?, ?, ?)",
      m.botId, m.name, m.role, m.joinSeq, m.joinedAt,
    );
  }

  private notYourTurn(st: RoomState, members: Member[], botId: string): ApiError {
    const queued = members.some((m) => m.botId === botId);
    const wait = estimatedWait(members, st.currentTurn, st.deadline, botId, this.timeoutMs / 1000, Date.now());
    const message = queued ? "It is not your turn on this branch" : "Join this branch's queue first: it is in turn mode";
    return new ApiError("NOT_YOUR_TURN", message, { current_turn: st.currentTurn, your_bot_id: botId, estimated_wait: wait });
  }

  private async doSubmit(branchId: string, actor: Writer, content: string): Promise<SubmitResult> {
    const st = await this.load(branchId);
    const length = checkLength(content, st);
    const members = this.members();
    const current = members.find((m) => m.botId === st.currentTurn) ?? null;
    const turnMode = actor.type === "bot" && members.length > 0;
    if (turnMode && st.currentTurn !== actor.id) throw this.notYourTurn(st, members, actor.id);
    const next = turnMode ? nextAfter(members, actor.id) : current;
    const deadline = Date.now() + this.timeoutMs;
    const seg: NewSegment = {
      id: crypto.randomUUID(),
      branchId,
      storyId: st.storyId,
      author: actor,
      content,
      contentLength: length,
      sequenceOrder: st.nextSeq,
      createdAt: new Date().toISOString(),
      parentSegmentId: st.lastSegmentId,
      kind: "continuation",
    };
    await this.writeSegment(st, seg, turnMode ? { bot: next!.botId, deadline } : null);
    st.nextSeq = seg.sequenceOrder + 1;
    st.lastSegmentId = seg.id;
    if (turnMode) await this.beginTurn(st, next!, deadline);
    else this.save(st);
    return { segment: segmentView(rowOf(seg)), next_bot: next ? { id: next.botId, name: next.name } : null };
  }

  /** Writes segment, log and branch counters in one batch; resyncs the sequence once if D1 is ahead of us. */
  private async writeSegment(st: RoomState, seg: NewSegment, turn: { bot: string; deadline: number } | null) {
    for (let attempt = 0; ; attempt++) {
      try {
        const [inserted] = await this.db.batch([
          ...segmentStatements(this.db, seg, true),
          rawRun(this.db, sql`UPDATE branches SET segments_count = segments_count + 1, updated_at = ${seg.createdAt}
            ${turn ? sql`, current_turn_bot_id = ${turn.bot}, turn_deadline = ${iso(turn.deadline)}` : sql``}
            WHERE id = ${seg.branchId} AND EXISTS (SELECT 1 FROM segments WHERE id = ${seg.id})`),
        ]);
        if (inserted.meta.changes !== 1) throw archived();
        return;
      } catch (err) {
        if (attempt > 0 || !uniqueViolation(err)) throw err;
        const [head] = await this.db.select({ id: segments.id, seq: segments.sequenceOrder }).from(segments).where(eq(segments.branchId, seg.branchId)).orderBy(desc(segments.sequenceOrder)).limit(1);
        seg.sequenceOrder = (head?.seq ?? 0) + 1;
        seg.parentSegmentId = head?.id ?? st.lastSegmentId;
      }
    }
  }

  private async doJoin(branchId: string, bot: { id: string; name: string }, role: Role): Promise<JoinResult> {
    const st = await this.load(branchId);
    const members = this.members();
    const found = members.find((m) => m.botId === bot.id);
    if (found) return this.joinView(st, members, found, false);
    const member: Member = { botId: bot.id, name: bot.name, role, joinSeq: st.joinSeq + 1, joinedAt: new Date().toISOString() };
    const first = members.length === 0;
    const deadline = first ? Date.now() + this.timeoutMs : st.deadline;
    const turn = first ? bot.id : st.currentTurn;
    const [inserted] = await this.db.batch([
      rawRun(this.db, sql`INSERT INTO branch_members (branch_id, bot_id, story_id, role, join_seq, joined_at)
        SELECT ${branchId}, ${bot.id}, ${st.storyId}, ${role}, ${member.joinSeq}, ${member.joinedAt}
        WHERE EXISTS (SELECT 1 FROM stories WHERE id = ${st.storyId} AND status = 'active')
        ON CONFLICT (branch_id, bot_id) DO UPDATE SET role = excluded.role, join_seq = excluded.join_seq, joined_at = excluded.joined_at`),
      this.mirrorQueue(branchId, turn, deadline, sql`AND EXISTS (SELECT 1 FROM branch_members WHERE branch_id = ${branchId} AND bot_id = ${bot.id})`),
    ]);
    if (inserted.meta.changes !== 1) throw archived();
    this.putMember(member);
    st.joinSeq = member.joinSeq;
    if (first) await this.beginTurn(st, member, deadline!);
    else this.save(st);
    return this.joinView(st, [...members, member], member, true);
  }

  private async doLeave(branchId: string, botId: string): Promise<LeaveResult> {
    const st = await this.load(branchId);
    const members = this.members();
    if (!members.some((m) => m.botId === botId)) throw new ApiError("NOT_FOUND", "This bot is not in the branch's queue");
    const remaining = members.filter((m) => m.botId !== botId);
    const wasCurrent = st.currentTurn === botId;
    const next = wasCurrent && remaining.length ? nextAfter(members, botId) : null;
    const turn = wasCurrent ? (next?.botId ?? null) : st.currentTurn;
    const deadline = wasCurrent ? (next ? Date.now() + this.timeoutMs : null) : st.deadline;
    await this.db.batch([
      this.db.delete(branchMembers).where(sql`${branchMembers.branchId} = ${branchId} AND ${branchMembers.botId} = ${botId}`),
      this.mirrorQueue(branchId, turn, deadline, sql``),
    ]);
    this.ctx.storage.sql.exec("DELETE FROM members WHERE bot_id = ?", botId);
    if (next) await this.beginTurn(st, next, deadline!);
    else {
      st.currentTurn = turn;
      st.deadline = deadline;
      this.save(st);
      if (!turn) await this.ctx.storage.deleteAlarm();
    }
    return { branch_id: branchId, bot_id: botId, left: true, queue_length: remaining.length, current_turn: turn };
  }

  private mirrorQueue(branchId: string, turn: string | null, deadline: number | null, guard: ReturnType<typeof sql>) {
    return rawRun(this.db, sql`UPDATE branches SET
        active_bots_count = (SELECT count(*) FROM branch_members WHERE branch_id = ${branchId}),
        current_turn_bot_id = ${turn}, turn_deadline = ${iso(deadline)}, updated_at = ${new Date().toISOString()}
      WHERE id = ${branchId} ${guard}`);
  }

  private async passTurn(st: RoomState, next: Member) {
    const deadline = Date.now() + this.timeoutMs;
    await this.mirrorQueue(st.branchId, next.botId, deadline, sql``);
    await this.beginTurn(st, next, deadline);
  }

  /** Records whose turn it is, when it runs out, and arms the alarm that passes it on. */
  private async beginTurn(st: RoomState, bot: Member, deadline: number) {
    st.currentTurn = bot.botId;
    st.deadline = deadline;
    this.save(st);
    await this.ctx.storage.setAlarm(deadline);
    await this.announceTurn(st, bot);
  }

  /**
   * The one place a turn begins (after a turn pass, a timeout, a join into an empty queue, or the current bot
   * leaving): queue the `your_turn` webhook. The consumer builds its context and delivers it.
   */
  private async announceTurn(st: RoomState, bot: Member): Promise<void> {
    await publish(this.env, [yourTurnMessage(bot.botId, st.branchId)]);
  }

  private joinView(st: RoomState, members: Member[], m: Member, created: boolean): JoinResult {
    const order = members.findIndex((x) => x.botId === m.botId) + 1;
    return {
      created,
      branch_id: st.branchId,
      bot_id: m.botId,
      role: m.role,
      your_turn_order: order,
      join_order: order,
      queue_length: members.length,
      current_turn: st.currentTurn,
      joined_at: m.joinedAt,
    };
  }
}
