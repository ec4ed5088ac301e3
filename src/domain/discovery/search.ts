import { type SQL, sql } from "drizzle-orm";
import type { ContentWarning, Rating } from "../../config";
import { type Db, type Read, nowIso, rawAll, readOf } from "../../db/client";
import { preparedByShape } from "../../db/compile";
import { pagination } from "../../lib/pagination";
import { ELLIPSIS, MARK_CLOSE, MARK_OPEN, type MatchQuery, matchQuery, snippetOf } from "../../lib/search-text";
import { validationError } from "../../lib/errors";
import type { Authorship } from "../../schemas/fields";
import type { SearchType } from "../../schemas/search";
import { noneSuspended, notSuspendedSql } from "../standing/rule";
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
 * Full-text search: stories by title, background and tags, segments by their text, ranked by bm25, a page and the
 * counts. The index lives in search shards (src/durable/search-shard.ts, a range of stories each, D-SCALE-3), which
 * hold beside it the columns that decide what may be shown, under D1's names, so the same SQL runs in each shard
 * (and, while a deployment's older stories are being moved, in D1's own index for those not yet moved:
 * src/domain/discovery/search-move.ts). A search is two steps: one D1 statement reads what a shard cannot know (who
 * is suspended now, the reader's preference, how far the move is, how many shards there are), then every shard and
 * the D1 rest are asked at once for their counts and best `offset + limit` hits, merged here by rank.
 *
 * What may be found is decided at read, on the rows every hit is joined back to: a story only as lists show it
 * (src/domain/discovery/story-filter.ts: not hidden, the status and filters asked for, the reader's preference), a
 * segment only when it, its branch and its story are shown so, and neither when an account whose text the hit shows
 * (the story's owner, the branch's creator, the segment's author) is suspended. A hide reaches the shard in its own
 * request (src/usecases/search.ts), a suspension with every query. Hidden items are found by nobody, their authors and
 * moderators included: a list shows none.
 * Why, and what was weighed: docs/decisions.md, "Search" and D-SCALE-3.
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
const STORY_WEIGHTS_TEXT = "10.0, 1.0, 5.0";

/** Where a search's statements run: a shard, or D1's own index of the older stories not yet moved. */
type Place = "shard" | "d1";

interface SearchValues extends FilterValues {
  match: string;
  now: string;
  /** The accounts suspended now, a JSON array (a shard's statements read it; D1's read the accounts themselves). */
  suspended: string;
  /** The move's bounds (src/db/schema.ts, `searchMove`): a shard leaves out the stories D1 still answers for. */
  watermark: number;
  legacyMax: number;
  /** How many of its best hits a place ranks: `offset + limit` (the merge cuts the page from all of them). */
  limit: number;
  /** The page's hits a shard was asked to read, a JSON array of `[kind, rid, score]` (`read: "picked"`). */
  picked: string;
  /** The query's phrases, a JSON array of MATCH expressions, and what each one's bm25 term is multiplied by here (`scoring`). */
  phrases: string;
  storyFactors: string;
  segmentFactors: string;
}

/**
 * What a place answers: its best hits read whole (`page`: the first page, the common case, in one call), only their
 * keys (`keys`: a later page, whose hits the merge picks before any is read), or the hits picked (`picked`).
 */
type Reading = "page" | "keys" | "picked";

interface Shape {
  type: SearchType;
  filter: FilterShape;
  place: Place;
  read: Reading;
  /**
   * How a hit is scored: by its index's own bm25 (0: one index holds everything), or, across several shards, as the
   * sum of its phrases' bm25 terms each weighed by the statistics of all shards (the number of phrases).
   */
  scoring: number;
}

const searchesStories = (type: SearchType) => type !== "segment";
const searchesSegments = (type: SearchType) => type !== "story";

/** SQL: no account among `ids` is suspended now (in a shard, each id not in the list: a set SQLite builds once). */
const noneSuspendedHere = (v: SearchValues, place: Place, ids: SQL[]) =>
  place === "d1"
    ? noneSuspended(sql.join(ids, sql`, `), v.now)
    : sql.join(
        ids.map((id) => sql`${id} NOT IN (SELECT value FROM json_each(${v.suspended}))`),
        sql` AND `,
      );

/**
 * SQL (`AND …`): the story `s` is searched here: a shard leaves out the older stories not yet moved out of D1, and D1
 * those the move passed (their index rows there are deleted after the watermark passes them, a chunk at a time).
 */
const searchedHere = (v: SearchValues, place: Place) =>
  place === "d1"
    ? sql` AND s.rowid BETWEEN (SELECT watermark FROM search_move WHERE id = 1) AND (SELECT legacy_max FROM search_move WHERE id = 1)`
    : sql` AND (s.rowid < ${v.watermark} OR s.rowid > ${v.legacyMax})`;

/** The stories the match finds that may be shown, with `columns`. */
const storyHits = (v: SearchValues, { filter, place }: Shape, columns: SQL) =>
  sql`SELECT ${columns} FROM search_stories JOIN stories s ON s.rowid = search_stories.rowid
    WHERE search_stories MATCH ${v.match} AND ${storyFilterSql(v, filter)} AND ${noneSuspendedHere(v, place, [sql`s.owner_id`])}${searchedHere(v, place)}`;

/** The segments the match finds that may be shown, with `columns`. */
const segmentHits = (v: SearchValues, { filter, place }: Shape, columns: SQL) =>
  sql`SELECT ${columns} FROM search_segments JOIN segments g ON g.rowid = search_segments.rowid
      JOIN branches b ON b.id = g.branch_id JOIN stories s ON s.id = b.story_id
    WHERE search_segments MATCH ${v.match} AND g.hidden_at IS NULL AND b.hidden_at IS NULL AND ${storyFilterSql(v, filter)}
      AND ${noneSuspendedHere(v, place, [sql`g.author_id`, sql`b.creator_id`, sql`s.owner_id`])}${searchedHere(v, place)}`;

const shapeOf = (s: Shape) => `${s.place} ${s.read} ${s.scoring} ${s.type} ${shapeKey(s.filter)}`;

/** The bm25 of an index and its column weights (the stories' title, background, tags; a segment's one text). */
const INDEXES = { search_stories: `, ${STORY_WEIGHTS_TEXT}`, search_segments: "" } as const;
type IndexName = keyof typeof INDEXES;
const INDEX_NAMES = Object.keys(INDEXES) as IndexName[];

/** The number of hits of each type searched (null for the other). */
const countsStatement = preparedByShape(shapeOf, (v: SearchValues, shape: Shape) => {
  const stories = searchesStories(shape.type) ? sql`(SELECT count(*) FROM (${storyHits(v, shape, sql`1`)}))` : sql`NULL`;
  const segments = searchesSegments(shape.type) ? sql`(SELECT count(*) FROM (${segmentHits(v, shape, sql`1`)}))` : sql`NULL`;
  return sql`SELECT ${stories} AS stories, ${segments} AS segments`;
});

const charSql = (c: string) => `char(${c.charCodeAt(0)})`;

/** A snippet of an index's column (-1: the best matching one), marked for `snippetOf`. */
const snippetSql = (table: string, column: number) =>
  sql.raw(`snippet(${table}, ${column}, ${charSql(MARK_OPEN)}, ${charSql(MARK_CLOSE)}, ${charSql(ELLIPSIS)}, ${SNIPPET_TOKENS})`);

/** The name of the table of a phrase's bm25 terms in `table` (`scoredSql`). */
const termsOf = (table: IndexName, i: number) => sql.raw(`${table === "search_stories" ? "st" : "gt"}${i}`);

/** A phrase's place in the query's JSON arrays (a literal: a bound value each would count against SQLite's limit). */
const at = (i: number) => sql.raw(`'$[${i}]'`);

/**
 * A hit's score in `table`: its own bm25, or, scored across shards, each phrase's bm25 term times its factor, summed:
 * bm25 is that sum with the index's own statistics, so factors of 1 give the same score, and a factor of (all shards'
 * idf / this shard's idf) gives the score one index of every shard's rows would (its rows' lengths still this shard's).
 */
function scoreSql(shape: Shape, table: IndexName): SQL {
  if (!shape.scoring) return sql.raw(`bm25(${table}${INDEXES[table]})`);
  const factors = sql.raw(table === "search_stories" ? "sf" : "gf");
  const terms = Array.from({ length: shape.scoring }, (_, i) => {
    const t = termsOf(table, i);
    return sql`(SELECT json_extract(${factors}, ${at(i)}) FROM args) * (SELECT ${t}.s FROM ${t} WHERE ${t}.rid = ${sql.raw(table)}.rowid)`;
  });
  return sql`(${sql.join(terms, sql` + `)})`;
}

/**
 * Scored across shards, the tables `scoreSql` reads, before the ranking: the query's values once (`args`), and for each
 * phrase its bm25 term of every row it matches, one pass over the index a phrase (never one a hit).
 */
function scoredSql(v: SearchValues, shape: Shape): SQL {
  if (!shape.scoring) return sql``;
  const tables = INDEX_NAMES.filter((table) => (table === "search_stories" ? searchesStories(shape.type) : searchesSegments(shape.type)));
  const terms = tables.flatMap((table) =>
    Array.from(
      { length: shape.scoring },
      (_, i) =>
        sql`, ${termsOf(table, i)} AS MATERIALIZED (SELECT rowid AS rid, ${sql.raw(`bm25(${table}${INDEXES[table]})`)} AS s FROM ${sql.raw(table)}
          WHERE ${sql.raw(table)} MATCH (SELECT json_extract(phrases, ${at(i)}) FROM args))`,
    ),
  );
  return sql`WITH args AS MATERIALIZED (SELECT ${v.phrases} AS phrases, ${v.storyFactors} AS sf, ${v.segmentFactors} AS gf)${sql.join(terms, sql``)} `;
}

/** The best hits' keys, ranked: stories first with type=all, each type by bm25, then rowid. */
function rankedSql(v: SearchValues, shape: Shape) {
  const ranked = [
    ...(searchesStories(shape.type) ? [storyHits(v, shape, sql`0 AS kind, search_stories.rowid AS rid, ${scoreSql(shape, "search_stories")} AS score`)] : []),
    ...(searchesSegments(shape.type)
      ? [segmentHits(v, shape, sql`1 AS kind, search_segments.rowid AS rid, ${scoreSql(shape, "search_segments")} AS score`)]
      : []),
  ];
  return sql`${scoredSql(v, shape)}SELECT kind, rid, score FROM (${sql.join(ranked, sql` UNION ALL `)}) ORDER BY kind, score, rid LIMIT ${v.limit}`;
}

const keysStatement = preparedByShape(shapeOf, rankedSql);

/**
 * The hits read whole: the best ones ranked (or those picked), then each read with its snippet: `snippet()` runs for
 * these rows only, the index asked again for just their rowids (`CROSS JOIN` keeps the page the outer loop: SQLite
 * would otherwise run the whole match again and probe the page).
 */
const pageStatement = preparedByShape(shapeOf, (v: SearchValues, shape: Shape) => {
  const page =
    shape.read === "picked"
      ? sql`SELECT p.value ->> 0 AS kind, p.value ->> 1 AS rid, p.value ->> 2 AS score FROM json_each(${v.picked}) p`
      : rankedSql(v, shape);
  const read = [
    ...(searchesStories(shape.type)
      ? [
          sql`SELECT page.kind, s.id AS story_id, s.title AS story_title, s.language, ${storyLabelColumns},
            NULL AS branch_id, NULL AS branch_title, NULL AS is_main, NULL AS segment_id, NULL AS sequence_order,
            NULL AS author_id, NULL AS author_type, NULL AS author_name, NULL AS created_at,
            ${snippetSql("search_stories", -1)} AS snippet, page.score, page.rid
          FROM page CROSS JOIN search_stories ON search_stories.rowid = page.rid JOIN stories s ON s.rowid = page.rid
          WHERE page.kind = 0 AND search_stories MATCH ${v.match}`,
        ]
      : []),
    ...(searchesSegments(shape.type)
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
  return sql`WITH page AS MATERIALIZED (${page}) ${sql.join(read, sql` UNION ALL `)} ORDER BY kind, score, rid`;
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
  score: number;
  rid: number;
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

/** What a shard is asked: the statements' values and shape. */
export interface ShardQuery {
  values: SearchValues;
  shape: Shape;
}

/** A hit's place in the ranking. */
export type HitKey = [kind: 0 | 1, rid: number, score: number];

/** What a place answers: its counts (none when asked for picked hits), and its best hits read whole or their keys. */
export interface ShardAnswer {
  counts?: { stories: number | null; segments: number | null };
  rows?: HitRow[];
  keys?: HitKey[];
}

/** A shard's statements (run by src/durable/search-shard.ts): its counts and its hits or their keys, or the hits picked. */
export function shardStatements({ values, shape }: ShardQuery): { counts?: SQL; page?: SQL; keys?: SQL } {
  if (shape.read === "picked") return { page: pageStatement(values, shape) };
  return {
    counts: countsStatement(values, shape),
    ...(shape.read === "keys" ? { keys: keysStatement(values, shape) } : { page: pageStatement(values, shape) }),
  };
}

/** The query for a later page's keys, and the one reading the hits picked from a shard. */
export const keysQuery = (q: ShardQuery): ShardQuery => ({ values: q.values, shape: { ...q.shape, read: "keys" } });
export const pickedQuery = (q: ShardQuery, keys: HitKey[]): ShardQuery => ({
  values: { ...q.values, picked: JSON.stringify(keys) },
  shape: { ...q.shape, read: "picked" },
});

/** A shard's statistics for the query: its rows in each index, and how many of them each phrase matches. */
export interface ShardStats {
  stories: number;
  segments: number;
  storyHits: number[];
  segmentHits: number[];
}

/**
 * A shard's statistics statement: its rows in each index (the stories it holds; its segments' count, kept by the
 * shard as it writes them: `segments`) and, for each phrase, the rows of each index it matches (JSON arrays).
 */
export function statsStatement(q: ShardQuery, segments: number): SQL {
  const hits = (table: IndexName) =>
    sql.join(
      Array.from(
        { length: q.shape.scoring },
        (_, i) => sql`(SELECT count(*) FROM ${sql.raw(table)} WHERE ${sql.raw(table)} MATCH (SELECT json_extract(phrases, ${at(i)}) FROM args))`,
      ),
      sql`, `,
    );
  return sql`WITH args AS MATERIALIZED (SELECT ${q.values.phrases} AS phrases)
    SELECT (SELECT count(*) FROM search_stories) AS stories, ${segments} AS segments,
      json_array(${hits("search_stories")}) AS storyHits, json_array(${hits("search_segments")}) AS segmentHits`;
}

/** FTS5's idf of a phrase matching `hits` of `rows` (fts5_aux.c: never below 1e-6). */
export const idf = (rows: number, hits: number) => Math.max(Math.log((rows - hits + 0.5) / (hits + 0.5)), 0) || 1e-6;

/**
 * Each shard's factors (a phrase's idf over all shards' rows, over its idf in the shard alone), so its scores are those
 * one index of every shard's rows gives. A phrase a shard does not match gets 0 (none of its rows match the query).
 */
export function factorsOf(stats: ShardStats[]): { stories: number[]; segments: number[] }[] {
  const total = (pick: (s: ShardStats) => number) => stats.reduce((sum, s) => sum + pick(s), 0);
  const of = (rows: (s: ShardStats) => number, hits: (s: ShardStats) => number[]) => {
    const allRows = total(rows);
    const allHits = (hits(stats[0]) ?? []).map((_, i) => total((s) => hits(s)[i]));
    return (s: ShardStats) => hits(s).map((n, i) => (n ? idf(allRows, allHits[i]) / idf(rows(s), n) : 0));
  };
  const stories = of(
    (s) => s.stories,
    (s) => s.storyHits,
  );
  const segments = of(
    (s) => s.segments,
    (s) => s.segmentHits,
  );
  return stats.map((s) => ({ stories: stories(s), segments: segments(s) }));
}

/** The query scored across shards: by the phrases' terms, with this shard's factors. */
export const scoredQuery = (q: ShardQuery, factors: { stories: number[]; segments: number[] }): ShardQuery => ({
  values: { ...q.values, storyFactors: JSON.stringify(factors.stories), segmentFactors: JSON.stringify(factors.segments) },
  shape: { ...q.shape, scoring: JSON.parse(q.values.phrases).length },
});

/** The query a shard's statistics are asked with (the phrases' count in its shape). */
export const statsQuery = (q: ShardQuery): ShardQuery => ({ values: q.values, shape: { ...q.shape, scoring: JSON.parse(q.values.phrases).length } });

/** A search ready for its shards: what to ask them, how many there are, and what D1 answered for the stories it still holds. */
export interface SearchPlan {
  q: SearchQuery;
  query: MatchQuery;
  shard: ShardQuery;
  /** The stories' highest rowid (a shard holds a range of rowids: `storiesPerShard` of them). */
  maxRowid: number;
  /** D1's answer for the older stories not yet moved, or null once the move is done. */
  legacy: ShardAnswer | null;
  /** Every older story is in its shard. */
  moved: boolean;
}

interface ContextRow {
  suspended: string;
  hide_mature: number | null;
  hidden_tags: string | null;
  legacy_max: number;
  watermark: number;
  max_rowid: number | null;
}

/**
 * What a shard cannot know, in one statement: the accounts suspended now (users, bots, and bots of suspended
 * owners: the few rows a partial index holds), the reader's preference, the move's bounds and the highest story rowid.
 */
const contextStatement = (accountId: string, now: string) =>
  sql`SELECT (SELECT json_group_array(id) FROM (
      SELECT u.id FROM users u WHERE u.suspended_at IS NOT NULL AND NOT ${notSuspendedSql("u", now)}
      UNION SELECT b.id FROM bots b WHERE b.suspended_at IS NOT NULL AND NOT ${notSuspendedSql("b", now)}
      UNION SELECT b.id FROM users u JOIN bots b ON b.owner_id = u.id WHERE u.suspended_at IS NOT NULL AND NOT ${notSuspendedSql("u", now)})) AS suspended,
    p.hide_mature, p.hidden_tags, m.legacy_max, m.watermark, (SELECT max(rowid) FROM stories) AS max_rowid
    FROM search_move m LEFT JOIN preferences p ON p.account_id = ${accountId} WHERE m.id = 1`;

/** A signed-in reader's preference as the values a shard binds (it holds no preferences): as a cookie's. */
function preferenceForShards(values: SearchValues, filter: FilterShape, row: ContextRow): { values: SearchValues; filter: FilterShape } {
  if (filter.preference !== "account") return { values, filter };
  return {
    values: { ...values, hiddenTags: row.hidden_tags ?? "[]" },
    filter: { ...filter, preference: row.hide_mature ? "cookie-mature" : "cookie" },
  };
}

/**
 * A search's first step as a read that can share a round trip: the context statement and, until the move is done
 * (`moved`: the caller's memory of it), D1's counts and hits for the stories it still holds.
 */
export function searchRead(db: Db, q: SearchQuery, preference: ReaderPreference, moved: boolean): Read<SearchPlan> {
  const query = matchOf(q.q);
  const { values: filterValues, shape: filter } = filterOf(q, preference, "new");
  const now = nowIso();
  const values: SearchValues = {
    ...filterValues,
    match: query.match,
    now,
    suspended: "[]",
    watermark: 0,
    legacyMax: 0,
    limit: q.offset + q.limit,
    picked: "[]",
    phrases: JSON.stringify(query.phrases),
    storyFactors: "[]",
    segmentFactors: "[]",
  };
  const legacy = moved
    ? []
    : [
        rawAll<NonNullable<ShardAnswer["counts"]>>(db, countsStatement(values, { type: q.type, filter, place: "d1", read: "page", scoring: 0 })),
        rawAll<HitRow>(db, pageStatement(values, { type: q.type, filter, place: "d1", read: "page", scoring: 0 })),
      ];
  return readOf([rawAll<ContextRow>(db, contextStatement(values.accountId, now)), ...legacy], ([[row], ...found]) => {
    const shard = preferenceForShards({ ...values, suspended: row.suspended, watermark: row.watermark, legacyMax: row.legacy_max }, filter, row);
    const [counts, rows] = found as [NonNullable<ShardAnswer["counts"]>[], HitRow[]];
    return {
      q,
      query,
      shard: { values: shard.values, shape: { type: q.type, filter: shard.filter, place: "shard", read: "page", scoring: 0 } },
      maxRowid: row.max_rowid ?? 0,
      legacy: counts ? { counts: counts[0], rows } : null,
      moved: row.watermark > row.legacy_max,
    };
  });
}

const sumOf = (answers: ShardAnswer[], type: "stories" | "segments") =>
  answers.reduce<number | null>((sum, a) => (a.counts?.[type] == null ? sum : (sum ?? 0) + a.counts[type]), null);

const byRank = (a: { kind: number; score: number; rid: number }, b: { kind: number; score: number; rid: number }) =>
  a.kind - b.kind || a.score - b.score || a.rid - b.rid;

/**
 * A later page's hits, picked from every place's keys (D1's rows come whole): which shard holds each, so only those
 * shards are asked to read them.
 */
export function pickPage(plan: SearchPlan, answers: ShardAnswer[]): { rows: HitRow[]; fromShards: Map<number, HitKey[]> } {
  const ranked = [
    ...(plan.legacy?.rows ?? []).map((row) => ({ kind: row.kind, rid: row.rid, score: row.score, row, shard: -1 })),
    ...answers.flatMap((a, shard) => (a.keys ?? []).map(([kind, rid, score]) => ({ kind, rid, score, row: null, shard }))),
  ].sort(byRank);
  const fromShards = new Map<number, HitKey[]>();
  const rows: HitRow[] = [];
  for (const hit of ranked.slice(plan.q.offset, plan.q.offset + plan.q.limit)) {
    if (hit.row) rows.push(hit.row);
    else fromShards.set(hit.shard, [...(fromShards.get(hit.shard) ?? []), [hit.kind as 0 | 1, hit.rid, hit.score]]);
  }
  return { rows, fromShards };
}

/**
 * The answer: every place's counts summed, and the page, best first: the first page cut from every place's best
 * hits, a later one as picked (`picked`: the page's rows, read).
 */
export function mergeSearch(plan: SearchPlan, answers: ShardAnswer[], picked?: HitRow[]) {
  const all = plan.legacy ? [plan.legacy, ...answers] : answers;
  const counts = { stories: sumOf(all, "stories"), segments: sumOf(all, "segments") };
  if (searchesStories(plan.q.type)) counts.stories ??= 0;
  if (searchesSegments(plan.q.type)) counts.segments ??= 0;
  const page = picked
    ? [...picked].sort(byRank)
    : all
        .flatMap((a) => a.rows ?? [])
        .sort(byRank)
        .slice(plan.q.offset, plan.q.offset + plan.q.limit);
  const count = (counts.stories ?? 0) + (counts.segments ?? 0);
  return { results: page.map((r) => hitOf(r, plan.query)), count, counts, pagination: pagination(plan.q.limit, plan.q.offset, count) };
}
