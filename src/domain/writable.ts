import { type SQL, sql } from "drizzle-orm";
import { type Db, rawAll, readOf, runRead } from "../db/client";
import { type ApiError, notFound, storyArchived } from "../lib/errors";

/**
 * Where a write goes (issue 56): its story, and the branches and the segment it names (a fork: its parent and the
 * parent's ancestors, and the segment it forks at). Values may be SQL that selects them.
 */
export interface WriteTarget {
  storyId: string | SQL;
  branchIds?: (string | SQL)[];
  segmentId?: string | SQL | null;
}

const list = (ids: (string | SQL)[]) =>
  sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );

/** Writes an archived story still takes (votes, summaries): only hidden content refuses them. */
export interface WriteKind {
  evenArchived?: boolean;
}

/**
 * SQL: the target takes writes: its story is active (unless `evenArchived`), and neither it nor a branch or
 * segment the write names is hidden. A condition of the write's own statement (never a read before it), so a hide
 * or an archive that lands between a request's read and its write still refuses the write, which writes nothing.
 */
export function takesWrites(t: WriteTarget, { evenArchived = false }: WriteKind = {}): SQL {
  const active = evenArchived ? sql`` : sql` AND status = 'active'`;
  const parts = [sql`EXISTS (SELECT 1 FROM stories WHERE id = ${t.storyId}${active} AND hidden_at IS NULL)`];
  if (t.branchIds?.length) parts.push(sql`NOT EXISTS (SELECT 1 FROM branches WHERE id IN (${list(t.branchIds)}) AND hidden_at IS NOT NULL)`);
  if (t.segmentId) parts.push(sql`NOT EXISTS (SELECT 1 FROM segments WHERE id = ${t.segmentId} AND hidden_at IS NOT NULL)`);
  return sql.join(parts, sql` AND `);
}

interface TargetState {
  story: string | null;
  branches: number;
  segment: number;
}

/**
 * Why `takesWrites` refused a write, as a read (one statement) for after the refusal: something hidden is 404, as
 * reading it is; an archived story 403. Null when neither (another condition of the write refused it).
 */
export function closedRead(db: Db, t: WriteTarget, { evenArchived = false }: WriteKind = {}) {
  return readOf(
    [
      rawAll<TargetState>(
        db,
        sql`SELECT (SELECT CASE WHEN hidden_at IS NULL THEN status ELSE 'hidden' END FROM stories WHERE id = ${t.storyId}) AS story,
          ${t.branchIds?.length ? sql`(SELECT count(*) FROM branches WHERE id IN (${list(t.branchIds)}) AND hidden_at IS NOT NULL)` : sql`0`} AS branches,
          ${t.segmentId ? sql`(SELECT count(*) FROM segments WHERE id = ${t.segmentId} AND hidden_at IS NOT NULL)` : sql`0`} AS segment`,
      ),
    ],
    ([[state]]): ApiError | null => {
      if (state.story === null || state.story === "hidden") return notFound("Story");
      if (state.branches) return notFound("Branch");
      if (state.segment) return notFound("Segment");
      return state.story === "active" || evenArchived ? null : storyArchived();
    },
  );
}

/** `closedRead` alone (its own round trip, on a refusal only). */
export const closedError = (db: Db, t: WriteTarget, kind: WriteKind = {}) => runRead(db, closedRead(db, t, kind));
