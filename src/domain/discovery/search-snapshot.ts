import { sql } from "drizzle-orm";
import { type Db, rawAll } from "../../db/client";
import { indexText } from "../../lib/search-text";

/**
 * What a search shard holds of a story (src/durable/search-shard.ts), read from D1 by a sync: the story's row and
 * tags, its segments written since the last sync (with their text, once) and their branches (a branch's title and
 * place never change), and which of its branches and segments are hidden now (by partial indexes: the few that
 * are). The story, its tags and what is hidden are sent whole each time, so a sync is idempotent and a lost or
 * repeated one is repaired by the next: the shard's copy is what D1 said at the sync's read.
 */

/** Segments sent in one sync at most; a story with more is synced again at once from where this one stopped. */
export const SEGMENTS_PER_SYNC = 200;

export interface SnapshotStory {
  rowid: number;
  id: string;
  title: string;
  language: string;
  status: string;
  hidden_at: string | null;
  rating: string;
  warnings: string;
  owner_id: string;
  segments_count: number;
  bot_segments_count: number;
  created_at: string;
  /** The index row's columns, encoded for the index (src/lib/search-text.ts). */
  indexed: { title: string; background: string; tags: string };
}

export interface SnapshotTag {
  tag_key: string;
  name: string;
  position: number;
}

export interface SnapshotBranch {
  id: string;
  title: string;
  is_main: number;
  hidden_at: string | null;
  creator_id: string;
}

export interface SnapshotSegment {
  rowid: number;
  id: string;
  branch_id: string;
  sequence_order: number;
  author_id: string;
  author_type: string;
  author_name: string;
  created_at: string;
  hidden_at: string | null;
  /** The text encoded for the index. */
  indexed: string;
}

export interface StorySnapshot {
  /** The story's search version this was read at: a shard keeps the newest it was given (syncs may cross). */
  version: number;
  story: SnapshotStory;
  tags: SnapshotTag[];
  branches: SnapshotBranch[];
  segments: SnapshotSegment[];
  /** Every hidden segment of the story, by id, with when it was hidden (the rest are shown). */
  hidden: { id: string; hidden_at: string }[];
  /** Every hidden branch of the story, likewise. */
  hiddenBranches: { id: string; hidden_at: string }[];
}

/** The sync's read: what the story's search state is (its version, how far its segments were copied) and the snapshot. */
export interface SnapshotRead {
  version: number;
  synced: number;
  upto: number;
  snapshot: StorySnapshot;
  /** More segments wait after these (the sync goes on). */
  more: boolean;
}

type StoryRow = Omit<SnapshotStory, "indexed"> & { background: string; search_version: number; search_synced: number; search_upto: number };
type SegmentRow = Omit<SnapshotSegment, "indexed"> & { content: string };

/** The story's snapshot from D1 in one batch (none when the story is gone), with segments after its last copied one. */
export async function readSnapshot(db: Db, storyId: string): Promise<SnapshotRead | null> {
  const newSegments = sql`SELECT rowid, id, branch_id, sequence_order, author_id, author_type, author_name, created_at, hidden_at, content FROM segments
    WHERE story_id = ${storyId} AND rowid > (SELECT search_upto FROM stories WHERE id = ${storyId}) ORDER BY rowid LIMIT ${SEGMENTS_PER_SYNC + 1}`;
  const [stories, tags, branches, segments, hidden, hiddenBranches] = await db.batch([
    rawAll<StoryRow>(
      db,
      sql`SELECT rowid, id, title, background, language, status, hidden_at, rating, warnings, owner_id, segments_count, bot_segments_count,
        created_at, search_version, search_synced, search_upto FROM stories WHERE id = ${storyId}`,
    ),
    rawAll<SnapshotTag>(db, sql`SELECT tag_key, name, position FROM story_tags WHERE story_id = ${storyId} ORDER BY position`),
    rawAll<SnapshotBranch>(
      db,
      sql`SELECT id, title, is_main, hidden_at, creator_id FROM branches WHERE id IN (SELECT DISTINCT branch_id FROM (${newSegments}))`,
    ),
    rawAll<SegmentRow>(db, newSegments),
    rawAll<{ id: string; hidden_at: string }>(db, sql`SELECT id, hidden_at FROM segments WHERE story_id = ${storyId} AND hidden_at IS NOT NULL`),
    rawAll<{ id: string; hidden_at: string }>(db, sql`SELECT id, hidden_at FROM branches WHERE story_id = ${storyId} AND hidden_at IS NOT NULL`),
  ]);
  const row = stories[0];
  if (!row) return null;
  const { background, search_version, search_synced, search_upto, ...story } = row;
  const tagsText = tags.map((t) => t.name).join(", ");
  return {
    version: search_version,
    synced: search_synced,
    upto: search_upto,
    more: segments.length > SEGMENTS_PER_SYNC,
    snapshot: {
      version: search_version,
      story: { ...story, indexed: { title: indexText(story.title), background: indexText(background), tags: indexText(tagsText) } },
      tags,
      branches,
      segments: segments.slice(0, SEGMENTS_PER_SYNC).map(({ content, ...s }) => ({ ...s, indexed: indexText(content) })),
      hidden,
      hiddenBranches,
    },
  };
}
