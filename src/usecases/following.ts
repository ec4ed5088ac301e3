import { oneTrip, readOf, runRead } from "../db/client";
import * as feedTokens from "../domain/following/feed-tokens";
import * as follows from "../domain/following/follows";
import * as inbox from "../domain/following/inbox";
import { inboxFeedPath } from "../lib/feed-paths";
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

/**
 * The caller's private inbox feed, whichever door asks (`POST /me/feed-token`, the inbox page's form): a
 * new address, answered once (any earlier one stops at once), and its revoking.
 */
export async function mintFeedToken(caller: Caller) {
  const { token, createdAt } = await feedTokens.mintFeedToken(caller.db, caller.actor.id);
  return { url: `${caller.config.publicOrigin}${inboxFeedPath(token)}`, created_at: createdAt };
}

export const revokeFeedToken = (caller: Caller) => feedTokens.revokeFeedToken(caller.db, caller.actor.id);

/** The inbox page's read: a page of the caller's inbox, and since when they have a feed address (null: none); one round trip. */
export async function readInboxPage(caller: Caller, opts: { unread: boolean; limit: number; offset: number }) {
  const [items, feedSince] = await oneTrip(
    caller.db,
    inbox.inboxRead(caller.db, caller.actor, opts),
    readOf([feedTokens.feedTokenQuery(caller.db, caller.actor.id)], ([[row]]) => row?.created_at ?? null),
  );
  return { inbox: items, feedSince };
}
