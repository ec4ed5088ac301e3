import { desc, sql, type SQL } from "drizzle-orm";
import { type Db, rawAll, rawRun } from "../../db/client";
import { jsonRows } from "../../db/json-rows";
import { JsonText } from "../../lib/json-text";
import { segments, type SegmentRow, visible } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { type Writer, writerType } from "../shared/actor";
import { type Viewer, branchShown, preparedForViewer, shownContent, withHidden } from "../shared/visibility";
import { pagination } from "../../lib/pagination";
import { indexText } from "../../lib/search-text";
import { legacyIndexSql } from "../discovery/search-index";

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

/** What a segment's statements bind: its columns, its log entry's own and its text as the search index holds it (`segmentValues`). */
export interface SegmentValues extends Record<string, unknown> {
  id: string;
  branchId: string;
  storyId: string;
  authorId: string;
  authorType: string;
  authorName: string;
  content: string;
  contentLength: number;
  sequenceOrder: number;
  isStarter: 0 | 1;
  createdAt: string;
  logId: string;
  kind: LogKind;
  parentSegmentId: string | null;
  indexedContent: string;
}

export function segmentValues(s: NewSegment): SegmentValues {
  const r = rowOf(s);
  const { id, branchId, storyId, authorId, authorType, authorName, content, contentLength, sequenceOrder, createdAt } = r;
  const log = { logId: crypto.randomUUID(), kind: s.kind, parentSegmentId: s.parentSegmentId };
  const indexedContent = indexText(content);
  return {
    id,
    branchId,
    storyId,
    authorId,
    authorType,
    authorName,
    content,
    contentLength,
    sequenceOrder,
    isStarter: r.isStarter ? 1 : 0,
    createdAt,
    ...log,
    indexedContent,
  };
}

/** A segment's INSERT; `guard` follows its SELECT (a WHERE clause, or nothing). */
export const insertSegment = (v: SegmentValues, guard: SQL) =>
  sql`INSERT INTO segments (id, branch_id, story_id, author_id, author_type, author_name, content,
        content_length, sequence_order, coherence_score, is_starter, created_at)
      SELECT ${v.id}, ${v.branchId}, ${v.storyId}, ${v.authorId}, ${v.authorType}, ${v.authorName}, ${v.content},
        ${v.contentLength}, ${v.sequenceOrder}, NULL, ${v.isStarter}, ${v.createdAt} ${guard}`;

/** A segment's log entry, written only if the segment was. */
export const insertLog = (v: SegmentValues) =>
  sql`INSERT INTO logs (id, story_id, branch_id, segment_id, author_id, author_type, author_name,
        content_length, is_continuation, parent_segment_id, created_at)
      SELECT ${v.logId}, story_id, branch_id, id, author_id, author_type, author_name, content_length,
        ${v.kind}, ${v.parentSegmentId}, created_at FROM segments WHERE id = ${v.id}`;

/**
 * The log's counters over all time, bumped by the entries `which` picks (a segment's, a new story's) in the batch that
 * wrote them: the totals by author type (GET /logs/stats) and by author (the dashboard's top creators), which the
 * logs themselves no longer hold once the sweeper prunes them (LOGS_KEEP_DAYS). No entry written: no row to add.
 */
export const logCountsSql = (which: SQL): [SQL, SQL] => [
  sql`INSERT INTO log_totals (author_type, entries) SELECT author_type, count(*) FROM logs WHERE ${which} GROUP BY author_type
      ON CONFLICT (author_type) DO UPDATE SET entries = entries + excluded.entries`,
  sql`INSERT INTO log_authors (author_id, author_type, author_name, entries, first_at)
      SELECT author_id, max(author_type), max(author_name), count(*), min(created_at) FROM logs WHERE ${which} GROUP BY author_id
      ON CONFLICT (author_id) DO UPDATE SET entries = entries + excluded.entries,
        author_name = max(author_name, excluded.author_name), first_at = min(first_at, excluded.first_at)`,
];

/** `logCountsSql` of one segment's entry. */
export const segmentLogCountsSql = (v: { id: string }): [SQL, SQL] => logCountsSql(sql`segment_id = ${v.id}`);

/**
 * The statements that write a segment, its log entry and (a legacy story's only) its row in D1's index, for a new story's
 * or branch's own segments; `guard` as `insertSegment`'s. The story's search version is its caller's to bump.
 */
export function segmentStatements(db: Db, s: NewSegment, guard: SQL = sql``) {
  const v = segmentValues(s);
  return [rawRun(db, insertSegment(v, guard)), rawRun(db, insertLog(v)), rawRun(db, legacyIndexSql(v))] as const;
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

interface PageValues extends Record<string, unknown> {
  branchId: string;
  limit: number;
  offset: number;
}

/** A page of a branch's own segments, after `FROM segments s`. */
const pageRange = (p: PageValues) => sql`WHERE s.branch_id = ${p.branchId} ORDER BY s.sequence_order LIMIT ${p.limit} OFFSET ${p.offset}`;

/** `listSegments`' one statement: whether the viewer may see the branch, its total, and the page as JSON when it fits. */
const segmentsPage = preparedForViewer((p: PageValues, viewer) => {
  const range = pageRange(p);
  return sql`SELECT (SELECT count(*) FROM branches b WHERE b.id = ${p.branchId} AND ${branchShown("b", viewer)}) AS found,
      (SELECT count(*) FROM segments WHERE branch_id = ${p.branchId}) AS total,
      CASE WHEN (SELECT coalesce(sum(6 * octet_length(p.content) + 512), 0) FROM (SELECT s.content FROM segments s ${range}) p)
        <= ${JSON_PAGE_BYTES} THEN ${segmentJson(sql`SELECT ${segmentColumns(viewer)} FROM segments s ${range}`, "r.sequence_order")} END AS segments`;
});

/**
 * A branch's own segments in order, one page and the total in one statement (the busiest read a bot makes): SQLite
 * writes the page as JSON (`jsonRows`), so an uncached page costs about what its ceiling's one-value round trip does.
 * A page whose JSON might not fit in one value (over ~300 KB of text) is read as rows, in a second round trip.
 */
export async function listSegments(db: Db, branchId: string, limit: number, offset: number, viewer: Viewer = null) {
  const values = { branchId, limit, offset };
  const [head] = await rawAll<{ found: number; total: number; segments: string | null }>(db, segmentsPage(values, viewer));
  if (!head.found) throw notFound("Branch");
  const text = head.segments ?? JSON.stringify(asSegments(await segmentRecords(db, viewer, pageRange(values))));
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
