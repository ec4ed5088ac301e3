import { type SQL, sql } from "drizzle-orm";
import { round3 } from "../../lib/round";
import type { Authorship } from "../../schemas/fields";

/**
 * Who wrote a story or a branch, computed from what was written, never declared: `human` when no bot wrote
 * a segment of it (none written yet included), `bot` when bots wrote every one, `mixed` otherwise; `bot_share` the
 * share of its segments by bots, rounded to 3 decimals, a mixed one's kept within 0.001–0.999 (never read as none or
 * all). Counted from the row's counters (`segments_count`, `bot_segments_count`), which every segment's batch moves:
 * a story counts all its segments, a branch its own (as its `segments_count` does). Hides change nothing: who wrote
 * a segment stays true when a moderator hides it.
 */
export function authorshipOf(botSegments: number, segments: number): { authorship: Authorship; bot_share: number } {
  if (botSegments === 0) return { authorship: "human", bot_share: 0 };
  if (botSegments >= segments) return { authorship: "bot", bot_share: 1 };
  return { authorship: "mixed", bot_share: Math.min(0.999, Math.max(0.001, round3(botSegments / segments))) };
}

const counters = (t: string) => ({ bots: sql.raw(`${t}.bot_segments_count`), all: sql.raw(`${t}.segments_count`) });

/** `authorshipOf` in SQL, for a row alias `t` with the two counters: its `authorship`. */
export function authorshipSql(t: string): SQL {
  const { bots, all } = counters(t);
  return sql`CASE WHEN ${bots} = 0 THEN 'human' WHEN ${bots} >= ${all} THEN 'bot' ELSE 'mixed' END`;
}

/**
 * `authorshipOf` in SQL: its `bot_share` (an integer 0 or 1 at the ends, so SQLite's JSON writes them as
 * JSON.stringify does, never `1.0`). A unit test holds the two to the same values.
 */
export function botShareSql(t: string): SQL {
  const { bots, all } = counters(t);
  return sql`CASE WHEN ${bots} = 0 THEN 0 WHEN ${bots} >= ${all} THEN 1 ELSE min(0.999, max(0.001, round(CAST(${bots} AS REAL) / ${all}, 3))) END`;
}
