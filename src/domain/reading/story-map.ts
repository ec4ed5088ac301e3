import { type SQL, sql } from "drizzle-orm";
import { type Db, rawAll, readOf, runRead } from "../../db/client";
import { notFound } from "../../lib/errors";
import { activityScore, shownStoryQuery } from "../stories/branches";
import type { Viewer } from "../shared/visibility";

/**
 * The map of a story: every branch a reader may see, as a flat list in map order, for the story page's
 * picture and `GET /stories/{id}/map`. One statement over the story's branches (by `branches_story_created_idx`),
 * with the name of the bot holding each branch's turn (a primary-key look-up per branch).
 */
export interface MapNode {
  id: string;
  title: string;
  parent_branch_id: string | null;
  fork_at_segment_id: string | null;
  /** The sequence_order of the segment it forks from (0 for the main line): its own segments number on from it. */
  fork_sequence: number;
  /** 0 for the main line, 1 for a branch forked from it, and so on. */
  depth: number;
  is_main: boolean;
  status: string;
  segments_count: number;
  active_bots_count: number;
  vote_score: number;
  activity_score: number;
  /** The bot holding the branch's turn now; null when none does. */
  current_turn: { bot_id: string; name: string } | null;
  created_at: string;
  /** When the branch last changed: its last segment or turn. */
  updated_at: string;
}

interface MapRow {
  id: string;
  title: string;
  parent_branch_id: string | null;
  fork_at_segment_id: string | null;
  fork_sequence: number;
  is_main: number;
  status: string;
  segments_count: number;
  active_bots_count: number;
  vote_score: number;
  turn_bot_id: string | null;
  turn_bot_name: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The story's branches a map may show, siblings in map order (the main line, then by the segment they fork from,
 * then oldest first); `storyId` may be a SQL expression that selects the story. Hidden branches are left out here,
 * what forks from them by `mapOf`. Usable inside `db.batch()`.
 */
export const mapRowsQuery = (db: Db, storyId: string | SQL) =>
  rawAll<MapRow>(
    db,
    sql`SELECT b.id, b.title, b.parent_branch_id, b.fork_at_segment_id, b.fork_sequence, b.is_main, b.status, b.segments_count,
      b.active_bots_count, b.vote_score, b.current_turn_bot_id AS turn_bot_id, t.name AS turn_bot_name, b.created_at, b.updated_at
    FROM branches b LEFT JOIN bots t ON t.id = b.current_turn_bot_id
    WHERE b.story_id = ${storyId} AND b.hidden_at IS NULL
    ORDER BY b.is_main DESC, b.fork_sequence, b.created_at, b.id`,
  );

const nodeOf = (r: MapRow, depth: number): MapNode => ({
  id: r.id,
  title: r.title,
  parent_branch_id: r.parent_branch_id,
  fork_at_segment_id: r.fork_at_segment_id,
  fork_sequence: r.fork_sequence,
  depth,
  is_main: r.is_main === 1,
  status: r.status,
  segments_count: r.segments_count,
  active_bots_count: r.active_bots_count,
  vote_score: r.vote_score,
  activity_score: activityScore({ voteScore: r.vote_score, segmentsCount: r.segments_count, activeBotsCount: r.active_bots_count }),
  current_turn: r.turn_bot_id ? { bot_id: r.turn_bot_id, name: r.turn_bot_name ?? "" } : null,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

/**
 * The rows of a `mapRowsQuery` in map order: depth first from the main line, each branch followed by what forks
 * from it. A branch whose parent is not among the rows (hidden, or forked from a hidden one) is left out with all
 * that forks from it: its reading path passes through hidden text, as the branch tree has it.
 */
export function mapOf(rows: MapRow[]): MapNode[] {
  const children = new Map<string | null, MapRow[]>();
  for (const r of rows) {
    const siblings = children.get(r.parent_branch_id);
    if (siblings) siblings.push(r);
    else children.set(r.parent_branch_id, [r]);
  }
  const nodes: MapNode[] = [];
  const visit = (r: MapRow, depth: number) => {
    nodes.push(nodeOf(r, depth));
    for (const child of children.get(r.id) ?? []) visit(child, depth + 1);
  };
  for (const root of children.get(null) ?? []) visit(root, 0);
  return nodes;
}

/** `GET /stories/{id}/map` as a read that can share a round trip: 404 when the story is hidden from the viewer. */
export function storyMapRead(db: Db, storyId: string, viewer: Viewer = null) {
  return readOf([shownStoryQuery(db, storyId, viewer), mapRowsQuery(db, storyId)], ([story, rows]) => {
    if (!story.length) throw notFound("Story");
    const nodes = mapOf(rows);
    return { story_id: storyId, branches_count: nodes.length, nodes };
  });
}

export const storyMap = (db: Db, storyId: string, viewer: Viewer = null) => runRead(db, storyMapRead(db, storyId, viewer));
