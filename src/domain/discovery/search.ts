import { type SQL, sql } from "drizzle-orm";
import type { ContentWarning, Rating } from "../../config";
import { type Db, nowIso, rawAll, readOf, runRead } from "../../db/client";
import { preparedByShape } from "../../db/compile";
import { pagination } from "../../lib/pagination";
import { ELLIPSIS, MARK_CLOSE, MARK_OPEN, type MatchQuery, matchQuery, snippetOf } from "../../lib/search-text";
import { validationError } from "../../lib/errors";
import type { Authorship } from "../../schemas/fields";
import type { SearchType } from "../../schemas/search";
import { noneSuspended } from "../standing/rule";
import {
  type FilterShape,
  type FilterValues,
  type ReaderPreference,
  type StoryFilter,
  filterOf,
  shapeKey,
  storyFilterSql,
  storyLabelColumns,
} from "./story-filter";

/**
 * Full-text search over the FTS5 indexes the writes feed (src/domain/discovery/search-index.ts): stories by title,
 * background and tags, segments by their text, ranked by bm25, a page and the counts in one round trip.
 *
 * What may be found is decided at read, on the live rows every hit is joined back to, so a hide or a suspension takes
 * a hit out at once with no index write: a story only as lists show it (src/domain/discovery/story-filter.ts: not hidden, the
 * status and filters asked for, the reader's preference), a segment only when it, its branch and its story are shown
 * so, and neither when an account whose text the hit shows (the story's owner, the branch's creator, the segment's
 * author) is suspended. Hidden items are found by nobody, their authors and moderators included: a list shows none.
 * Why, and what was weighed: docs/decisions.md, "Search".
 */

export interface SearchQuery extends StoryFilter {
  q: string;
  type: SearchType;
  limit: number;
  offset: number;
}

/** How much text a snippet takes around its match, in tokens (a word, or a CJK character). */
const SNIPPET_TOKENS = 32;
/** bm25's weight of a story's title, background and tags (a title's match counts most). */
const STORY_WEIGHTS = sql.raw("10.0, 1.0, 5.0");

interface SearchValues extends FilterValues {
  match: string;
  now: string;
}

interface Shape {
  type: SearchType;
  filter: FilterShape;
}

const searchesStories = (type: SearchType) => type !== "segment";
const searchesSegments = (type: SearchType) => type !== "story";

/** The stories the match finds that may be shown, with `columns`. */
const storyHits = (v: SearchValues, filter: FilterShape, columns: SQL) =>
  sql`SELECT ${columns} FROM search_stories JOIN stories s ON s.rowid = search_stories.rowid
    WHERE search_stories MATCH ${v.match} AND ${storyFilterSql(v, filter)} AND ${noneSuspended(sql`s.owner_id`, v.now)}`;

/** The segments the match finds that may be shown, with `columns`. */
const segmentHits = (v: SearchValues, filter: FilterShape, columns: SQL) =>
  sql`SELECT ${columns} FROM search_segments JOIN segments g ON g.rowid = search_segments.rowid
      JOIN branches b ON b.id = g.branch_id JOIN stories s ON s.id = b.story_id
    WHERE search_segments MATCH ${v.match} AND g.hidden_at IS NULL AND b.hidden_at IS NULL AND ${storyFilterSql(v, filter)}
      AND ${noneSuspended(sql`g.author_id, b.creator_id, s.owner_id`, v.now)}`;

const shapeOf = (s: Shape) => `${s.type} ${shapeKey(s.filter)}`;

/** The number of hits of each type searched (null for the other). */
const countsStatement = preparedByShape(shapeOf, (v: SearchValues, { type, filter }: Shape) => {
  const stories = searchesStories(type) ? sql`(SELECT count(*) FROM (${storyHits(v, filter, sql`1`)}))` : sql`NULL`;
  const segments = searchesSegments(type) ? sql`(SELECT count(*) FROM (${segmentHits(v, filter, sql`1`)}))` : sql`NULL`;
  return sql`SELECT ${stories} AS stories, ${segments} AS segments`;
});

const charSql = (c: string) => `char(${c.charCodeAt(0)})`;

/** A snippet of an index's column (-1: the best matching one), marked for `snippetOf`. */
const snippetSql = (table: string, column: number) =>
  sql.raw(`snippet(${table}, ${column}, ${charSql(MARK_OPEN)}, ${charSql(MARK_CLOSE)}, ${charSql(ELLIPSIS)}, ${SNIPPET_TOKENS})`);

/**
 * The page: the hits ranked (stories first with type=all, each type by bm25, then rowid), then each hit of the page
 * read with its snippet: `snippet()` runs for the page's rows only, the index asked again for just their rowids
 * (`CROSS JOIN` keeps the page the outer loop: SQLite would otherwise run the whole match again and probe the page).
 */
const pageStatement = preparedByShape(shapeOf, (v: SearchValues & { limit: number; offset: number }, { type, filter }: Shape) => {
  const ranked = [
    ...(searchesStories(type) ? [storyHits(v, filter, sql`0 AS kind, search_stories.rowid AS rid, bm25(search_stories, ${STORY_WEIGHTS}) AS score`)] : []),
    ...(searchesSegments(type) ? [segmentHits(v, filter, sql`1 AS kind, search_segments.rowid AS rid, bm25(search_segments) AS score`)] : []),
  ];
  const read = [
    ...(searchesStories(type)
      ? [
          sql`SELECT page.kind, s.id AS story_id, s.title AS story_title, s.language, ${storyLabelColumns},
            NULL AS branch_id, NULL AS branch_title, NULL AS is_main, NULL AS segment_id, NULL AS sequence_order,
            NULL AS author_id, NULL AS author_type, NULL AS author_name, NULL AS created_at,
            ${snippetSql("search_stories", -1)} AS snippet, page.score, page.rid
          FROM page CROSS JOIN search_stories ON search_stories.rowid = page.rid JOIN stories s ON s.rowid = page.rid
          WHERE page.kind = 0 AND search_stories MATCH ${v.match}`,
        ]
      : []),
    ...(searchesSegments(type)
      ? [
          sql`SELECT page.kind, s.id AS story_id, s.title AS story_title, s.language, ${storyLabelColumns},
            b.id AS branch_id, b.title AS branch_title, b.is_main, g.id AS segment_id, g.sequence_order,
            g.author_id, g.author_type, g.author_name, g.created_at,
            ${snippetSql("search_segments", 0)} AS snippet, page.score, page.rid
          FROM page CROSS JOIN search_segments ON search_segments.rowid = page.rid JOIN segments g ON g.rowid = page.rid
            JOIN branches b ON b.id = g.branch_id JOIN stories s ON s.id = b.story_id
          WHERE page.kind = 1 AND search_segments MATCH ${v.match}`,
        ]
      : []),
  ];
  return sql`WITH page AS MATERIALIZED (SELECT kind, rid, score FROM (${sql.join(ranked, sql` UNION ALL `)})
      ORDER BY kind, score, rid LIMIT ${v.limit} OFFSET ${v.offset})
    ${sql.join(read, sql` UNION ALL `)} ORDER BY kind, score, rid`;
});

interface HitRow {
  kind: 0 | 1;
  story_id: string;
  story_title: string;
  language: string;
  tags: string;
  rating: Rating;
  warnings: string;
  authorship: Authorship;
  bot_share: number;
  branch_id: string | null;
  branch_title: string | null;
  is_main: number | null;
  segment_id: string | null;
  sequence_order: number | null;
  author_id: string | null;
  author_type: "human" | "bot" | null;
  author_name: string | null;
  created_at: string | null;
  snippet: string;
}

/** A row of the page as the API shows a hit. */
function hitOf(r: HitRow, query: MatchQuery) {
  const story = {
    id: r.story_id,
    title: r.story_title,
    language: r.language,
    tags: JSON.parse(r.tags) as string[],
    rating: r.rating,
    warnings: JSON.parse(r.warnings) as ContentWarning[],
    authorship: r.authorship,
    bot_share: r.bot_share,
  };
  const found = snippetOf(r.snippet, query.bigrams);
  if (r.kind === 0) return { type: "story" as const, story, branch: null, segment: null, ...found };
  return {
    type: "segment" as const,
    story,
    branch: { id: r.branch_id!, title: r.branch_title!, is_main: r.is_main === 1 },
    segment: {
      id: r.segment_id!,
      sequence_order: r.sequence_order!,
      author_id: r.author_id!,
      author_type: r.author_type!,
      author_name: r.author_name!,
      created_at: r.created_at!,
    },
    ...found,
  };
}

export type SearchHit = ReturnType<typeof hitOf>;

/**
 * The words as a MATCH expression (src/lib/search-text.ts), or 400 naming `q` when there is no word to search for
 * (its field refuses that first; this holds for any caller).
 */
function matchOf(q: string): MatchQuery {
  const query = matchQuery(q);
  if (!query) throw validationError([{ field: "q", issue: "has no word to search for (only punctuation)" }]);
  return query;
}

/** `search` as a read that can share a round trip: the counts and the page, two statements in one batch. */
export function searchRead(db: Db, q: SearchQuery, preference: ReaderPreference = null) {
  const query = matchOf(q.q);
  const { values, shape: filter } = filterOf(q, preference, "new");
  const v: SearchValues = { ...values, match: query.match, now: nowIso() };
  const shape: Shape = { type: q.type, filter };
  return readOf(
    [
      rawAll<{ stories: number | null; segments: number | null }>(db, countsStatement(v, shape)),
      rawAll<HitRow>(db, pageStatement({ ...v, limit: q.limit, offset: q.offset }, shape)),
    ],
    ([[counts], rows]) => {
      const count = (counts.stories ?? 0) + (counts.segments ?? 0);
      return { results: rows.map((r) => hitOf(r, query)), count, counts, pagination: pagination(q.limit, q.offset, count) };
    },
  );
}

/** Stories and segments matching the words, ranked, a page and the counts: one round trip. */
export const search = (db: Db, q: SearchQuery, preference: ReaderPreference = null) => runRead(db, searchRead(db, q, preference));
