import { type SQL, sql } from "drizzle-orm";
import { type Db, rawRun } from "../../db/client";
import { indexText } from "../../lib/search-text";
import type { Tag } from "../../lib/tag-rule";

/**
 * D1's own full-text indexes (migrations/0018_search.sql), which hold only a deployment's older stories until the
 * move copies each to its search shard (src/domain/discovery/search-move.ts): a legacy story's writes keep them
 * current until then, in the write's own batch (a trigger could not segment CJK text: src/lib/search-text.ts). Each
 * index row has its story's or segment's rowid; hides touch nothing here, as search joins every hit back to its live
 * rows (src/domain/discovery/search.ts). Every other story is indexed in its shard only.
 */

/** A story's tags as its index row holds them: their spellings, in order. */
const tagsText = (tags: readonly Tag[]) => tags.map((t) => t.name).join(", ");

/**
 * The D1 index row of a legacy story whose text changed (the columns given), while `condition` holds (SQL on
 * `stories`); none when none did. A story with no row there (moved, or newer) is unchanged by it.
 */
export function reindexStory(db: Db, storyId: string, change: { title?: string; background?: string; tags?: readonly Tag[] }, condition: SQL) {
  const set: SQL[] = [];
  if (change.title !== undefined) set.push(sql`title = ${indexText(change.title)}`);
  if (change.background !== undefined) set.push(sql`background = ${indexText(change.background)}`);
  if (change.tags !== undefined) set.push(sql`tags = ${indexText(tagsText(change.tags))}`);
  if (!set.length) return [];
  return [
    rawRun(db, sql`UPDATE search_stories SET ${sql.join(set, sql`, `)} WHERE rowid = (SELECT rowid FROM stories WHERE id = ${storyId} AND ${condition})`),
  ];
}

/**
 * A segment's row in D1's own index, written only while its story is a legacy story not yet moved (every other
 * story is searched in its shard). The rowid is the row the batch just wrote.
 */
export const legacyIndexSql = (v: { id: string; indexedContent: string }): SQL =>
  sql`INSERT INTO search_segments (rowid, content) SELECT g.rowid, ${v.indexedContent} FROM segments g
    JOIN stories s ON s.id = g.story_id JOIN search_move m ON m.id = 1 WHERE g.id = ${v.id} AND s.rowid BETWEEN m.watermark AND m.legacy_max`;
