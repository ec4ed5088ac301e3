import { type SQL, sql } from "drizzle-orm";
import type { Rating } from "../../config";
import type { Authorship, StorySort } from "../../schemas/fields";
import { authorshipSql, botShareSql } from "../shared/authorship";

/**
 * Which stories a list shows and in what order, as SQL on `stories s`, in one place: every list of stories (built by
 * src/domain/stories/story-list.ts: `GET /stories`, MCP's `list_stories`, the web reader's home and tag pages), search
 * and the tag's feed, each in its own statements. Hidden stories are never listed (their owner and moderators open
 * them by id).
 * Why, and what was weighed: docs/decisions.md, "Finding and reading stories: labels, tags, the map, the path page".
 */

export interface StoryFilter {
  status: "active" | "archived";
  /** Tag keys the story must all carry (`tag=`). */
  tags: string[];
  /** Tag keys it must carry none of (`exclude_tag=`). */
  excludeTags: string[];
  /** Any of these ratings; none: any rating. */
  ratings: Rating[];
  /** Any of these authorships; none: any. */
  authorships: Authorship[];
}

/**
 * What a reader chose not to see in lists: an account's preference (read by the list's own query, no statement of
 * its own), or an anonymous reader's, from their cookie. Null: nothing hidden (the API and MCP filter only by what
 * the request says).
 */
export type ReaderPreference = { accountId: string } | { hideMature: boolean; hiddenTags: string[] } | null;

/** The values a filtered list binds (JSON arrays for the lists, read by `json_each`), beside its own. */
export interface FilterValues extends Record<string, unknown> {
  status: string;
  tags: string;
  tagCount: number;
  excludeTags: string;
  ratings: string;
  authorships: string;
  accountId: string;
  hiddenTags: string;
  since: string;
}

/** What decides the filter's SQL text: which filters are given, the preference's kind, the sort. */
export interface FilterShape {
  tags: boolean;
  excludeTags: boolean;
  ratings: boolean;
  authorships: boolean;
  preference: "none" | "account" | "cookie" | "cookie-mature";
  sort: StorySort;
}

export const shapeKey = (s: FilterShape) => `${+s.tags}${+s.excludeTags}${+s.ratings}${+s.authorships} ${s.preference} ${s.sort}`;

const WEEK_MS = 7 * 86_400_000;

/** A filter, a preference and a sort as the values and shape of a prepared statement. */
export function filterOf(filter: StoryFilter, preference: ReaderPreference, sort: StorySort, now = Date.now()): { values: FilterValues; shape: FilterShape } {
  const cookie = preference && "hideMature" in preference ? preference : null;
  const values: FilterValues = {
    status: filter.status,
    tags: JSON.stringify(filter.tags),
    tagCount: filter.tags.length,
    excludeTags: JSON.stringify(filter.excludeTags),
    ratings: JSON.stringify(filter.ratings),
    authorships: JSON.stringify(filter.authorships),
    accountId: preference && "accountId" in preference ? preference.accountId : "",
    hiddenTags: JSON.stringify(cookie?.hiddenTags ?? []),
    since: new Date(now - WEEK_MS).toISOString(),
  };
  const shape: FilterShape = {
    tags: filter.tags.length > 0,
    excludeTags: filter.excludeTags.length > 0,
    ratings: filter.ratings.length > 0,
    authorships: filter.authorships.length > 0,
    preference: !preference ? "none" : "accountId" in preference ? "account" : preference.hideMature ? "cookie-mature" : "cookie",
    sort,
  };
  return { values, shape };
}

/** SQL: the story `s` carries one of the tag keys in the JSON array `keys`. */
const taggedWithAny = (keys: SQL, alias: string) =>
  sql`EXISTS (SELECT 1 FROM story_tags ${sql.raw(alias)} WHERE ${sql.raw(alias)}.story_id = s.id AND ${sql.raw(alias)}.tag_key IN (SELECT value FROM json_each(${keys})))`;

/** SQL: the stories `s` a list shows (its WHERE condition). */
export function storyFilterSql(v: FilterValues, shape: FilterShape): SQL {
  // With tags, the stories are found from the tag's index (`+` keeps SQLite from walking every story of the status in
  // order instead, probing each: a rare tag would read the whole list).
  const parts = [shape.tags ? sql`+s.status = ${v.status} AND s.hidden_at IS NULL` : sql`s.status = ${v.status} AND s.hidden_at IS NULL`];
  if (shape.tags) {
    parts.push(
      sql`s.id IN (SELECT ft.story_id FROM story_tags ft WHERE ft.tag_key IN (SELECT value FROM json_each(${v.tags})) GROUP BY ft.story_id HAVING count(*) = ${v.tagCount})`,
    );
  }
  if (shape.excludeTags) parts.push(sql`NOT ${taggedWithAny(sql`${v.excludeTags}`, "xt")}`);
  if (shape.ratings) parts.push(sql`s.rating IN (SELECT value FROM json_each(${v.ratings}))`);
  if (shape.authorships) parts.push(sql`${authorshipSql("s")} IN (SELECT value FROM json_each(${v.authorships}))`);
  if (shape.preference === "account") {
    parts.push(sql`NOT EXISTS (SELECT 1 FROM preferences p WHERE p.account_id = ${v.accountId}
      AND ((p.hide_mature AND s.rating = 'mature') OR ${taggedWithAny(sql`p.hidden_tags`, "ht")}))`);
  }
  if (shape.preference === "cookie-mature") parts.push(sql`s.rating <> 'mature'`);
  if (shape.preference === "cookie" || shape.preference === "cookie-mature") parts.push(sql`NOT ${taggedWithAny(sql`${v.hiddenTags}`, "ht")}`);
  return sql.join(parts, sql` AND `);
}

/** SQL: what the sort ranks a story `s` by, before its age (none for `new`), selected `AS sort_key`. */
export function sortKeySql(v: FilterValues, sort: StorySort): SQL | null {
  if (sort === "active") return sql`(SELECT count(*) FROM logs l WHERE l.story_id = s.id AND l.created_at >= ${v.since})`;
  if (sort === "top") return sql`(SELECT coalesce(sum(b.vote_score), 0) FROM branches b WHERE b.story_id = s.id AND b.hidden_at IS NULL)`;
  return null;
}

/** The list's order on an alias (`s`, or `r` for the rows of a subquery selecting `sort_key`, `created_at` and `id`). */
export const storyOrder = (t: string, sort: StorySort) =>
  `${sort === "new" ? "" : `${t === "s" ? "sort_key" : `${t}.sort_key`} DESC, `}${t}.created_at DESC, ${t}.id DESC`;

/**
 * A story's labels as a list shows them, on `stories s`: its `tags` (a JSON array of their spellings, in
 * order), `rating`, `warnings` (a JSON array), `authorship` and `bot_share`.
 */
export const storyLabelColumns = sql`(SELECT json_group_array(st.name ORDER BY st.position) FROM story_tags st WHERE st.story_id = s.id) AS tags,
  s.rating, s.warnings, ${authorshipSql("s")} AS authorship, ${botShareSql("s")} AS bot_share`;
