import { type SQL, sql } from "drizzle-orm";
import { type Db, rawAll } from "../../db/client";
import { type Viewer, seesHidden, shownContent, withHidden } from "../shared/visibility";
import { weightedTotal } from "../shared/scores";

export interface PathSegment {
  id: string;
  branch_id: string;
  bot_id: string;
  author_type: string;
  author_name: string;
  /** "" when a moderator hid it or its branch (and the viewer is not its author or a moderator). */
  content: string;
  sequence_order: number;
  created_at: string;
  hidden: boolean;
}

/** A path row as SQLite returns it (`hidden` 0/1): turn a batch's result into `PathSegment`s with `asPath`. */
type PathRow<T extends PathSegment = PathSegment> = Omit<T, "hidden"> & { hidden: number };

/** Rows of a reading-path query as the API shows them. */
export const asPath = <T extends PathSegment>(rows: PathRow<T>[]): T[] => rows.map((r) => withHidden(r) as unknown as T);

/** A reading-path segment with its weighted vote score and how many rewrites it has. */
export interface ScoredPathSegment extends PathSegment {
  vote_score: number;
  rewrites_count: number;
}

/**
 * The branch and its ancestors, each with the cap below which its segments are on the reading path (the
 * lowest fork point under it) and, for an ancestor, when a moderator hid it (null for the branch itself: whoever
 * reads it may see it, `branchShown`). `branchId` may be a SQL expression that selects the branch.
 */
const chain = (branchId: string | SQL) => sql`
    WITH RECURSIVE chain(id, parent, fork, cap, hidden_at) AS (
      SELECT id, parent_branch_id, fork_sequence, 9007199254740991, NULL FROM branches WHERE id = ${branchId}
      UNION ALL
      SELECT b.id, b.parent_branch_id, b.fork_sequence, min(c.cap, c.fork), b.hidden_at
      FROM branches b JOIN chain c ON b.id = c.parent
    )`;

/**
 * A path segment's columns. A segment on a hidden ancestor is hidden with it: a fork made before the hide
 * shows that branch's text only to each segment's author and to moderators, as the branch itself would.
 */
const pathColumns = (viewer: Viewer) =>
  sql`s.id, s.branch_id, s.author_id AS bot_id, s.author_type, s.author_name, ${shownContent("s", viewer, sql`coalesce(s.hidden_at, c.hidden_at)`)}, s.sequence_order, s.created_at`;

/**
 * A branch's reading path in one query: each ancestor's segments up to the fork point below it, then the
 * branch's own. With `last`, only the last N segments of that path, newest first (see `inReadingOrder`).
 * `branchId` may be a SQL expression that selects the branch. Usable inside `db.batch()`.
 */
export function readingPathQuery(db: Db, branchId: string | SQL, last?: number, viewer: Viewer = null) {
  return rawAll<PathRow>(
    db,
    sql`${chain(branchId)}
    SELECT ${pathColumns(viewer)}
    FROM segments s JOIN chain c ON s.branch_id = c.id AND s.sequence_order <= c.cap
    ORDER BY s.sequence_order ${last ? sql`DESC LIMIT ${last}` : sql`ASC`}`,
  );
}

/**
 * The whole reading path in reading order, each segment with its weighted vote score and its rewrites count
 * (both by index, per segment). Usable inside `db.batch()`.
 */
export function scoredReadingPathQuery(db: Db, branchId: string | SQL, viewer: Viewer = null) {
  return rawAll<PathRow<ScoredPathSegment>>(
    db,
    sql`${chain(branchId)}
    SELECT ${pathColumns(viewer)},
      (SELECT ${weightedTotal("v")} FROM votes v WHERE v.target_type = 'segment' AND v.target_id = s.id) AS vote_score,
      (SELECT count(*) FROM rewrites r WHERE r.segment_id = s.id) AS rewrites_count
    FROM segments s JOIN chain c ON s.branch_id = c.id AND s.sequence_order <= c.cap
    ORDER BY s.sequence_order ASC`,
  );
}

/**
 * SQL selecting the segment `segmentId` (`id`, `sequence_order`) when it lies on the branch's reading path (an
 * ancestor's up to the fork below it, or the branch's own); no row otherwise. For a FROM clause or an EXISTS.
 */
export const onReadingPath = (branchId: string, segmentId: string) =>
  sql`${chain(branchId)}
    SELECT s.id, s.sequence_order FROM segments s JOIN chain c ON s.branch_id = c.id AND s.sequence_order <= c.cap WHERE s.id = ${segmentId}`;

/** Rows of a `readingPathQuery` in reading order. */
export const inReadingOrder = (rows: PathRow[]) => asPath(rows).sort((a, b) => a.sequence_order - b.sequence_order);

/**
 * A page of the reading path in reading order: the segments after `after` (a sequence_order), at most `limit`
 * of them. `branchId` may be a SQL expression that selects the branch. Usable inside `db.batch()`.
 */
export function readingPathPageQuery(db: Db, branchId: string | SQL, after: number, limit: number, viewer: Viewer = null) {
  return rawAll<PathRow>(
    db,
    sql`${chain(branchId)}
    SELECT ${pathColumns(viewer)}
    FROM segments s JOIN chain c ON s.branch_id = c.id AND s.sequence_order <= c.cap
    WHERE s.sequence_order > ${after}
    ORDER BY s.sequence_order ASC LIMIT ${limit}`,
  );
}

/**
 * The hidden segments of a branch's reading path (hidden themselves or with their branch, as `pathColumns` decides),
 * each with whether the viewer may read it (`shown`, 0/1): with the path's length, what decides which segments a
 * reader's copy of the path holds (an export's version, src/domain/export/export.ts). Usable inside `db.batch()`.
 */
export function hiddenOnPathQuery(db: Db, branchId: string | SQL, viewer: Viewer = null) {
  return rawAll<{ sequence_order: number; shown: number }>(
    db,
    sql`${chain(branchId)}
    SELECT s.sequence_order, ${seesHidden(viewer, sql`s.author_id`)} AS shown
    FROM segments s JOIN chain c ON s.branch_id = c.id AND s.sequence_order <= c.cap
    WHERE coalesce(s.hidden_at, c.hidden_at) IS NOT NULL
    ORDER BY s.sequence_order ASC`,
  );
}
