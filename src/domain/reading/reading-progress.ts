import { type SQL, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll, rawRun, readOf } from "../../db/client";
import { notFound, validationError } from "../../lib/errors";
import { isUuid } from "../../lib/ids";
import { pagination } from "../../lib/pagination";
import type { z } from "@hono/zod-openapi";
import type { ProgressBody, progressSchema } from "../../schemas/bookmarks";
import type { Actor } from "../shared/actor";
import { type Viewer, branchShown, viewerOf } from "../shared/visibility";
import { onReadingPath } from "../stories/path";

/**
 * Reading progress: a reader's place on each path they read, one row per account and branch (the
 * path's branch), kept only when the reader says so (`PUT /me/progress/{branch_id}`, the web reader's script and
 * its "Keep my place" form), never by a read. "Segments since" is counted from the place on the path: the branch's
 * last sequence_order (its fork point plus its own segments) less the place's, so an ancestor growing after the
 * fork never counts.
 * Why, and what was weighed: docs/decisions.md, "Bookmarks, reading progress and exports".
 */

/** A place as SQLite answers it (`is_main` 0/1). */
type ProgressSqlRow = Omit<z.infer<typeof progressSchema>, "is_main"> & { is_main: number };

/** The account's places (`FROM reading_progress p`, then `rest`) on branches shown to it, with what was added since. */
const progressRecords = (db: Db, viewer: Viewer, where: SQL, rest: SQL = sql``) =>
  rawAll<ProgressSqlRow>(
    db,
    sql`SELECT p.branch_id, b.title AS branch_title, b.is_main, b.story_id, st.title AS story_title, st.language, p.segment_id, p.sequence_order,
      b.fork_sequence + b.segments_count AS last_sequence_order, max(0, b.fork_sequence + b.segments_count - p.sequence_order) AS segments_since,
      p.updated_at
    FROM reading_progress p JOIN branches b ON b.id = p.branch_id JOIN stories st ON st.id = b.story_id
    WHERE ${where} AND ${branchShown("b", viewer)} ${rest}`,
  );

const progressView = (r: ProgressSqlRow) => ({ ...r, is_main: r.is_main === 1 });
export type ProgressView = ReturnType<typeof progressView>;

/** The reader's places, most recently kept first (hidden branches and stories left out). */
const placesQuery = (db: Db, reader: NonNullable<Viewer>, limit: number, offset: number) =>
  progressRecords(db, reader, sql`p.account_id = ${reader.id}`, sql`ORDER BY p.updated_at DESC, p.branch_id DESC LIMIT ${limit} OFFSET ${offset}`);

/** The reader's most recent places, for a page's own batch ("Continue reading" on the home page), without a total. */
export const placesRead = (db: Db, reader: NonNullable<Viewer>, limit: number) =>
  readOf([placesQuery(db, reader, limit, 0)], ([rows]) => rows.map(progressView));

/** `GET /me/progress`: a page of the account's places and their total, one round trip. */
export async function listProgress(db: Db, actor: Actor, limit: number, offset: number) {
  const reader = { id: actor.id, type: actor.type };
  const [rows, [{ total }]] = await db.batch([
    placesQuery(db, reader, limit, offset),
    rawAll<{ total: number }>(
      db,
      sql`SELECT count(*) AS total FROM reading_progress p JOIN branches b ON b.id = p.branch_id WHERE p.account_id = ${actor.id} AND ${branchShown("b", reader)}`,
    ),
  ]);
  return { progress: rows.map(progressView), pagination: pagination(limit, offset, total) };
}

/**
 * Keeps the account's place on the branch's path at the segment (an upsert: the place is where the reader says, back
 * as well as forward). One batch: the upsert (only while the branch is shown to the account and the segment lies on
 * its reading path), the record, and whether the branch is shown: 404 when not, else the segment is not on the path
 * (400 naming `segment_id`, as a body's id that points elsewhere).
 */
export async function keepPlace(db: Db, actor: Actor, branchId: string, body: ProgressBody) {
  const segmentId = isUuid(body.segment_id) ? body.segment_id.toLowerCase() : "";
  const viewer = viewerOf(actor);
  const shown = sql`EXISTS (SELECT 1 FROM branches b WHERE b.id = ${branchId} AND ${branchShown("b", viewer)})`;
  const [, [row], [why]] = await db.batch([
    rawRun(
      db,
      sql`INSERT INTO reading_progress (account_id, branch_id, segment_id, sequence_order, updated_at)
        SELECT ${actor.id}, ${branchId}, p.id, p.sequence_order, ${nowIso()} FROM (${onReadingPath(branchId, segmentId)}) p WHERE ${shown}
        ON CONFLICT (account_id, branch_id) DO UPDATE SET segment_id = excluded.segment_id, sequence_order = excluded.sequence_order, updated_at = excluded.updated_at`,
    ),
    progressRecords(db, viewer, sql`p.account_id = ${actor.id} AND p.branch_id = ${branchId} AND p.segment_id = ${segmentId}`),
    rawAll<{ shown: number }>(db, sql`SELECT ${shown} AS shown`),
  ]);
  if (row) return progressView(row);
  if (!why.shown) throw notFound("Branch");
  throw validationError([{ field: "segment_id", issue: "is not a segment of this branch's reading path" }]);
}

/** Forgets the account's place on the branch's path (404 when it has none). */
export async function forgetPlace(db: Db, actor: Actor, branchId: string) {
  const deleted = await db.run(sql`DELETE FROM reading_progress WHERE account_id = ${actor.id} AND branch_id = ${branchId}`);
  if (deleted.meta.changes !== 1) throw notFound("Reading progress");
  return { branch_id: branchId, deleted: true as const };
}

/** What a signed-in reader has marked on a branch's page: their place on its path, and their bookmarks in its story. */
export interface ReaderMarks {
  place: { segment_id: string; sequence_order: number } | null;
  /** Segment id → the reader's bookmark on it. */
  bookmarks: Record<string, string>;
}

export const NO_MARKS: ReaderMarks = { place: null, bookmarks: {} };

/**
 * The reader's marks for a branch's page, as statements for the page's own batch (no round trip of their own); none
 * for an anonymous reader. The story's bookmarks are at most the account's cap, each a primary-key look-up.
 */
export function readerMarksRead(db: Db, reader: Viewer, branchId: string) {
  if (!reader) return readOf([], () => NO_MARKS);
  return readOf(
    [
      rawAll<{ segment_id: string; sequence_order: number }>(
        db,
        sql`SELECT segment_id, sequence_order FROM reading_progress WHERE account_id = ${reader.id} AND branch_id = ${branchId}`,
      ),
      rawAll<{ segment_id: string; id: string }>(
        db,
        sql`SELECT bk.segment_id, bk.id FROM bookmarks bk JOIN segments s ON s.id = bk.segment_id
          WHERE bk.account_id = ${reader.id} AND s.story_id = (SELECT story_id FROM branches WHERE id = ${branchId})`,
      ),
    ],
    ([[place], marked]): ReaderMarks => ({ place: place ?? null, bookmarks: Object.fromEntries(marked.map((m) => [m.segment_id, m.id])) }),
  );
}
