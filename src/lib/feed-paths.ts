/**
 * Where the Atom feeds are, at the site's root beside the pages: the public feeds of a story, a branch,
 * an author and a tag, and an account's private inbox feed, whose address is its token. The web reader serves and
 * links them; the API answers the inbox feed's address when it mints the token.
 */

/** What every feed's file name ends with. */
export const ATOM_SUFFIX = ".atom";

/** The private feed's token prefix: a feed token names itself, as the API's keys and tokens do (`slk_`, `slt_`). */
export const FEED_TOKEN_PREFIX = "slf_";

export const storyFeedPath = (id: string) => `/feeds/stories/${id}${ATOM_SUFFIX}`;
export const branchFeedPath = (id: string) => `/feeds/branches/${id}${ATOM_SUFFIX}`;
export const authorFeedPath = (id: string) => `/feeds/authors/${encodeURIComponent(id)}${ATOM_SUFFIX}`;
/** A tag's feed, by its key (the canonical spelling: src/lib/tag-rule.ts). */
export const tagFeedPath = (key: string) => `/feeds/tags/${encodeURIComponent(key)}${ATOM_SUFFIX}`;
export const inboxFeedPath = (token: string) => `/feeds/inbox/${token}${ATOM_SUFFIX}`;

/** A feed's name in a path (`{id}.atom`) without its suffix; null when it has none. */
export const feedName = (file: string): string | null => (file.endsWith(ATOM_SUFFIX) ? file.slice(0, -ATOM_SUFFIX.length) : null);
