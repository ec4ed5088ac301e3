import { z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { rawAll, readOf, oneTrip } from "../../db/client";
import { PATH_PAGE_SEGMENTS, readerPath } from "../../domain/reading/path-page";
import { weightedTotal } from "../../domain/shared/scores";
import { viewerOf } from "../../domain/shared/visibility";
import { storyRead } from "../../domain/stories/stories";
import { notFound, validationError } from "../../lib/errors";
import { pathId } from "../../lib/ids";
import { round3 } from "../../lib/round";
import { toolInput } from "../input";
import { toolResult } from "../results";
import { defineTool, idArgument } from "../tool";

/**
 * The reader app's own read (src/mcp/app/): a page of a branch's reading path as the web reader's path page shows it
 * (each segment with where the path crosses a fork and the other ways on from it), with what the app shows beside
 * the text and no other tool answers: the story's labels and length rule, each segment's vote score, and the
 * caller's own votes, bookmarks and follows, and whether this connection may write (a read-only grant may not).
 * Two round trips: the path page (its own batch), then the story, the scores and the caller's marks (and one before
 * them to find a story's main line, when called with the story's id).
 */
export const readerViewTool = defineTool({
  name: "reader_view",
  title: "Open a branch in the Storyloom reader",
  description: () =>
    "For the Storyloom reader app (hosts with MCP Apps call it from the app, not the model): a page of a branch's reading path (50 " +
    "segments; `page` from 1) with the other ways on at each fork, each segment's vote score and the caller's own votes, bookmarks and " +
    "follows, and the story's labels and length rule. Pass branch_id, or story_id for its main line. A model reads with read_branch instead.",
  input: toolInput(
    z.object({
      branch_id: idArgument("The branch to read (else story_id's main line)").optional(),
      story_id: idArgument("A story, to read its main line").optional(),
      page: z.number().int().min(1).default(1).describe(`The page of the path (${PATH_PAGE_SEGMENTS} segments each; default 1)`),
    }),
  ),
  access: "anyone",
  readOnly: true,
  app: "app",
  run: async (door, { branch_id, story_id, page }) => {
    const db = door.guest.db;
    const viewer = viewerOf(door.actor);
    let branchId = branch_id && pathId(branch_id, "Branch");
    if (!branchId) {
      if (!story_id) throw validationError([{ field: "branch_id", issue: "Pass branch_id, or story_id for its main line" }]);
      const [main] = await rawAll<{ id: string }>(db, sql`SELECT id FROM branches WHERE story_id = ${pathId(story_id, "Story")} AND is_main = 1 LIMIT 1`);
      if (!main) throw notFound("Story");
      branchId = main.id;
    }
    const path = await readerPath(db, branchId, page, viewer);
    const ids = path.segments.map((s) => s.id);
    const me = viewer?.id ?? "";
    const [story, [scores, mine, follows]] = await oneTrip(
      db,
      storyRead(db, path.story.id, viewer),
      readOf(
        [
          // The page's ids as one JSON array (one bound value, whatever the page's length).
          rawAll<{ target_id: string; score: number }>(
            db,
            sql`SELECT v.target_id, ${weightedTotal("v")} AS score FROM votes v
              WHERE v.target_type = 'segment' AND v.target_id IN (SELECT value FROM json_each(${JSON.stringify(ids)})) GROUP BY v.target_id`,
          ),
          rawAll<{ target_id: string; vote: number }>(
            db,
            sql`SELECT target_id, vote FROM votes WHERE voter_id = ${me} AND story_id = ${path.story.id} AND target_type = 'segment'`,
          ),
          rawAll<{ id: string; target_type: string }>(
            db,
            sql`SELECT id, target_type FROM follows WHERE follower_id = ${me} AND ((target_type = 'branch' AND target_id = ${branchId}) OR (target_type = 'story' AND target_id = ${path.story.id}))`,
          ),
        ],
        (results) => results,
      ),
    );
    const scoreOf = new Map(scores.map((s) => [s.target_id, round3(s.score)]));
    const voteOf = new Map(mine.map((v) => [v.target_id, v.vote]));
    const followOf = (type: string) => follows.find((f) => f.target_type === type)?.id ?? null;
    const data = {
      story: {
        id: story.id,
        title: story.title,
        language: story.language,
        min_length: story.min_length,
        max_length: story.max_length,
        status: story.status,
        tags: story.tags,
        rating: story.rating,
        warnings: story.warnings,
        authorship: story.authorship,
        main_branch_id: story.main_branch_id,
      },
      branch: path.branch,
      page: path.page,
      pages: path.pages,
      length: path.length,
      segments: path.segments.map((s) => ({
        ...s,
        score: scoreOf.get(s.id) ?? 0,
        my_vote: voteOf.get(s.id) ?? 0,
        bookmark_id: path.marks.bookmarks[s.id] ?? null,
      })),
      following: { branch: followOf("branch"), story: followOf("story") },
      viewer: door.writes
        ? { can_write: true, why_not: null }
        : { can_write: false, why_not: "This connection was approved to read only: approve writing for this app to vote, follow, bookmark and write." },
    };
    return toolResult(data, `"${path.branch.title}" in "${story.title}": page ${path.page} of ${path.pages}, ${path.segments.length} segments.`);
  },
});
