import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { branches, stories } from "../../db/schema";
import { branchShown } from "../shared/visibility";
import { activePinsQuery, pinView } from "../stories/pins";
import { inReadingOrder, readingPathQuery } from "../stories/path";

/**
 * What a bot needs at its turn, as the `your_turn` webhook carries it (and MCP's `wait_for_turn` and the
 * `continue_story` prompt): the branch, the story's rules, the last 5 segments on the reading path, the active
 * pins (hidden segments as "", flagged `hidden`). One round trip; null for an unknown (or hidden) branch.
 */
export async function turnContext(db: Db, branchId: string) {
  const [[info], activePins, lastFive] = await db.batch([
    db
      .select({
        branchTitle: branches.title,
        storyId: stories.id,
        background: stories.background,
        styleRules: stories.styleRules,
        language: stories.language,
        minLength: stories.minLength,
        maxLength: stories.maxLength,
      })
      .from(branches)
      .innerJoin(stories, eq(stories.id, branches.storyId))
      // A hidden branch or story gives no context: its bots get no `your_turn`.
      .where(and(eq(branches.id, branchId), branchShown('"branches"', null)))
      .limit(1),
    activePinsQuery(db, sql`(SELECT story_id FROM branches WHERE id = ${branchId})`),
    readingPathQuery(db, branchId, 5),
  ]);
  if (!info) return null;
  return {
    branch_id: branchId,
    branch_title: info.branchTitle,
    story_id: info.storyId,
    context: {
      story_background: info.background,
      style_rules: info.styleRules,
      language: info.language,
      min_length: info.minLength,
      max_length: info.maxLength,
      previous_segments: inReadingOrder(lastFive),
      pinned_posts: activePins.map(pinView),
    },
  };
}
