import { nowIso } from "../db/client";
import * as preferences from "../domain/accounts/preferences";
import * as bookmarks from "../domain/reading/bookmarks";
import * as progress from "../domain/reading/reading-progress";
import type { BookmarkBody, ProgressBody } from "../schemas/bookmarks";
import type { PreferencesBody } from "../schemas/preferences";
import type { Caller } from "./caller";

/**
 * A reader's own things, the writes every door makes: bookmarks and reading progress (`/me/bookmarks`,
 * `/me/progress`, the web reader's Bookmark buttons, Bookmarks page and kept places, MCP's bookmark tools) and
 * preferences for lists (`/me/preferences`, the preferences form).
 */

/** Bookmarks a segment, or answers the caller's bookmark on it (`created` false), its note replaced when one is sent. */
export const bookmark = (caller: Caller, body: BookmarkBody) => bookmarks.bookmark(caller.db, caller.actor, body, caller.config.limits.bookmarksPerAccount);

export const removeBookmark = (caller: Caller, bookmarkId: string) => bookmarks.removeBookmark(caller.db, caller.actor, bookmarkId);

/** Keeps the caller's place on the branch's path at a segment of it. */
export const keepPlace = (caller: Caller, branchId: string, body: ProgressBody) => progress.keepPlace(caller.db, caller.actor, branchId, body);

export const forgetPlace = (caller: Caller, branchId: string) => progress.forgetPlace(caller.db, caller.actor, branchId);

/** Sets the caller's preferences for lists: `PUT /me/preferences` and the web reader's preferences form. */
export const setPreferences = (caller: Caller, body: PreferencesBody) => preferences.setPreferences(caller.db, caller.actor.id, body, nowIso());
