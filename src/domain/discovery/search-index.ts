import { type SQL, sql } from "drizzle-orm";
import { type Db, rawRun } from "../../db/client";
import { indexText } from "../../lib/search-text";
import type { Tag } from "../../lib/tag-rule";

/**
 * The full-text indexes (migrations/0018_search.sql), fed by the write's own batch: a trigger could not
 * segment CJK text (src/lib/search-text.ts). Each index row has its story's or segment's rowid; hides touch nothing
 * here, as search joins every hit back to its live rows (src/domain/discovery/search.ts).
 */

/** A story's tags as its index row holds them: their spellings, in order. */
const tagsText = (tags: readonly Tag[]) => tags.map((t) => t.name).join(", ");

/** A new story's index row, written after its row in the same batch. */
export const indexNewStory = (db: Db, storyId: string, story: { title: string; background: string; tags: readonly Tag[] }) =>
  rawRun(
    db,
    sql`INSERT INTO search_stories (rowid, title, background, tags)
      SELECT rowid, ${indexText(story.title)}, ${indexText(story.background)}, ${indexText(tagsText(story.tags))} FROM stories WHERE id = ${storyId}`,
  );

/** The index row of a story whose text changed (the columns given), while `condition` holds (SQL on `stories`); none when none did. */
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

/** A segment's index row, written only if the segment was (the rowid is the row the batch just wrote). */
export const indexSegmentSql = (v: { id: string; indexedContent: string }): SQL =>
  sql`INSERT INTO search_segments (rowid, content) SELECT rowid, ${v.indexedContent} FROM segments WHERE id = ${v.id}`;
