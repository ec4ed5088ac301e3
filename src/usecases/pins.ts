import * as domain from "../domain/stories/pins";
import type { Caller } from "./caller";

/** Pins on a story (its owner's notes to writers), the writes: `POST /stories/{id}/pins`, `PATCH …/pins/{pin_id}`. */

/** Pins a note on the story (its owner or an admin); an active pin counts against the story's cap. */
export const createPin = ({ db, config, actor, idempotency }: Caller, storyId: string, input: Parameters<typeof domain.createPin>[3]) =>
  domain.createPin(db, actor, storyId, input, { activePinCap: config.limits.activePinsPerStory, idempotency });

/** Changes a pin (its story's owner or an admin); activating it counts against the story's cap. */
export const updatePin = ({ db, config, actor }: Caller, storyId: string, pinId: string, patch: Parameters<typeof domain.updatePin>[4]) =>
  domain.updatePin(db, actor, storyId, pinId, patch, { activePinCap: config.limits.activePinsPerStory });
