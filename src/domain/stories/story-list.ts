import { type SQL, sql } from "drizzle-orm";
import type { StorySort } from "../../schemas/fields";
import {
  type FilterShape,
  type FilterValues,
  type ReaderPreference,
  type StoryFilter,
  filterOf,
  sortKeySql,
  storyFilterSql,
  storyLabelColumns,
  storyOrder,
} from "../discovery/story-filter";

/**
 * The SQL of every list of stories in a sort's order, in one place: `GET /stories` and MCP's `list_stories`
 * (`listStories`), the web reader's home and tag pages (src/domain/reading/reader-list.ts). Which stories a list may
 * show (its filters, the reader's preference, never a hidden story) is src/domain/discovery/story-filter.ts, which
 * search and the tag's feed share; a list adds its order, its page and its total here. Each caller chooses only its
 * columns (the fields its door answers) and how it reads the page (rows, or one JSON value), so no two lists can
 * disagree on which stories they show or in what order.
 */

/** A list asked for: its filter, its sort and its page. */
export interface StoryListQuery extends StoryFilter {
  sort: StorySort;
  limit: number;
  offset: number;
}

/** What a list's statements bind: the filter's values and the page's. */
export interface StoryListValues extends FilterValues {
  limit: number;
  offset: number;
}

/** A list asked for and the reader's preference as the values and shape of its prepared statements (`shapeKey`). */
export function storyListOf(q: StoryListQuery, preference: ReaderPreference, now?: number): { values: StoryListValues; shape: FilterShape } {
  const { values, shape } = filterOf(q, preference, q.sort, now);
  return { values: { ...values, limit: q.limit, offset: q.offset }, shape };
}

/** A column every list shows: the story's branches anyone may open. */
export const shownBranchesCount = sql`(SELECT count(*) FROM branches b WHERE b.story_id = s.id AND b.hidden_at IS NULL)`;

/**
 * A list's statements on `stories s`, to be prepared (the values are only spliced in):
 * - `page`: the page's stories with `columns`, their labels (`storyLabelColumns`) and `sort_key` (what the sort ranks
 *   by; null for `new`), in the sort's order;
 * - `total`: how many stories the list holds in all (`total`);
 * - `order(alias)`: the page's order on the rows of a query reading it as `alias` (a JSON aggregate's own ORDER BY:
 *   SQLite keeps no subquery's order).
 */
export function storyListSql(v: StoryListValues, shape: FilterShape, columns: SQL) {
  const where = storyFilterSql(v, shape);
  return {
    page: sql`SELECT ${columns}, ${storyLabelColumns}, ${sortKeySql(v, shape.sort) ?? sql`NULL`} AS sort_key
      FROM stories s WHERE ${where} ORDER BY ${sql.raw(storyOrder("s", shape.sort))} LIMIT ${v.limit} OFFSET ${v.offset}`,
    total: sql`SELECT count(*) AS total FROM stories s WHERE ${where}`,
    order: (alias: string) => storyOrder(alias, shape.sort),
  };
}
