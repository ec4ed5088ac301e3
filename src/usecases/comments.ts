import * as domain from "../domain/comments";
import type { CommentBody } from "../schemas/comments";
import type { Caller } from "./caller";

/** Comments on a branch, or replies to one of its comments. */
export const addComment = (caller: Caller, branchId: string, body: CommentBody) =>
  domain.addComment(caller.db, caller.actor, branchId, body, caller.idempotency);
