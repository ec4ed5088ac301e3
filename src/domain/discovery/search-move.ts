import { type SQL, sql } from "drizzle-orm";
import { type Db, rawAll, rawRun } from "../../db/client";

/**
 * Keeping the search shards in step with D1, and moving a deployment's older stories out of D1's own index.
 *
 * Every change search shows bumps its story's `search_version` in the change's own batch (`searchChanged`), so a
 * story is behind in its shard exactly while `search_version > search_synced`. The request then hands the story to
 * the search queue; a sync (src/usecases/search.ts) copies it and records the version it copied (`syncedStatement`).
 * A lost hand-over is found by the sweeper (`overdueQuery`), so a crash at any point loses nothing: the change is
 * in D1 with its version, and the copy is idempotent.
 *
 * The move: stories up to `legacy_max` were indexed in D1 (migrations/0018, 0023); each is copied to its shard in
 * rowid order and then the watermark passes it. D1's statements answer for the stories at or above the watermark, a
 * shard's for those below it (or newer than `legacy_max`), both reading the same watermark, so at every instant a
 * story is searched in exactly one place (the merge never counts it twice). Its D1 index rows are deleted after, a
 * chunk at a time, and once the watermark passed `legacy_max`, whatever a step cut short left there; then
 * `legacy_max` is set to 0 (no story is legacy: the move is done and clean). A legacy story's writes keep feeding D1's
 * index until it is moved (`legacyIndexSql`).
 */

/** SQL (`SET …`, on `stories`): the story changed in a way search shows; it is behind in its shard from now. */
export const searchChanged = (now: string): SQL => sql`search_version = search_version + 1, search_dirty_at = coalesce(search_dirty_at, ${now})`;

/** `searchChanged` as the columns of Drizzle's `update(stories).set(…)`. */
export const searchChangedSet = (now: string) => ({
  searchVersion: sql`search_version + 1`,
  searchDirtyAt: sql`coalesce(search_dirty_at, ${now})`,
});

/** The story's change as a statement of its own (a hide, whose own UPDATE is on another table). */
export const storyChangedStatement = (db: Db, storyId: SQL | string, now: string) =>
  rawRun(db, sql`UPDATE stories SET ${searchChanged(now)} WHERE id = ${storyId}`);

/**
 * After a sync copied the story's state at `version` and its segments up to rowid `upto`: behind no longer when no
 * change came since (`version`: 0 while segments remain to copy, which leaves the story behind). A change that came
 * since has its own hand-over on the way: the story counts as behind from now, so a story written all day is
 * resent by the sweeper only when no sync reached it for the resend delay.
 */
export const syncedStatement = (db: Db, storyId: string, version: number, upto: number, now: string) =>
  rawRun(
    db,
    sql`UPDATE stories SET search_synced = max(search_synced, ${version}), search_upto = max(search_upto, ${upto}),
      search_dirty_at = CASE WHEN search_version <= max(search_synced, ${version}) THEN NULL ELSE ${now} END
    WHERE id = ${storyId}`,
  );

/** Stories behind since before `before` (their hand-over lost), a few at a time, by the partial index. */
export const overdueQuery = (db: Db, before: string, limit: number) =>
  rawAll<{ id: string }>(db, sql`SELECT id FROM stories WHERE search_dirty_at IS NOT NULL AND search_dirty_at < ${before} LIMIT ${limit}`);

/** The move's next story (none when every legacy story was moved): the first at or after the watermark. */
export const nextToMoveQuery = (db: Db) =>
  rawAll<{ id: string | null; rowid: number | null; watermark: number; legacy_max: number }>(
    db,
    sql`SELECT s.id, s.rowid, m.watermark, m.legacy_max FROM search_move m
      LEFT JOIN stories s ON s.rowid = (SELECT min(rowid) FROM stories WHERE rowid >= m.watermark AND rowid <= m.legacy_max) WHERE m.id = 1`,
  );

/**
 * Once every legacy story was moved, whatever is left in D1's index is nobody's (a step a crash cut short after its
 * batch): a chunk of it deleted.
 */
export const leftoverDeleted = (db: Db) => [
  rawRun(db, sql`DELETE FROM search_segments WHERE rowid IN (SELECT rowid FROM search_segments LIMIT ${LEGACY_ROWS_PER_DELETE})`),
  rawRun(db, sql`DELETE FROM search_stories WHERE rowid IN (SELECT rowid FROM search_stories LIMIT ${LEGACY_ROWS_PER_DELETE})`),
];

/**
 * The story (rowid `rowid`), now in its shard, is searched there from now: the watermark passes it (only forward),
 * and its stories' index row in D1 goes. `story` null: no legacy story is left, the move is done.
 */
export function movedStatements(db: Db, story: { id: string; rowid: number } | null) {
  if (!story) return [rawRun(db, sql`UPDATE search_move SET watermark = legacy_max + 1 WHERE id = 1 AND watermark <= legacy_max`)];
  return [
    rawRun(db, sql`UPDATE search_move SET watermark = ${story.rowid + 1} WHERE id = 1 AND watermark <= ${story.rowid}`),
    rawRun(db, sql`DELETE FROM search_stories WHERE rowid = ${story.rowid}`),
  ];
}

/**
 * Stories after `legacy_max` never copied to their shard: those the old code wrote between migration 0023 and the
 * deploy (it handed nothing over), found by a range of rowids once, at the move's end.
 */
export const stragglersQuery = (db: Db, after: number, limit: number) =>
  rawAll<{ id: string }>(db, sql`SELECT id FROM stories WHERE rowid > ${after} AND search_synced = 0 ORDER BY rowid LIMIT ${limit}`);

/** The move is clean: no story is legacy (`legacy_max` 0), D1's index is empty. */
export const moveCleanStatement = (db: Db) => rawRun(db, sql`UPDATE search_move SET legacy_max = 0 WHERE id = 1 AND watermark > legacy_max`);

/** Index rows a move deletes in one statement: a long story's go a chunk at a time (a statement's time is bounded). */
const LEGACY_ROWS_PER_DELETE = 500;

/**
 * A moved story's segments' rows in D1's index after rowid `after`, deleted (`LEGACY_ROWS_PER_DELETE` of them), and
 * the last rowid deleted (null: none was left). Search no longer reads them (the watermark passed the story).
 */
export function legacyRowsDeleted(db: Db, storyId: string, after: number) {
  const chunk = sql`SELECT rowid FROM segments WHERE story_id = ${storyId} AND rowid > ${after} ORDER BY rowid LIMIT ${LEGACY_ROWS_PER_DELETE}`;
  return [
    rawAll<{ last: number | null }>(db, sql`SELECT max(rowid) AS last FROM (${chunk})`),
    rawRun(db, sql`DELETE FROM search_segments WHERE rowid IN (${chunk})`),
  ] as const;
}
