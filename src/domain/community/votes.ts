import { type SQL, and, count, eq, inArray, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll } from "../../db/client";
import { bots, branches, rewrites, segments, votes, type VoteRow } from "../../db/schema";
import { type Actor, writerType } from "../shared/actor";
import { ApiError, notFound } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { round3 } from "../../lib/round";
import { type IdempotentRequest, commit, recordStatementFromSql } from "../shared/idempotency";
import { type VoteCounts, voteSummaryColumns, voteSummaryView, weightedTotal } from "../shared/scores";
import { takesWrites } from "../shared/writable";
import { type Viewer, branchShown } from "../shared/visibility";
import { rowWhere } from "../../db/whole-row";

export type TargetType = "branch" | "segment" | "rewrite";

/** A bot's vote weighs by its reputation; a human's (or admin's) weighs 1. */
export function voteWeight(voterType: "human" | "bot", reputation: number): number {
  if (voterType === "human") return 1;
  if (reputation < 10) return 0.3;
  if (reputation < 50) return 0.5;
  return 0.8;
}

/** Weighted vote total received on an author's segments and rewrites. */
export const reputationOf = (db: Db, authorId: string) =>
  db
    .select({ total: weightedTotal() })
    .from(votes)
    .where(and(eq(votes.targetAuthorId, authorId), inArray(votes.targetType, ["segment", "rewrite"])));

/** Recomputes a branch's stored `vote_score` from the votes that count on it and its segments (a statement for a batch). */
export const branchScoreStatement = (db: Db, branchId: string) =>
  db
    .update(branches)
    .set({ voteScore: sql`(SELECT ${weightedTotal()} FROM votes WHERE branch_id = ${branchId} AND target_type IN ('branch', 'segment'))` })
    .where(eq(branches.id, branchId));

/** Where a vote's target sits (its story, branch and segment: a rewrite's is the segment it retells) and its author. */
function targetQuery(db: Db, type: TargetType, id: string) {
  if (type === "branch") {
    return db
      .select({
        storyId: branches.storyId,
        branchId: branches.id,
        // Named: in a batch D1 answers rows as objects, where three columns all called NULL would be one.
        segmentId: sql<string | null>`NULL`.as("segment_id"),
        authorId: sql<string | null>`NULL`.as("author_id"),
        authorType: sql<"human" | "bot" | null>`NULL`.as("author_type"),
      })
      .from(branches)
      .where(eq(branches.id, id))
      .limit(1);
  }
  const table = type === "segment" ? segments : rewrites;
  const segmentId = type === "segment" ? segments.id : rewrites.segmentId;
  return db
    .select({
      storyId: table.storyId,
      branchId: table.branchId,
      segmentId: sql<string | null>`${segmentId}`,
      authorId: table.authorId,
      authorType: table.authorType,
    })
    .from(table)
    .where(eq(table.id, id))
    .limit(1);
}

export function voteView(v: VoteRow) {
  return {
    id: v.id,
    voter_id: v.voterId,
    voter_type: v.voterType,
    target_type: v.targetType,
    target_id: v.targetId,
    vote: v.vote,
    effective_weight: v.effectiveWeight,
    created_at: v.createdAt,
    updated_at: v.updatedAt,
  };
}

/**
 * One vote per voter and target: an upsert on the unique (voter, target) index, so concurrent repeats leave
 * one row. The branch's vote_score is recomputed from its votes in the same batch.
 */
export async function castVote(db: Db, actor: Actor, input: { target_type: TargetType; target_id: string; vote: 1 | -1 }, idem?: IdempotentRequest) {
  const targetId = input.target_id.toLowerCase();
  if (!isUuid(targetId)) throw notFound("Vote target");
  const voterType = writerType(actor);
  const [[target], [{ total: reputation }]] = await db.batch([targetQuery(db, input.target_type, targetId), reputationOf(db, actor.id)]);
  if (!target) throw notFound("Vote target");
  if (target.authorId === actor.id) throw new ApiError("PERMISSION_DENIED", "You cannot vote on your own content");
  const now = nowIso();
  const row: VoteRow = {
    id: crypto.randomUUID(),
    voterId: actor.id,
    voterType,
    targetType: input.target_type,
    targetId,
    vote: input.vote,
    effectiveWeight: voteWeight(voterType, reputation),
    storyId: target.storyId,
    branchId: target.branchId,
    targetAuthorId: target.authorId,
    targetAuthorType: target.authorType,
    createdAt: now,
    updatedAt: now,
  };
  // Only while nothing the vote lands on is hidden (its story may be archived): a refused vote writes nothing.
  const open = takesWrites({ storyId: target.storyId, branchId: target.branchId, segmentId: target.segmentId }, { evenArchived: true });
  const [[saved], [{ score }]] = await commit(() =>
    db.batch([
      db
        .insert(votes)
        .select(rowWhere(votes, row, open))
        .onConflictDoUpdate({
          target: [votes.voterId, votes.targetType, votes.targetId],
          set: { vote: row.vote, effectiveWeight: row.effectiveWeight, updatedAt: now },
        })
        .returning(),
      db
        .select({ score: weightedTotal() })
        .from(votes)
        .where(and(eq(votes.targetType, row.targetType), eq(votes.targetId, targetId))),
      branchScoreStatement(db, row.branchId),
      ...(idem ? [voteRecord(db, idem, row, open)] : []),
    ]),
  );
  if (!saved) throw notFound("Vote target"); // hidden since our read
  return { created: saved.id === row.id, vote: voteView(saved), new_score: round3(score) };
}

/**
 * The idempotency record of a vote, built by SQL in the vote's own batch: whether the vote was new (201) or
 * replaced one (200) and the new score are only known there. The body is the answer `voteView` gives.
 */
function voteRecord(db: Db, idem: IdempotentRequest, row: VoteRow, open: SQL) {
  const mine = sql`v.voter_id = ${row.voterId} AND v.target_type = ${row.targetType} AND v.target_id = ${row.targetId}`;
  const score = sql`(SELECT ${weightedTotal()} FROM votes WHERE target_type = ${row.targetType} AND target_id = ${row.targetId})`;
  return recordStatementFromSql(db, idem, {
    status: sql`CASE WHEN v.id = ${row.id} THEN 201 ELSE 200 END`,
    body: sql`json_object('status', 'success', 'data', json_object('vote', json_object('id', v.id, 'voter_id', v.voter_id,
      'voter_type', v.voter_type, 'target_type', v.target_type, 'target_id', v.target_id, 'vote', v.vote,
      'effective_weight', v.effective_weight, 'created_at', v.created_at, 'updated_at', v.updated_at), 'new_score', round(${score}, 3)))`,
    from: sql`FROM votes v WHERE ${mine} AND ${open}`,
  });
}

/** A branch's or segment's vote summary: 404 when the branch (the segment's branch) is hidden from the viewer. */
export async function voteSummary(db: Db, type: "branch" | "segment", id: string, viewer: Viewer = null) {
  const from = type === "branch" ? sql`FROM branches b WHERE b.id = ${id}` : sql`FROM segments s JOIN branches b ON b.id = s.branch_id WHERE s.id = ${id}`;
  const [target, [counts]] = await db.batch([
    rawAll<{ found: number }>(db, sql`SELECT 1 AS found ${from} AND ${branchShown("b", viewer)}`),
    rawAll<VoteCounts>(db, sql`SELECT ${voteSummaryColumns()} FROM votes WHERE target_type = ${type} AND target_id = ${id}`),
  ]);
  if (!target.length) throw notFound(type === "branch" ? "Branch" : "Segment");
  return voteSummaryView(counts);
}

export async function botReputation(db: Db, botId: string) {
  const [bot, [{ total }], [{ n }]] = await db.batch([
    db.select({ id: bots.id }).from(bots).where(eq(bots.id, botId)).limit(1),
    reputationOf(db, botId),
    db.select({ n: count() }).from(segments).where(eq(segments.authorId, botId)),
  ]);
  if (!bot.length) throw notFound("Bot");
  return reputationView(botId, total, n);
}

/** A bot's reputation from its weighted vote total and its segment count (see `botReputation`). */
export function reputationView(botId: string, total: number, segments: number) {
  const reputation = round3(total);
  return { bot_id: botId, reputation, total_segments: segments, avg_score: segments ? round3(reputation / segments) : 0 };
}
