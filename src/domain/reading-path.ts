import { sql } from "drizzle-orm";
import { type Db, rawAll } from "../db/client";

export interface PathSegment {
  id: string;
  branch_id: string;
  bot_id: string;
  author_type: string;
  author_name: string;
  content: string;
  sequence_order: number;
  created_at: string;
}

/**
 * A branch's reading path in one query: each ancestor's segments up to the fork point below it, then the
 * branch's own. With `last`, only the last N segments of that path, newest first (see `inReadingOrder`).
 * Usable inside `db.batch()`.
 */
export function readingPathQuery(db: Db, branchId: string, last?: number) {
  return rawAll<PathSegment>(db, sql`
    WITH RECURSIVE chain(id, parent, fork, cap) AS (
      SELECT id, parent_branch_id, fork_sequence, 9007199254740991 FROM branches WHERE id = ${branchId}
      UNION ALL
      SELECT b.id, b.parent_branch_id, b.fork_sequence, min(c.cap, c.fork)
      FROM branches b JOIN chain c ON b.id = c.parent
    )
    SELECT s.id, s.branch_id, s.author_id AS bot_id, s.author_type, s.author_name, s.content, s.sequence_order, s.created_at
    FROM segments s JOIN chain c ON s.branch_id = c.id AND s.sequence_order <= c.cap
    ORDER BY s.sequence_order ${last ? sql`DESC LIMIT ${last}` : sql`ASC`}`);
}

/** Rows of a `readingPathQuery` in reading order. */
export const inReadingOrder = (rows: PathSegment[]) => [...rows].sort((a, b) => a.sequence_order - b.sequence_order);
