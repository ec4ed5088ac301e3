import { DurableObject } from "cloudflare:workers";
import { compileSimple } from "../db/compile";
import { type HitKey, type ShardAnswer, type ShardQuery, type ShardStats, shardStatements, statsStatement } from "../domain/discovery/search";
import type { StorySnapshot } from "../domain/discovery/search-snapshot";
import type { Env } from "../env";

/**
 * A search shard: one SQLite Durable Object holding the full-text index of a range of stories (D-SCALE-3;
 * src/usecases/search.ts names the shard of a story) and, beside it, the few columns of those stories, their
 * branches and segments that decide what a search may show, under the names D1 gives them, so a search runs here
 * the same SQL that D1 ran (src/domain/discovery/search.ts). It holds no account: suspensions come with each query.
 * Its copy is written only by syncs (`apply`), each a whole story's state as D1 said it (idempotent); a segment's
 * index row is written once, with its row.
 */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS stories (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, title TEXT NOT NULL, language TEXT NOT NULL,
    status TEXT NOT NULL, hidden_at TEXT, rating TEXT NOT NULL, warnings TEXT NOT NULL, owner_id TEXT NOT NULL,
    segments_count INTEGER NOT NULL, bot_segments_count INTEGER NOT NULL, created_at TEXT NOT NULL, version INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS story_tags (story_id TEXT NOT NULL, tag_key TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL,
    PRIMARY KEY (story_id, tag_key));
  CREATE INDEX IF NOT EXISTS story_tags_key ON story_tags (tag_key);
  CREATE TABLE IF NOT EXISTS branches (id TEXT PRIMARY KEY, story_id TEXT NOT NULL, title TEXT NOT NULL, is_main INTEGER NOT NULL,
    hidden_at TEXT, creator_id TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS segments (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, story_id TEXT NOT NULL, branch_id TEXT NOT NULL,
    sequence_order INTEGER NOT NULL, author_id TEXT NOT NULL, author_type TEXT NOT NULL, author_name TEXT NOT NULL, created_at TEXT NOT NULL,
    hidden_at TEXT);
  CREATE INDEX IF NOT EXISTS segments_hidden ON segments (story_id) WHERE hidden_at IS NOT NULL;
  CREATE INDEX IF NOT EXISTS branches_hidden ON branches (story_id) WHERE hidden_at IS NOT NULL;
  CREATE TABLE IF NOT EXISTS totals (name TEXT PRIMARY KEY, n INTEGER NOT NULL);
  INSERT OR IGNORE INTO totals (name, n) VALUES ('segments', 0);
  CREATE VIRTUAL TABLE IF NOT EXISTS search_stories USING fts5(title, background, tags, tokenize = 'unicode61 remove_diacritics 2');
  CREATE VIRTUAL TABLE IF NOT EXISTS search_segments USING fts5(content, tokenize = 'unicode61 remove_diacritics 2');`;

export class SearchShard extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
  }

  /**
   * A story's state as a sync read it, in one transaction. Syncs of one story may cross (the queue and a hide's own
   * request): the story, its tags, branches and hides are taken only from a snapshot at least as new as the last
   * one taken; its new segments from any (a segment's row and text never change).
   */
  apply(s: StorySnapshot): void {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      const story = s.story;
      const held = sql.exec<{ version: number }>("SELECT version FROM stories WHERE rowid = ?", story.rowid).toArray()[0];
      // A branch's title and place never change: its row is written once, its hidden state with the story's.
      for (const b of s.branches) {
        sql.exec(
          "INSERT INTO branches (id, story_id, title, is_main, hidden_at, creator_id) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
          b.id,
          story.id,
          b.title,
          b.is_main,
          b.hidden_at,
          b.creator_id,
        );
      }
      if (!held || held.version <= s.version) this.takeStory(s);
      for (const g of s.segments) {
        const added = sql.exec(
          `INSERT INTO segments (rowid, id, story_id, branch_id, sequence_order, author_id, author_type, author_name, created_at, hidden_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
          g.rowid,
          g.id,
          story.id,
          g.branch_id,
          g.sequence_order,
          g.author_id,
          g.author_type,
          g.author_name,
          g.created_at,
          g.hidden_at,
        ).rowsWritten;
        // A segment's text never changes: its index row is written with its row, once.
        if (added) {
          sql.exec("INSERT INTO search_segments (rowid, content) VALUES (?, ?)", g.rowid, g.indexed);
          sql.exec("UPDATE totals SET n = n + 1 WHERE name = 'segments'");
        }
      }
    });
  }

  /** The story's row, index row, tags, branches and hidden segments, as the snapshot has them. */
  private takeStory(s: StorySnapshot): void {
    const sql = this.ctx.storage.sql;
    const { indexed, ...story } = s.story;
    sql.exec(
      `INSERT INTO stories (rowid, id, title, language, status, hidden_at, rating, warnings, owner_id, segments_count, bot_segments_count, created_at, version)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (rowid) DO UPDATE SET title = excluded.title, status = excluded.status, hidden_at = excluded.hidden_at,
          rating = excluded.rating, warnings = excluded.warnings, owner_id = excluded.owner_id, segments_count = excluded.segments_count,
          bot_segments_count = excluded.bot_segments_count, version = excluded.version`,
      story.rowid,
      story.id,
      story.title,
      story.language,
      story.status,
      story.hidden_at,
      story.rating,
      story.warnings,
      story.owner_id,
      story.segments_count,
      story.bot_segments_count,
      story.created_at,
      s.version,
    );
    sql.exec("DELETE FROM search_stories WHERE rowid = ?", story.rowid);
    sql.exec("INSERT INTO search_stories (rowid, title, background, tags) VALUES (?, ?, ?, ?)", story.rowid, indexed.title, indexed.background, indexed.tags);
    sql.exec("DELETE FROM story_tags WHERE story_id = ?", story.id);
    for (const t of s.tags) sql.exec("INSERT INTO story_tags (story_id, tag_key, name, position) VALUES (?, ?, ?, ?)", story.id, t.tag_key, t.name, t.position);
    this.hideAsListed("branches", story.id, s.hiddenBranches);
    this.hideAsListed("segments", story.id, s.hidden);
  }

  /** The story's rows of `table` hidden exactly as listed (with when), the others shown. */
  private hideAsListed(table: "branches" | "segments", storyId: string, hidden: { id: string; hidden_at: string }[]): void {
    const list = JSON.stringify(hidden);
    const sql = this.ctx.storage.sql;
    sql.exec(
      `UPDATE ${table} SET hidden_at = NULL WHERE story_id = ? AND hidden_at IS NOT NULL AND id NOT IN (SELECT value ->> 'id' FROM json_each(?))`,
      storyId,
      list,
    );
    sql.exec(
      `UPDATE ${table} SET hidden_at = h.value ->> 'hidden_at' FROM json_each(?) h WHERE ${table}.id = h.value ->> 'id' AND ${table}.story_id = ?`,
      list,
      storyId,
    );
  }

  /** The search's counts and best hits here (read whole, or their keys), or the hits picked: ranked as D1 ranks them. */
  search(q: ShardQuery): ShardAnswer {
    const { counts, page, keys } = shardStatements(q);
    return {
      ...(counts ? { counts: this.cursor(counts).one() as unknown as ShardAnswer["counts"] } : {}),
      ...(page ? { rows: this.cursor(page).toArray() as unknown as ShardAnswer["rows"] } : {}),
      // Keys as arrays, not objects: a later page's ranking moves up to `offset + limit` of them a shard.
      ...(keys ? { keys: [...this.cursor(keys).raw()] as unknown as HitKey[] } : {}),
    };
  }

  /** The query's statistics here: rows in each index, and the rows each phrase matches (scoring across shards). */
  stats(q: ShardQuery): ShardStats {
    const [{ n }] = this.ctx.storage.sql.exec<{ n: number }>("SELECT n FROM totals WHERE name = 'segments'").toArray();
    const row = this.cursor(statsStatement(q, n)).one() as { stories: number; segments: number; storyHits: string; segmentHits: string };
    return { stories: row.stories, segments: row.segments, storyHits: JSON.parse(row.storyHits), segmentHits: JSON.parse(row.segmentHits) };
  }

  /** A statement built by the search's SQL (plain text and values: src/db/compile.ts) run on this shard's SQLite. */
  private cursor(statement: Parameters<typeof compileSimple>[0]) {
    const compiled = compileSimple(statement);
    if (!compiled) throw new Error("search-shard: a statement must be plain SQL");
    return this.ctx.storage.sql.exec(compiled.sql, ...(compiled.params as SqlStorageValue[]));
  }
}
