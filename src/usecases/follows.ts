import { runRead } from "../db/client";
import * as follows from "../domain/following/follows";
import * as inbox from "../domain/following/inbox";
import type { FollowBody } from "../schemas/follows";
import type { MarkReadBody } from "../schemas/inbox";
import type { Caller } from "./caller";

/** What every door shares of follows and the inbox: the caller's own, nobody else's. */

/** Follows a story, branch or author; `created` is false when the caller already followed it (the same follow). */
export const follow = (caller: Caller, body: FollowBody) => follows.follow(caller.db, caller.actor, body, caller.config.limits.followsPerAccount);

/** Removes one of the caller's follows. */
export const unfollow = (caller: Caller, followId: string) => follows.unfollow(caller.db, caller.actor, followId);

export const listFollows = (caller: Caller, page: { limit: number; offset: number }) => follows.listFollows(caller.db, caller.actor, page.limit, page.offset);

/** A page of the caller's inbox, newest activity first, with the unread count. */
export const readInbox = (caller: Caller, opts: { unread: boolean; limit: number; offset: number }) =>
  runRead(caller.db, inbox.inboxRead(caller.db, caller.actor, opts));

/** Marks items of the caller's inbox read (by id, or up to a time); answers how many, and what is left unread. */
export const markInboxRead = (caller: Caller, body: MarkReadBody) => inbox.markRead(caller.db, caller.actor.id, body);
