import { sql } from "drizzle-orm";
import { type Db, oneTrip, readOf } from "../../db/client";
import { stories } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { branchView, shownBranch, shownBranchQuery } from "../stories/branches";
import type { Viewer } from "../shared/visibility";
import { readerMarksRead } from "./reading-progress";
import { type PathSegment, asPath, readingPathPageQuery } from "../stories/path";
import { type MapNode, mapOf, mapRowsQuery } from "./story-map";

/**
 * A branch's reading path as one continuous page (the web reader's `/branches/{id}/read`): a page at a
 * time, with where the path crosses a fork and, under each segment, the other branches forking from it.
 */

/** Segments per page. A path's sequence_orders run 1, 2, 3 … without a gap, so page p holds (p-1)·50+1 to p·50. */
export const PATH_PAGE_SEGMENTS = 50;

/**
 * Another way on from a segment: a branch forking from it, or the branch the path leaves there, going on without it.
 * `segments_count`: how many segments that way has after this one; `fork_sequence`: this segment's sequence_order.
 */
export type PathChoice = Pick<MapNode, "id" | "title" | "segments_count" | "fork_sequence">;

export interface PathEntry extends PathSegment {
  /** Where the path crosses a fork into this segment's branch: the branch it leaves and the one it enters (titles null when hidden). */
  crossing: { from_branch_id: string; from_title: string | null; title: string | null } | null;
  /** The other ways on from this segment, as the map shows them: the branch the path leaves here, then those forking from it. */
  choices: PathChoice[];
}

/**
 * A page of the branch's path (404 when the branch is hidden from the viewer, or the page is past the end): the
 * branch, its story, the page's segments, each with its crossing and choices, and a signed-in reader's marks (their
 * place on this path, their bookmarks). One round trip: the page's segments with the one before (to see a crossing
 * at the first) and the one after (to know which branch the last goes on with), the story's branches as its map has
 * them, and the reader's marks.
 */
export async function readerPath(db: Db, id: string, page: number, viewer: Viewer = null) {
  const first = (page - 1) * PATH_PAGE_SEGMENTS;
  const storyOf = sql`(SELECT b.story_id FROM branches b WHERE b.id = ${id})`;
  const [[found, [story], rows, branchRows], marks] = await oneTrip(
    db,
    readOf(
      [
        shownBranchQuery(db, id, viewer),
        db
          .select({ id: stories.id, title: stories.title, language: stories.language, status: stories.status })
          .from(stories)
          .where(sql`${stories.id} = ${storyOf}`)
          .limit(1),
        readingPathPageQuery(db, id, Math.max(first - 1, 0), PATH_PAGE_SEGMENTS + (first > 0 ? 2 : 1), viewer),
        mapRowsQuery(db, storyOf),
      ],
      (results) => results,
    ),
    readerMarksRead(db, viewer, id),
  );
  const branch = shownBranch(found);
  if (!branch || !story) throw notFound("Branch");
  const length = branch.forkSequence + branch.segmentsCount;
  const pages = Math.max(1, Math.ceil(length / PATH_PAGE_SEGMENTS));
  if (page > pages) throw notFound("Page");
  const titles = new Map(branchRows.map((b) => [b.id, b.title]));
  titles.set(branch.id, branch.title);
  return {
    branch: branchView(branch),
    story,
    page,
    pages,
    length,
    segments: entriesOf(asPath(rows), { first, length, branchId: branch.id }, mapOf(branchRows), titles),
    marks,
  };
}

interface Window {
  /** The page holds the segments after this sequence_order. */
  first: number;
  /** The path's last sequence_order. */
  length: number;
  branchId: string;
}

/** The page's segments (of a window with one before and one after) with their crossings and choices. */
function entriesOf(window: PathSegment[], at: Window, map: MapNode[], titles: Map<string, string>): PathEntry[] {
  const bySequence = new Map(window.map((s) => [s.sequence_order, s]));
  const byId = new Map(map.map((n) => [n.id, n]));
  const forks = new Map<string, MapNode[]>();
  for (const n of map) {
    if (!n.fork_at_segment_id || n.id === at.branchId) continue;
    const here = forks.get(n.fork_at_segment_id);
    if (here) here.push(n);
    else forks.set(n.fork_at_segment_id, [n]);
  }
  const choice = (n: MapNode, after: number, count: number): PathChoice => ({ id: n.id, title: n.title, segments_count: count, fork_sequence: after });
  return window
    .filter((s) => s.sequence_order > at.first && s.sequence_order <= at.first + PATH_PAGE_SEGMENTS)
    .map((s) => {
      const before = bySequence.get(s.sequence_order - 1);
      const next = bySequence.get(s.sequence_order + 1);
      const crossing =
        before && before.branch_id !== s.branch_id
          ? { from_branch_id: before.branch_id, from_title: titles.get(before.branch_id) ?? null, title: titles.get(s.branch_id) ?? null }
          : null;
      // The path leaves this segment's branch here (for the next segment's, or because the branch read has none yet).
      const leaves = next ? next.branch_id !== s.branch_id : s.sequence_order === at.length && s.branch_id !== at.branchId;
      const left = leaves ? byId.get(s.branch_id) : undefined;
      const rest = left ? left.fork_sequence + left.segments_count - s.sequence_order : 0;
      const others = (forks.get(s.id) ?? []).filter((n) => n.id !== next?.branch_id).map((n) => choice(n, s.sequence_order, n.segments_count));
      return { ...s, crossing, choices: left && rest > 0 ? [choice(left, s.sequence_order, rest), ...others] : others };
    });
}
