import { oneTrip, readOf } from "../db/client";
import * as domain from "../domain/following/feed-tokens";
import { inboxRead } from "../domain/following/inbox";
import { inboxFeedPath } from "../lib/feeds";
import type { Caller } from "./caller";

/**
 * The caller's private inbox feed, whichever door asks (`POST /me/feed-token`, the inbox page's form): a
 * new address, answered once (any earlier one stops at once), and its revoking.
 */
export async function mintFeedToken(caller: Caller) {
  const { token, createdAt } = await domain.mintFeedToken(caller.db, caller.actor.id);
  return { url: `${caller.config.publicOrigin}${inboxFeedPath(token)}`, created_at: createdAt };
}

export const revokeFeedToken = (caller: Caller) => domain.revokeFeedToken(caller.db, caller.actor.id);

/** The inbox page's read: a page of the caller's inbox, and since when they have a feed address (null: none); one round trip. */
export async function readInboxPage(caller: Caller, opts: { unread: boolean; limit: number; offset: number }) {
  const [inbox, feedSince] = await oneTrip(
    caller.db,
    inboxRead(caller.db, caller.actor, opts),
    readOf([domain.feedTokenQuery(caller.db, caller.actor.id)], ([[row]]) => row?.created_at ?? null),
  );
  return { inbox, feedSince };
}
