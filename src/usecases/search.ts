import { type Db, nowIso, oneTrip, runRead } from "../db/client";
import { type SearchQuery, searchRead } from "../domain/discovery/search";
import {
  leftoverDeleted,
  legacyRowsDeleted,
  moveCleanStatement,
  movedStatements,
  nextToMoveQuery,
  stragglersQuery,
  syncedStatement,
} from "../domain/discovery/search-move";
import { type SnapshotRead, readSnapshot } from "../domain/discovery/search-snapshot";
import type { ReaderPreference } from "../domain/discovery/story-filter";
import { hidingRead } from "../domain/reading/reader-list";
import type { SearchShards } from "../durable/search-shards";

/**
 * Search across its shards (src/domain/discovery/search.ts), keeping them in step with D1
 * (src/domain/discovery/search-move.ts), and the move of a deployment's older stories out of D1's index.
 */

/**
 * Whether this isolate saw the move done (it never comes undone): then a search asks D1 for nothing but its context.
 * Why memory and not a read: it saves each search two statements in the first trip for the life of the isolate.
 */
let moveSeenDone = false;

/** The first step's plan, remembering a finished move. */
function planned<T extends { moved: boolean }>(plan: T): T {
  if (plan.moved) moveSeenDone = true;
  return plan;
}

/** Stories and segments matching the words, ranked, a page and the counts: one D1 statement, then every shard at once. */
export async function searchEverything(db: Db, shards: SearchShards, q: SearchQuery, preference: ReaderPreference = null) {
  return shards.search(planned(await runRead(db, searchRead(db, q, preference, moveSeenDone))));
}

/** The web reader's search page: the hits as `GET /search` finds them, the reader's preference applied and said. */
export async function readerSearch(db: Db, shards: SearchShards, q: SearchQuery, preference: ReaderPreference) {
  const [plan, hiding] = await oneTrip(db, searchRead(db, q, preference, moveSeenDone), hidingRead(db, preference));
  return { ...(await shards.search(planned(plan))), hiding };
}

/**
 * Copies a story to its shard until the copy is caught up (a story with many new segments, a chunk at a time),
 * recording each chunk's progress in D1 after the shard took it: a crash between the two copies it again, which
 * the shard takes as the same.
 */
export async function syncStory(db: Db, shards: SearchShards, storyId: string): Promise<void> {
  for (;;) {
    const read = await readSnapshot(db, storyId);
    if (!read || !(await copied(db, shards, storyId, read))) return;
  }
}

/** One chunk into the shard, then its progress in D1 (`record` may defer it); answers whether more remain. */
async function copied(db: Db, shards: SearchShards, storyId: string, read: SnapshotRead, record = (w: Promise<unknown>) => w): Promise<boolean> {
  await shards.apply(read.snapshot);
  const upto = read.snapshot.segments.at(-1)?.rowid ?? read.upto;
  await record(syncedStatement(db, storyId, read.more ? 0 : read.version, upto, nowIso()));
  return read.more;
}

/**
 * A change search must show before its answer (a hide, a story's edit): the story copied to its shard in the request,
 * one D1 read and the shard's call; what was copied is recorded after the answer (`background`), and the rest of a
 * long story's segments by the queue. Should any of it fail, the story is still behind in D1, and the queue's or the
 * sweeper's sync repairs it.
 */
export async function syncBeforeAnswer(db: Db, shards: SearchShards, storyId: string, background: (work: Promise<unknown>) => Promise<void>) {
  try {
    const read = await readSnapshot(db, storyId);
    if (read && (await copied(db, shards, storyId, read, background))) await shards.changed([storyId]);
  } catch (err) {
    console.error(`search sync of story ${storyId} failed; the queue will repeat it`, err);
    await shards.changed([storyId], true);
  }
}

/** A moved story's rows in D1's index, deleted a chunk at a time (a crash leaves some: search skips them, the move's end deletes them). */
async function deleteLegacyRows(db: Db, storyId: string): Promise<void> {
  for (let after = 0; ; ) {
    const [[{ last }]] = await db.batch(legacyRowsDeleted(db, storyId, after));
    if (last === null) return;
    after = last;
  }
}

/**
 * Up to `stories` steps of the move (none begun after `until`), in rowid order: the next legacy story copied to its shard, the watermark moved
 * past it (search reads it from its shard from then on), then its rows in D1's index deleted a chunk at a time; once
 * the watermark passed `legacy_max`, the stories the old code wrote after the migration are copied and whatever a
 * cut-short step left in D1's index is deleted. Answers whether more remain. Two movers at
 * once do no harm: each copy is idempotent, and the watermark only moves forward past a story that was copied.
 */
/** The stories the old code wrote between the migration and the deploy, copied to their shards (a hundred a read). */
async function syncStragglers(db: Db, shards: SearchShards, legacyMax: number): Promise<void> {
  for (let rows = await stragglersQuery(db, legacyMax, 100); rows.length; rows = await stragglersQuery(db, legacyMax, 100)) {
    for (const { id } of rows) await syncStory(db, shards, id);
  }
}

/**
 * What is left in D1's index once every legacy story was moved, deleted a chunk at a time, and then the move marked
 * clean (`legacy_max` 0: no story is legacy; searched in shards alone, as a deployment that never had D1's index).
 */
async function deleteLeftovers(db: Db): Promise<void> {
  for (;;) {
    const results = (await db.batch(leftoverDeleted(db) as [ReturnType<typeof leftoverDeleted>[0]])) as D1Result[];
    if (results.every((r) => r.meta.changes === 0)) break;
  }
  await db.batch([moveCleanStatement(db)]);
}

export async function moveSteps(db: Db, shards: SearchShards, stories: number, until = Number.POSITIVE_INFINITY): Promise<boolean> {
  for (let i = 0; i < stories && Date.now() < until; i++) {
    const [next] = await nextToMoveQuery(db);
    if (!next || next.legacy_max === 0) return false;
    if (next.watermark > next.legacy_max) {
      await syncStragglers(db, shards, next.legacy_max);
      await deleteLeftovers(db);
      return false;
    }
    const story = next.id !== null && next.rowid !== null ? { id: next.id, rowid: next.rowid } : null;
    if (story) await syncStory(db, shards, story.id);
    await db.batch(movedStatements(db, story) as [ReturnType<typeof movedStatements>[0]]);
    if (story) await deleteLegacyRows(db, story.id);
  }
  return true;
}
