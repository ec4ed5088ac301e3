import * as domain from "../domain/community/votes";
import type { VoteBody } from "../schemas/votes";
import type { Caller } from "./caller";

/** Casts (or replaces) the caller's vote; `created` is false when it replaced an earlier one. */
export const castVote = (caller: Caller, body: VoteBody) => domain.castVote(caller.db, caller.actor, body, caller.idempotency);
