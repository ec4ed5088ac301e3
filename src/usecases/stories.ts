import { oneTrip } from "../db/client";
import { branchListRead, branchTreeRead } from "../domain/stories/branches";
import { publishInboxEvents } from "../domain/events/inbox-events";
import * as domain from "../domain/stories/stories";
import type { CreateStoryBody } from "../schemas/stories";
import type { Caller } from "./caller";

/**
 * Creates the story: its starter and initial segments from the top level, else from the pack (validated present);
 * its inbox event, if written, goes to the fan-out queue after the answer.
 */
export async function createStory(caller: Caller, body: CreateStoryBody) {
  const pack = body.story_pack;
  const input = { ...body, starter: (body.starter ?? pack?.starter)!, initial_segments: (body.initial_segments ?? pack?.initial_segments)! };
  const { created, events } = await domain.createStory(caller.db, caller.actor, input, caller.idempotency);
  await caller.background(publishInboxEvents(caller.fanout, caller.db, events));
  return created;
}

/** Changes a story (owner or admin); archiving it also tells its branches' live streams, after the answer. */
export async function updateStory(caller: Caller, storyId: string, patch: domain.StoryPatch) {
  const story = await domain.updateStory(caller.db, caller.actor, storyId, patch);
  if (patch.status === "archived") {
    const tell = domain.storyBranchIds(caller.db, storyId).then((ids) => Promise.all(ids.map((branchId) => caller.rooms.archived(branchId))));
    await caller.background(tell);
  }
  return story;
}

/** A story for an agent: the story, the first page of its branches (most active first) and its branch tree, in one round trip. */
export async function storyOverview(caller: Pick<Caller, "db">, storyId: string) {
  const { db } = caller;
  const [story, branches, tree] = await oneTrip(
    db,
    domain.storyRead(db, storyId),
    branchListRead(db, storyId, { sort: "activity", includeAll: false, limit: 6, offset: 0 }),
    branchTreeRead(db, storyId),
  );
  return { story, branches: branches.branches, branches_total: branches.pagination.total, tree: tree.tree };
}
