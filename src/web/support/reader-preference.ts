import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../../context";
import type { ReaderPreference } from "../../domain/discovery/story-filter";
import { validationError } from "../../lib/errors";
import { HIDDEN_TAGS_PER_READER, type Tag, tagKey } from "../../lib/tag-rule";
import { cookieOptions, viewerOf } from "./session";

/**
 * An anonymous reader's preferences for the lists, kept in their browser: a cookie, never a D1 write. A
 * signed-in reader's are kept with their account (`preferences`, read by the list's own query).
 */
const PREFERENCE_COOKIE = "storyloom_prefs";
/** A year: a preference outlives sessions. */
const MAX_AGE = 365 * 86_400;
/** Browsers keep cookies of about 4 KB: a longer one would be dropped silently. */
const MAX_COOKIE_CHARS = 3_800;

export interface CookiePreference {
  hideMature: boolean;
  hiddenTags: string[];
}

/** The cookie's preference; null when there is none, or it is not one of ours (it is then ignored, never an error). */
export function cookiePreference(c: Context<AppEnv>): CookiePreference | null {
  const text = getCookie(c, PREFERENCE_COOKIE, cookieOptions(c).prefix);
  if (!text) return null;
  try {
    const v = JSON.parse(text) as { m?: unknown; t?: unknown };
    const tags = Array.isArray(v.t) ? v.t.filter((t): t is string => typeof t === "string").slice(0, HIDDEN_TAGS_PER_READER) : [];
    return { hideMature: v.m === true, hiddenTags: [...new Set(tags.map(tagKey).filter(Boolean))] };
  } catch {
    return null;
  }
}

/** Keeps an anonymous reader's preference in their cookie; too long a list for a cookie is a 400 naming it. */
export function keepInCookie(c: Context<AppEnv>, prefs: { hide_mature: boolean; hidden_tags: Tag[] }) {
  const text = JSON.stringify({ m: prefs.hide_mature, t: prefs.hidden_tags.map((t) => t.key) });
  if (encodeURIComponent(text).length > MAX_COOKIE_CHARS) {
    throw validationError([{ field: "hidden_tags", issue: "are too long to keep in this browser: sign in to keep them with your account" }]);
  }
  setCookie(c, PREFERENCE_COOKIE, text, { ...cookieOptions(c), maxAge: MAX_AGE });
}

/** What the reader of this page chose not to see in lists: their account's preference, their cookie's, or nothing. */
export function readerPreference(c: Context<AppEnv>): ReaderPreference {
  const viewer = viewerOf(c);
  if (viewer) return { accountId: viewer.id };
  return cookiePreference(c);
}

/** True when the page depends on a preference cookie (so no shared cache may serve it to another reader). */
export const hasPreferenceCookie = (c: Context<AppEnv>) => getCookie(c, PREFERENCE_COOKIE, cookieOptions(c).prefix) !== undefined;
