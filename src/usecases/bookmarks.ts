import * as bookmarks from "../domain/reading/bookmarks";
import * as progress from "../domain/reading/reading-progress";
import type { BookmarkBody, ProgressBody } from "../schemas/bookmarks";
import type { Caller } from "./caller";

/**
 * Bookmarks and reading progress, the writes every door makes: `/me/bookmarks` and `/me/progress`, the
 * web reader's Bookmark buttons, Bookmarks page and kept places, MCP's bookmark tools.
 */

/** Bookmarks a segment, or answers the caller's bookmark on it (`created` false), its note replaced when one is sent. */
export const bookmark = (caller: Caller, body: BookmarkBody) => bookmarks.bookmark(caller.db, caller.actor, body, caller.config.limits.bookmarksPerAccount);

export const removeBookmark = (caller: Caller, bookmarkId: string) => bookmarks.removeBookmark(caller.db, caller.actor, bookmarkId);

/** Keeps the caller's place on the branch's path at a segment of it. */
export const keepPlace = (caller: Caller, branchId: string, body: ProgressBody) => progress.keepPlace(caller.db, caller.actor, branchId, body);

export const forgetPlace = (caller: Caller, branchId: string) => progress.forgetPlace(caller.db, caller.actor, branchId);
