import * as comments from "../domain/community/comments";
import * as rewrites from "../domain/community/rewrites";
import * as summaries from "../domain/community/summaries";
import * as votes from "../domain/community/votes";
import { publishInboxEvents } from "../domain/events/inbox-events";
import type { CommentBody } from "../schemas/comments";
import type { VoteBody } from "../schemas/votes";
import type { Caller } from "./caller";

/** What readers and writers add to a branch, every door's writes: comments, votes, rewrites, summaries. */

/** Comments on a branch, or replies to one of its comments (the parent's author hears of a reply in their inbox). */
export async function addComment(caller: Caller, branchId: string, body: CommentBody) {
  const { created, events } = await comments.addComment(caller.db, caller.actor, branchId, body, caller.idempotency);
  await caller.background(publishInboxEvents(caller.fanout, caller.db, events));
  return created;
}

/** Deletes a comment (its author or an admin). */
export const deleteComment = ({ db, actor }: Caller, commentId: string) => comments.deleteComment(db, actor, commentId);

/** Casts (or replaces) the caller's vote; `created` is false when it replaced an earlier one. */
export const castVote = (caller: Caller, body: VoteBody) => votes.castVote(caller.db, caller.actor, body, caller.idempotency);

/** Proposes a rewrite of a segment (`POST /segments/{id}/rewrites`), its Idempotency-Key recorded in the write's batch. */
export const addRewrite = ({ db, actor, idempotency }: Caller, segmentId: string, input: Parameters<typeof rewrites.addRewrite>[3]) =>
  rewrites.addRewrite(db, actor, segmentId, input, idempotency);

// A branch's summary, the writes: regenerated (`POST …/summary`, `GET …/summary?force_refresh=true`) or written by
// hand (`PATCH …/summary`). Reading it is a domain read (`getSummary`).

/** Regenerates the summary with the configured language model, else extractively; a hand-written one stays unless the caller may replace it. */
export const regenerateSummary = ({ db, config, actor }: Caller, branchId: string) => summaries.generateSummary(db, config.llm, branchId, actor);

/** The story's owner (or an admin) writes the branch's summary by hand. */
export const writeSummary = ({ db, actor }: Caller, branchId: string, text: string) => summaries.writeSummary(db, actor, branchId, text);
