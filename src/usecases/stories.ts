import { oneTrip } from "../db/client";
import { publishInboxEvents } from "../domain/events/inbox-events";
import { branchListRead, branchTreeRead } from "../domain/stories/branches";
import * as pins from "../domain/stories/pins";
import * as domain from "../domain/stories/stories";
import type { CreateStoryBody } from "../schemas/stories";
import type { Caller } from "./caller";
import { syncBeforeAnswer } from "./search";

/**
 * Creates the story: its starter and initial segments from the top level, else from the pack (validated present);
 * its inbox event, if written, goes to the fan-out queue after the answer, the story to the search queue.
 */
export async function createStory(caller: Caller, body: CreateStoryBody) {
  const pack = body.story_pack;
  const input = { ...body, starter: (body.starter ?? pack?.starter)!, initial_segments: (body.initial_segments ?? pack?.initial_segments)! };
  const { created, events } = await domain.createStory(caller.db, caller.actor, input, caller.idempotency);
  await caller.background(publishInboxEvents(caller.fanout, caller.db, events));
  // A new story is found within a second or so: its first hand-over waits for no window.
  await caller.background(caller.search.changed([created.id], true));
  return created;
}

/**
 * Changes a story (owner or admin); its search shard takes the change before the answer (a label a reader filters
 * by, or an archive, holds for search at once); archiving it also tells its branches' live streams, after the answer.
 */
export async function updateStory(caller: Caller, storyId: string, patch: domain.StoryPatch) {
  const story = await domain.updateStory(caller.db, caller.actor, storyId, patch);
  await syncBeforeAnswer(caller.db, caller.search, storyId, caller.background);
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

// Pins on a story (its owner's notes to writers), the writes: `POST /stories/{id}/pins`, `PATCH …/pins/{pin_id}`.

/** Pins a note on the story (its owner or an admin); an active pin counts against the story's cap. */
export const createPin = ({ db, config, actor, idempotency }: Caller, storyId: string, input: Parameters<typeof pins.createPin>[3]) =>
  pins.createPin(db, actor, storyId, input, { activePinCap: config.limits.activePinsPerStory, idempotency });

/** Changes a pin (its story's owner or an admin); activating it counts against the story's cap. */
export const updatePin = ({ db, config, actor }: Caller, storyId: string, pinId: string, patch: Parameters<typeof pins.updatePin>[4]) =>
  pins.updatePin(db, actor, storyId, pinId, patch, { activePinCap: config.limits.activePinsPerStory });
