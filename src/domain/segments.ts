import { desc, sql, type SQL } from "drizzle-orm";
import { type Db, rawAll, rawRun } from "../db/client";
import { JsonText, jsonRows } from "../db/json-rows";
import { segments, type SegmentRow, visible } from "../db/schema";
import { notFound } from "../lib/errors";
import { type Writer, writerType } from "./actor";
import { type Viewer, branchShown, shownContent, withHidden } from "./hidden";
import { pagination } from "../lib/pagination";

export type LogKind = "new" | "fork" | "continuation";

export interface NewSegment {
  id: string;
  branchId: string;
  storyId: string;
  author: Writer;
  content: string;
  contentLength: number;
  sequenceOrder: number;
  isStarter?: boolean;
  createdAt: string;
  /** The previous segment on the branch's reading path (null for a story's starter). */
  parentSegmentId: string | null;
  kind: LogKind;
}

export function segmentView(row: SegmentRow) {
  return {
    id: row.id,
    branch_id: row.branchId,
    bot_id: row.authorId,
    author_type: row.authorType,
    author_name: row.authorName,
    content: row.content,
    sequence_order: row.sequenceOrder,
    coherence_score: row.coherenceScore,
    is_starter: row.isStarter,
    hidden: row.hiddenAt !== null,
    created_at: row.createdAt,
  };
}

/** A segment record's columns for raw SQL on `segments s`, its text as the viewer may read it (see `asSegments`). */
export const segmentColumns = (viewer: Viewer) =>
  sql`s.id, s.branch_id, s.author_id AS bot_id, s.author_type, s.author_name, ${shownContent("s", viewer)}, s.sequence_order,
    s.coherence_score, s.is_starter, s.created_at`;

type SegmentSqlRow = Omit<SegmentView, "is_starter" | "hidden"> & { is_starter: number; hidden: number };

/** Rows of `segmentColumns` as the API shows them: SQLite's 0/1 as booleans. */
export const asSegments = (rows: SegmentSqlRow[]): SegmentView[] => rows.map((r) => withHidden({ ...r, is_starter: r.is_starter === 1 }));

/** Raw SQL selecting segment records (usable inside `db.batch()`): `where` follows `FROM segments s`. */
export const segmentRecords = (db: Db, viewer: Viewer, rest: SQL) => rawAll<SegmentSqlRow>(db, sql`SELECT ${segmentColumns(viewer)} FROM segments s ${rest}`);

export function rowOf(s: NewSegment): SegmentRow {
  return {
    ...visible,
    id: s.id,
    branchId: s.branchId,
    storyId: s.storyId,
    authorId: s.author.id,
    authorType: writerType(s.author),
    authorName: s.author.name,
    content: s.content,
    contentLength: s.contentLength,
    sequenceOrder: s.sequenceOrder,
    coherenceScore: null,
    isStarter: s.isStarter ?? false,
    createdAt: s.createdAt,
  };
}

/**
 * The statements that write a segment and its log entry. With `onlyIfStoryActive` the segment is inserted
 * only while its story is active (and `onlyIf` holds, when given), and the log entry only if the segment was:
 * the first statement's `changes` tells the caller whether anything was written.
 */
export function segmentStatements(db: Db, s: NewSegment, { onlyIfStoryActive, onlyIf }: { onlyIfStoryActive: boolean; onlyIf?: SQL }) {
  const r = rowOf(s);
  const also = onlyIf ? sql` AND ${onlyIf}` : sql``;
  const guard = onlyIfStoryActive ? sql`WHERE EXISTS (SELECT 1 FROM stories WHERE id = ${s.storyId} AND status = 'active')${also}` : sql``;
  return [
    rawRun(
      db,
      sql`INSERT INTO segments (id, branch_id, story_id, author_id, author_type, author_name, content,
        content_length, sequence_order, coherence_score, is_starter, created_at)
      SELECT ${r.id}, ${r.branchId}, ${r.storyId}, ${r.authorId}, ${r.authorType}, ${r.authorName}, ${r.content},
        ${r.contentLength}, ${r.sequenceOrder}, NULL, ${r.isStarter ? 1 : 0}, ${r.createdAt} ${guard}`,
    ),
    rawRun(
      db,
      sql`INSERT INTO logs (id, story_id, branch_id, segment_id, author_id, author_type, author_name,
        content_length, is_continuation, parent_segment_id, created_at)
      SELECT ${crypto.randomUUID()}, story_id, branch_id, id, author_id, author_type, author_name, content_length,
        ${s.kind}, ${s.parentSegmentId}, created_at FROM segments WHERE id = ${r.id}`,
    ),
  ] as const;
}

/** `segmentColumns` as SQLite's JSON: the keys in the order `asSegments` gives them. */
const segmentJson = jsonRows<SegmentView>({
  id: "value",
  branch_id: "value",
  bot_id: "value",
  author_type: "value",
  author_name: "value",
  content: "value",
  hidden: "boolean",
  sequence_order: "value",
  coherence_score: "value",
  is_starter: "boolean",
  created_at: "value",
});

/**
 * The most a page's JSON may take as one SQLite value: D1 refuses a string over 2,000,000 bytes, and a page of
 * segments is unbounded (up to 100 of 100,000 characters). Counted for sure: a byte of text is at most 6 in JSON
 * (`\u00XX`), and the rest of a record at most 512.
 */
const JSON_PAGE_BYTES = 1_900_000;

/**
 * A branch's own segments in order, one page and the total in one statement (the busiest read a bot makes): SQLite
 * writes the page as JSON (`jsonRows`), so an uncached page costs about what its ceiling's one-value round trip does.
 * A page whose JSON might not fit in one value (over ~300 KB of text) is read as rows, in a second round trip.
 */
export async function listSegments(db: Db, branchId: string, limit: number, offset: number, viewer: Viewer = null) {
  const range = sql`WHERE s.branch_id = ${branchId} ORDER BY s.sequence_order LIMIT ${limit} OFFSET ${offset}`;
  const page = sql`SELECT ${segmentColumns(viewer)} FROM segments s ${range}`;
  const [head] = await rawAll<{ found: number; total: number; segments: string | null }>(
    db,
    sql`SELECT (SELECT count(*) FROM branches b WHERE b.id = ${branchId} AND ${branchShown("b", viewer)}) AS found,
      (SELECT count(*) FROM segments WHERE branch_id = ${branchId}) AS total,
      CASE WHEN (SELECT coalesce(sum(6 * length(CAST(p.content AS BLOB)) + 512), 0) FROM (SELECT s.content FROM segments s ${range}) p)
        <= ${JSON_PAGE_BYTES} THEN ${segmentJson(page, "r.sequence_order")} END AS segments`,
  );
  if (!head.found) throw notFound("Branch");
  const text = head.segments ?? JSON.stringify(asSegments(await segmentRecords(db, viewer, range)));
  return { segments: new JsonText<SegmentView[]>(text), pagination: pagination(limit, offset, head.total) };
}

export type SegmentView = ReturnType<typeof segmentView>;

/**
 * The last segment of a branch (its head), or none: usable inside `db.batch()`. `branchId` may be a SQL
 * expression that selects the branch.
 */
export const branchHeadQuery = (db: Db, branchId: string | SQL) =>
  db
    .select({ id: segments.id, sequenceOrder: segments.sequenceOrder })
    .from(segments)
    .where(sql`${segments.branchId} = ${branchId}`)
    .orderBy(desc(segments.sequenceOrder))
    .limit(1);
