import { type SQL, sql } from "drizzle-orm";
import { type Db, rawAll, rawRun } from "../../db/client";
import { prepared } from "../../db/compile";
import type { Tag } from "../../lib/tag-rule";

/**
 * Tags: a story's in `story_tags` (its spelling of each, in its order), every tag's first spelling in
 * `tags`. What makes two spellings one tag is src/lib/tag-rule.ts; which stories a tag lists is src/domain/discovery/story-filter.ts.
 */

/** A story's tags' spellings in order, as a column of a Drizzle select on `stories` (JSON parsed). */
export const storyTagsColumn = sql<
  string[]
>`(SELECT json_group_array(st.name ORDER BY st.position) FROM story_tags st WHERE st.story_id = "stories"."id")`.mapWith(
  (text: string) => JSON.parse(text) as string[],
);

/**
 * The statements that give a story these tags (none for none), each only while `condition` holds (SQL, `1` for a new
 * story written in the same batch): the tags' first spellings kept (`DO NOTHING`), the story's own rows written. A
 * story's old tags must be gone first (`untagStatement`).
 */
export function storyTagStatements(db: Db, storyId: string, tags: Tag[], now: string, condition: SQL = sql`1`) {
  if (!tags.length) return [];
  const list = JSON.stringify(tags);
  return [
    rawRun(
      db,
      sql`INSERT INTO tags (key, name, created_at) SELECT json_extract(value, '$.key'), json_extract(value, '$.name'), ${now}
        FROM json_each(${list}) WHERE ${condition} ON CONFLICT (key) DO NOTHING`,
    ),
    rawRun(
      db,
      sql`INSERT INTO story_tags (story_id, tag_key, name, position) SELECT ${storyId}, json_extract(value, '$.key'), json_extract(value, '$.name'), key
        FROM json_each(${list}) WHERE ${condition}`,
    ),
  ];
}

/** Takes a story's tags off, while `condition` holds (its tags are being replaced). */
export const untagStatement = (db: Db, storyId: string, condition: SQL) => rawRun(db, sql`DELETE FROM story_tags WHERE story_id = ${storyId} AND ${condition}`);

export interface TagSuggestion {
  name: string;
  key: string;
  stories_count: number;
}

/** The upper bound of the keys that start with a prefix: no character sorts above U+10FFFF (SQLite compares UTF-8 bytes). */
const afterPrefix = (prefix: string) => `${prefix}\u{10FFFF}`;

/** Listed stories (active, not hidden) carrying the tag `t`. */
const listedWith = (t: string) =>
  sql.raw(`(SELECT count(*) FROM story_tags lt JOIN stories ls ON ls.id = lt.story_id
    WHERE lt.tag_key = ${t}.key AND ls.status = 'active' AND ls.hidden_at IS NULL)`);

const suggestions = prepared(
  (v: { from: string; to: string; limit: number }) =>
    sql`SELECT t.name, t.key, ${listedWith("t")} AS stories_count FROM tags t
      WHERE t.key >= ${v.from} AND t.key < ${v.to}
        AND EXISTS (SELECT 1 FROM story_tags et JOIN stories es ON es.id = et.story_id WHERE et.tag_key = t.key AND es.status = 'active' AND es.hidden_at IS NULL)
      ORDER BY t.key LIMIT ${v.limit}`,
);

/**
 * Tags whose key starts with `prefix` (a key already: src/lib/tag-rule.ts), in the order of their keys, each with how many
 * listed stories carry it; only tags some listed story carries (a hidden or archived story's tags are not suggested).
 * One statement, a range of the tags' primary key.
 */
export async function suggestTags(db: Db, prefix: string, limit: number): Promise<TagSuggestion[]> {
  return rawAll<TagSuggestion>(db, suggestions({ from: prefix, to: afterPrefix(prefix), limit }));
}

/** A tag by its key, with how many listed stories carry it (a statement for a batch; no row: no such tag). */
export const tagQuery = (db: Db, key: string) =>
  rawAll<TagSuggestion>(db, sql`SELECT t.name, t.key, ${listedWith("t")} AS stories_count FROM tags t WHERE t.key = ${key}`);
