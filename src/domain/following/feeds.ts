import { type SQL, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll, readOf, runRead } from "../../db/client";
import { notFound } from "../../lib/errors";
import { accountNameSql } from "../shared/actor";
import { branchShown, storyShown } from "../shared/visibility";
import { accountNotSuspendedSql } from "../standing/rule";
import { filterOf, storyFilterSql } from "../discovery/story-filter";

/**
 * The public Atom feeds' reads: what anonymous readers may see, newest first, FEED_ENTRIES at most,
 * each feed one round trip (its head and its entries). Never a hidden story, branch or segment (nor what a hidden
 * story or branch holds), nor anything by an account suspended now (a bot's owner's suspension included): the
 * feeds show what the inbox would tell (src/domain/following/fanout.ts), to anyone.
 */

/** Entries per feed. */
export const FEED_ENTRIES = 50;

/** What a feed's entry is about: a segment written, a branch forked, a story started. */
export interface FeedEntry {
  kind: "segment" | "branch" | "story";
  /** The segment's, branch's or story's id (a UUID: the entry's id is `urn:uuid:` it). */
  id: string;
  story_id: string;
  story_title: string;
  /** The segment's branch, or the branch itself; null for a story. */
  branch_id: string | null;
  branch_title: string | null;
  /** A segment's place on its branch's path, or a branch's fork point; null for a story. */
  sequence_order: number | null;
  author_id: string;
  author_name: string;
  author_type: "human" | "bot";
  /** A segment's text, a branch's description, a story's background. */
  content: string;
  language: string;
  created_at: string;
}

/**
 * A feed's order: newest first, FEED_ENTRIES of them (on the columns of a compound SELECT of entries). What one batch
 * wrote at once (a story, its main line's first segments) reads up in the order it was made: the later place first,
 * a story (no place) after its segments.
 */
const NEWEST = sql.raw(`ORDER BY created_at DESC, sequence_order DESC, id DESC LIMIT ${FEED_ENTRIES}`);

/** What every kind of entry selects, in `FeedEntry`'s order (a compound SELECT matches its parts' columns by place). */
const columns = (c: Record<keyof FeedEntry, string | SQL>) =>
  sql.join(
    (Object.keys(c) as (keyof FeedEntry)[]).map((k) => {
      const value = c[k];
      return sql`${typeof value === "string" ? sql.raw(value) : value} AS ${sql.raw(k)}`;
    }),
    sql`, `,
  );

const entryColumns = {
  segment: columns({
    kind: "'segment'",
    id: "fs.id",
    story_id: "fs.story_id",
    story_title: "ft.title",
    branch_id: "fs.branch_id",
    branch_title: "fb.title",
    sequence_order: "fs.sequence_order",
    author_id: "fs.author_id",
    author_name: "fs.author_name",
    author_type: "fs.author_type",
    content: "fs.content",
    language: "ft.language",
    created_at: "fs.created_at",
  }),
  branch: columns({
    kind: "'branch'",
    id: "fb.id",
    story_id: "fb.story_id",
    story_title: "ft.title",
    branch_id: "fb.id",
    branch_title: "fb.title",
    sequence_order: "fb.fork_sequence",
    author_id: "fb.creator_id",
    author_name: accountNameSql("fb.creator_id"),
    author_type: "fb.creator_type",
    content: "coalesce(fb.description, '')",
    language: "ft.language",
    created_at: "fb.created_at",
  }),
  story: columns({
    kind: "'story'",
    id: "s.id",
    story_id: "s.id",
    story_title: "s.title",
    branch_id: "NULL",
    branch_title: "NULL",
    sequence_order: "NULL",
    author_id: "s.owner_id",
    author_name: accountNameSql("s.owner_id"),
    author_type: "s.owner_type",
    content: "s.background",
    language: "s.language",
    created_at: "s.created_at",
  }),
};

/**
 * Segments `fs` (their branch `fb`, their story `ft`) as entries: those `where` picks that anonymous readers may
 * read, by an account not suspended, the first FEED_ENTRIES in `order` (an index's, newest first).
 */
const segmentEntries = (where: SQL, order: SQL, now: string) =>
  sql`SELECT * FROM (SELECT ${entryColumns.segment} FROM segments fs JOIN branches fb ON fb.id = fs.branch_id JOIN stories ft ON ft.id = fs.story_id
    WHERE ${where} AND fs.hidden_at IS NULL AND ${branchShown("fb", null)} AND ${accountNotSuspendedSql(sql.raw("fs.author_id"), now)}
    ORDER BY ${order} LIMIT ${FEED_ENTRIES})`;

/** A story's branches but its main line, as entries (the branches anonymous readers may open, by accounts not suspended). */
const branchEntries = (storyId: string, now: string) =>
  sql`SELECT * FROM (SELECT ${entryColumns.branch} FROM branches fb JOIN stories ft ON ft.id = fb.story_id
    WHERE fb.story_id = ${storyId} AND fb.is_main = 0 AND ${branchShown("fb", null)} AND ${accountNotSuspendedSql(sql.raw("fb.creator_id"), now)}
    ORDER BY fb.created_at DESC, fb.id DESC LIMIT ${FEED_ENTRIES})`;

/** Stories `s` as entries: those `where` picks (it says which are shown), started by accounts not suspended. */
const storyEntries = (where: SQL, now: string) =>
  sql`SELECT * FROM (SELECT ${entryColumns.story} FROM stories s
    WHERE ${where} AND ${accountNotSuspendedSql(sql.raw("s.owner_id"), now)} ORDER BY s.created_at DESC, s.id DESC LIMIT ${FEED_ENTRIES})`;

/** The newest FEED_ENTRIES of some kinds' entries together. */
const newest = (db: Db, ...parts: SQL[]) => rawAll<FeedEntry>(db, sql`${sql.join(parts, sql` UNION ALL `)} ${NEWEST}`);

/** A feed's head (404 as `what` when its query finds nothing) and its entries: one round trip. */
async function feedOf<H>(db: Db, what: string, head: SQL, entries: ReturnType<typeof newest>) {
  const { found, items } = await runRead(
    db,
    readOf([rawAll<H>(db, head), entries], ([[row], rows]) => ({ found: row, items: rows })),
  );
  if (!found) throw notFound(what);
  return { ...found, entries: items };
}

/** A story's feed (404 when hidden): its new branches and the new segments of its main line. */
export function storyFeed(db: Db, id: string) {
  const now = nowIso();
  const main = sql`(SELECT mb.id FROM branches mb WHERE mb.story_id = ${id} AND mb.is_main = 1)`;
  return feedOf<{ id: string; title: string; language: string; created_at: string; main_branch_id: string | null }>(
    db,
    "Story",
    sql`SELECT s.id, s.title, s.language, s.created_at, ${main} AS main_branch_id FROM stories s WHERE s.id = ${id} AND ${storyShown("s", null)}`,
    newest(db, segmentEntries(sql`fs.branch_id = ${main}`, sql`fs.sequence_order DESC`, now), branchEntries(id, now)),
  );
}

/** A branch's feed (404 when hidden, or its story is): its own new segments. */
export function branchFeed(db: Db, id: string) {
  const now = nowIso();
  return feedOf<{ id: string; title: string; story_id: string; story_title: string; language: string; created_at: string }>(
    db,
    "Branch",
    sql`SELECT fb.id, fb.title, fb.story_id, ft.title AS story_title, ft.language, fb.created_at
      FROM branches fb JOIN stories ft ON ft.id = fb.story_id WHERE fb.id = ${id} AND ${branchShown("fb", null)}`,
    newest(db, segmentEntries(sql`fs.branch_id = ${id}`, sql`fs.sequence_order DESC`, now)),
  );
}

/** An author's feed, a human's or a bot's (404 for no account): the stories they start and the segments they write. */
export function authorFeed(db: Db, id: string) {
  const now = nowIso();
  return feedOf<{ id: string; name: string; type: "human" | "bot"; created_at: string }>(
    db,
    "Author",
    sql`SELECT id, username AS name, 'human' AS type, created_at FROM users WHERE id = ${id}
      UNION ALL SELECT id, name, 'bot' AS type, created_at FROM bots WHERE id = ${id}`,
    newest(
      db,
      // The segments' index by author and time, not a sort of every segment they wrote (nor the logs: they are pruned).
      segmentEntries(sql`fs.author_id = ${id}`, sql`fs.created_at DESC`, now),
      storyEntries(sql`s.owner_id = ${id} AND ${storyShown("s", null)}`, now),
    ),
  );
}

/** A tag's feed, by its key (404 for a tag no story ever carried): the stories listed with it, as its page lists them. */
export function tagFeed(db: Db, key: string) {
  const { values, shape } = filterOf({ status: "active", tags: [key], excludeTags: [], ratings: [], authorships: [] }, null, "new");
  return feedOf<{ key: string; name: string; created_at: string }>(
    db,
    "Tag",
    sql`SELECT key, name, created_at FROM tags WHERE key = ${key}`,
    newest(db, storyEntries(storyFilterSql(values, shape), nowIso())),
  );
}
