import { type SQL, sql } from "drizzle-orm";
import { type Db, rawAll, readOf, runRead } from "../../db/client";
import { type ApiError, notFound, storyArchived } from "../../lib/errors";

/**
 * Where a write goes: its story, the branch and the segment it names, and for a fork (`withAncestors`)
 * the branch's ancestors too (a fork's reading path passes through them). Values may be SQL that selects them.
 * Why, and what was weighed: docs/decisions.md, "Moderation: hidden content".
 */
export interface WriteTarget {
  storyId: string | SQL;
  branchId?: string | SQL;
  withAncestors?: boolean;
  segmentId?: string | SQL | null;
}

/** Writes an archived story still takes (votes, summaries): only hidden content refuses them. */
export interface WriteKind {
  evenArchived?: boolean;
}

/**
 * SQL selecting a row when the target's branch (or, `withAncestors`, one of its ancestors) is hidden. The line is
 * walked in SQL, one primary-key step per ancestor: a parameter per ancestor would meet D1's 100 per statement.
 */
function hiddenBranch(t: WriteTarget): SQL {
  if (!t.withAncestors) return sql`SELECT 1 FROM branches WHERE id = ${t.branchId} AND hidden_at IS NOT NULL`;
  return sql`WITH RECURSIVE line(id) AS (
      SELECT ${t.branchId} UNION SELECT b.parent_branch_id FROM branches b JOIN line l ON b.id = l.id WHERE b.parent_branch_id IS NOT NULL
    ) SELECT 1 FROM branches h JOIN line l ON h.id = l.id WHERE h.hidden_at IS NOT NULL`;
}

/**
 * SQL: the target takes writes: its story is active (unless `evenArchived`), and neither it nor a branch or
 * segment the write names is hidden. A condition of the write's own statement (never a read before it), so a hide
 * or an archive that lands between a request's read and its write still refuses the write, which writes nothing.
 */
export function takesWrites(t: WriteTarget, { evenArchived = false }: WriteKind = {}): SQL {
  const active = evenArchived ? sql`` : sql` AND status = 'active'`;
  const parts = [sql`EXISTS (SELECT 1 FROM stories WHERE id = ${t.storyId}${active} AND hidden_at IS NULL)`];
  if (t.branchId) parts.push(sql`NOT EXISTS (${hiddenBranch(t)})`);
  if (t.segmentId) parts.push(sql`NOT EXISTS (SELECT 1 FROM segments WHERE id = ${t.segmentId} AND hidden_at IS NOT NULL)`);
  return sql.join(parts, sql` AND `);
}

interface TargetState {
  story: string | null;
  branch: number;
  segment: number;
}

/**
 * Why `takesWrites` refused a write, as a read (one statement) for after the refusal: something hidden is 404, as
 * reading it is; an archived story 403 (unless `evenArchived`). Null when neither (another condition refused it).
 */
export function closedRead(db: Db, t: WriteTarget, { evenArchived = false }: WriteKind = {}) {
  return readOf(
    [
      rawAll<TargetState>(
        db,
        sql`SELECT (SELECT CASE WHEN hidden_at IS NULL THEN status ELSE 'hidden' END FROM stories WHERE id = ${t.storyId}) AS story,
          ${t.branchId ? sql`EXISTS (${hiddenBranch(t)})` : sql`0`} AS branch,
          ${t.segmentId ? sql`EXISTS (SELECT 1 FROM segments WHERE id = ${t.segmentId} AND hidden_at IS NOT NULL)` : sql`0`} AS segment`,
      ),
    ],
    ([[state]]): ApiError | null => {
      if (state.story === null || state.story === "hidden") return notFound("Story");
      if (state.branch) return notFound("Branch");
      if (state.segment) return notFound("Segment");
      return state.story === "active" || evenArchived ? null : storyArchived();
    },
  );
}

/** `closedRead` alone (its own round trip, on a refusal only). */
export const closedError = (db: Db, t: WriteTarget, kind: WriteKind = {}) => runRead(db, closedRead(db, t, kind));
