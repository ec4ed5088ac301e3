import { idInStory } from "../../lib/ids";
import { count, eq, sql } from "drizzle-orm";
import { type Viewer, segmentShown } from "../shared/visibility";
import { type Db, nowIso, rawAll } from "../../db/client";
import { rewrites, segments, stories, type RewriteRow } from "../../db/schema";
import { type Actor, writerType } from "../shared/actor";
import { notFound, storyArchived } from "../../lib/errors";
import { pagination } from "../../lib/pagination";
import { type IdempotentRequest, commit, recordStatements } from "../shared/idempotency";
import { checkLength } from "../shared/length";
import { type VoteCounts, voteSummaryColumns, voteSummaryView } from "../shared/scores";
import { closedError, takesWrites } from "../shared/writable";
import { rowWhere } from "../../db/whole-row";

export function rewriteView(r: RewriteRow) {
  return {
    id: r.id,
    segment_id: r.segmentId,
    author_id: r.authorId,
    author_type: r.authorType,
    author_name: r.authorName,
    content: r.content,
    reason: r.reason,
    created_at: r.createdAt,
  };
}

export async function addRewrite(db: Db, actor: Actor, segmentId: string, input: { content: string; reason?: string | null }, idem?: IdempotentRequest) {
  const [seg] = await db
    .select({
      branchId: segments.branchId,
      storyId: segments.storyId,
      status: stories.status,
      language: stories.language,
      minLength: stories.minLength,
      maxLength: stories.maxLength,
    })
    .from(segments)
    .innerJoin(stories, eq(stories.id, segments.storyId))
    .where(eq(segments.id, segmentId))
    .limit(1);
  if (!seg) throw notFound("Segment");
  if (seg.status !== "active") throw storyArchived();
  checkLength(input.content, seg);
  const row: RewriteRow = {
    id: idInStory(seg.storyId),
    segmentId,
    branchId: seg.branchId,
    storyId: seg.storyId,
    authorId: actor.id,
    authorType: writerType(actor),
    authorName: actor.name,
    content: input.content,
    reason: input.reason ?? null,
    createdAt: nowIso(),
  };
  const created = rewriteView(row);
  // Only while the segment, its branch and its story take writes (none hidden, the story active).
  const target = { storyId: seg.storyId, branchId: seg.branchId, segmentId };
  const inserted = sql`AND EXISTS (SELECT 1 FROM rewrites WHERE id = ${row.id})`;
  const [written] = await commit(() =>
    db.batch([
      db.insert(rewrites).select(rowWhere(rewrites, row, takesWrites(target))),
      ...recordStatements(db, idem, { status: 201, data: created }, inserted),
    ]),
  );
  if (written.meta.changes !== 1) throw (await closedError(db, target)) ?? storyArchived();
  return created;
}

interface RewriteWithVotes extends VoteCounts {
  id: string;
  segment_id: string;
  author_id: string;
  author_type: "human" | "bot";
  author_name: string;
  content: string;
  reason: string | null;
  created_at: string;
}

/**
 * A segment's rewrites with their vote summaries, highest score first: one aggregate query. 404 when the segment,
 * its branch or its story is hidden from the viewer (rewrites retell its text).
 */
export async function listRewrites(db: Db, segmentId: string, limit: number, offset: number, viewer: Viewer = null) {
  const [seg, rows, [{ total }]] = await db.batch([
    rawAll<{ id: string }>(
      db,
      sql`SELECT s.id FROM segments s JOIN branches b ON b.id = s.branch_id
        WHERE s.id = ${segmentId} AND ${segmentShown("s", "b", viewer)}`,
    ),
    rawAll<RewriteWithVotes>(
      db,
      sql`
      SELECT r.id, r.segment_id, r.author_id, r.author_type, r.author_name, r.content, r.reason, r.created_at, ${voteSummaryColumns("v")}
      FROM rewrites r LEFT JOIN votes v ON v.target_type = 'rewrite' AND v.target_id = r.id
      WHERE r.segment_id = ${segmentId}
      GROUP BY r.id ORDER BY total_score DESC, r.created_at ASC, r.id ASC LIMIT ${limit} OFFSET ${offset}`,
    ),
    db.select({ total: count() }).from(rewrites).where(eq(rewrites.segmentId, segmentId)),
  ]);
  if (!seg.length) throw notFound("Segment");
  return {
    rewrites: rows.map(({ total_score, upvotes, downvotes, human_votes, bot_votes, ...r }) => ({
      ...r,
      votes: voteSummaryView({ total_score, upvotes, downvotes, human_votes, bot_votes }),
    })),
    pagination: pagination(limit, offset, total),
  };
}
