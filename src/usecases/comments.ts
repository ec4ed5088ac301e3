import * as domain from "../domain/community/comments";
import { publishInboxEvents } from "../domain/events/inbox-events";
import type { CommentBody } from "../schemas/comments";
import type { Caller } from "./caller";

/** Comments on a branch, or replies to one of its comments (the parent's author hears of a reply in their inbox). */
export async function addComment(caller: Caller, branchId: string, body: CommentBody) {
  const { created, events } = await domain.addComment(caller.db, caller.actor, branchId, body, caller.idempotency);
  await caller.background(publishInboxEvents(caller.fanout, caller.db, events));
  return created;
}

/** Deletes a comment (its author or an admin). */
export const deleteComment = ({ db, actor }: Caller, commentId: string) => domain.deleteComment(db, actor, commentId);
