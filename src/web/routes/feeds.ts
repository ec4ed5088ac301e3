import { type Context, Hono, type MiddlewareHandler } from "hono";
import { etag } from "hono/etag";
import type { AppEnv } from "../../context";
import { inboxFeed } from "../../domain/following/feed-tokens";
import { FEED_ENTRIES, type FeedEntry, authorFeed, branchFeed, storyFeed, tagFeed } from "../../domain/following/feeds";
import type { InboxItem } from "../../domain/following/inbox";
import { notFound } from "../../lib/errors";
import { authorFeedPath, branchFeedPath, feedName, inboxFeedPath, storyFeedPath, tagFeedPath } from "../../lib/feed-paths";
import { accountId, pathId } from "../../lib/ids";
import { tagKey } from "../../lib/tag-rule";
import { publicReadCache } from "../../middleware/read-cache";
import { anonymousReadLimit } from "../../middleware/read-limit";
import { ATOM_TYPE, type AtomEntry, type AtomFeed, atomXml } from "../support/atom";
import { itemHref } from "../support/inbox-links";
import { authorHref } from "../components/layout";
import { readHref } from "../support/path-links";
import { absolute } from "../support/render";

/**
 * The Atom feeds, at the site's root beside the pages but before their middleware (no session, no
 * page headers): a feed is the same for every reader. The public feeds are cached reads as the pages are (the
 * micro-cache, one entry for everyone, and `public, max-age`); the private inbox feed is never stored by anyone but
 * its reader (`private, no-cache`). Every feed has a strong ETag (If-None-Match → 304) and counts as an anonymous
 * read. Errors are the API's envelope (a feed reader reads no error page): 404 for what is not there.
 */
export const feedRoutes = new Hono<AppEnv>();

/** How long a shared cache or a feed reader may keep a public feed without asking again (a minute: feeds are polled). */
const PUBLIC_FEED = "public, max-age=60";
/** The private feed: its reader's own, revalidated on every poll (a 304 when unchanged), so a revoke holds at once. */
const PRIVATE_FEED = "private, no-cache";

/**
 * ETag (outermost, so a micro-cache hit is answered 304 too), then the anonymous read limit; the feed's caching on what
 * answers, set here because a 304 or a hit is a new response.
 */
function feedMiddleware(cacheControl: string, more: Record<string, string> = {}): MiddlewareHandler<AppEnv> {
  const tagged = etag();
  return async (c, next) => {
    await tagged(c, () => anonymousReadLimit(c, next) as Promise<void>);
    if (c.res.status !== 200 && c.res.status !== 304) return;
    for (const [name, value] of Object.entries({ "Cache-Control": cacheControl, "X-Content-Type-Options": "nosniff", ...more })) c.res.headers.set(name, value);
  };
}

const publicFeed = [feedMiddleware(PUBLIC_FEED), publicReadCache({ shared: true })] as const;
// The address is a secret: sent nowhere as a referrer, and no search engine lists it.
const privateFeed = feedMiddleware(PRIVATE_FEED, { "Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex" });

/** The feed's name in its path (`{name}.atom`); without the suffix, there is no such feed. */
function nameOf(c: Context<AppEnv>): string {
  const name = feedName(c.req.param("file") ?? "");
  if (name === null) throw notFound("Feed");
  return name;
}

const atom = (c: Context<AppEnv>, feed: AtomFeed) => c.body(atomXml(feed), 200, { "Content-Type": ATOM_TYPE });

/** A feed's `updated`: its newest entry's, or when what it follows began. */
const updatedOf = (entries: { updated: string }[], since: string) => entries[0]?.updated ?? since;

const SITE = (c: Context<AppEnv>) => ({ name: "Storyloom", uri: absolute(c, "/") });

function titleOf(e: FeedEntry): string {
  if (e.kind === "segment") return `Segment ${e.sequence_order} on “${e.branch_title}” of “${e.story_title}”`;
  if (e.kind === "branch") return `New branch “${e.branch_title}” of “${e.story_title}”`;
  return `New story: “${e.story_title}”`;
}

/** Where an entry leads: a segment at its place on its branch's path page, a branch's page, a story's page. */
function hrefOf(e: FeedEntry): string {
  if (e.kind === "segment") return readHref(e.branch_id!, e.sequence_order!);
  return e.kind === "branch" ? `/branches/${e.branch_id}` : `/stories/${e.story_id}`;
}

function entryOf(c: Context<AppEnv>, e: FeedEntry): AtomEntry {
  const content = e.content || (e.kind === "branch" ? `A new branch of “${e.story_title}”, forking after segment ${e.sequence_order}.` : "");
  return {
    id: `urn:uuid:${e.id}`,
    title: titleOf(e),
    updated: e.created_at,
    published: e.created_at,
    href: absolute(c, hrefOf(e)),
    author: { name: e.author_name || "someone", uri: absolute(c, authorHref(e.author_id, e.author_type)) },
    content,
    lang: e.language,
  };
}

/** A public feed of entries: its id and self link its own address, its alternate link the page it follows. */
function entriesFeed(
  c: Context<AppEnv>,
  at: { path: string; page: string; title: string; subtitle: string; since: string; lang?: string },
  rows: FeedEntry[],
  author = SITE(c),
) {
  const self = absolute(c, at.path);
  const entries = rows.map((e) => entryOf(c, e));
  return atom(c, {
    id: self,
    title: at.title,
    subtitle: at.subtitle,
    updated: updatedOf(entries, at.since),
    self,
    alternate: absolute(c, at.page),
    lang: at.lang,
    author,
    entries,
  });
}

feedRoutes.get("/feeds/stories/:file", ...publicFeed, async (c) => {
  const id = pathId(nameOf(c), "Story");
  const f = await storyFeed(c.get("db"), id);
  const at = { path: storyFeedPath(id), page: `/stories/${id}`, since: f.created_at, lang: f.language };
  return entriesFeed(c, { ...at, title: f.title, subtitle: `New branches of “${f.title}” and new segments on its main line` }, f.entries);
});

feedRoutes.get("/feeds/branches/:file", ...publicFeed, async (c) => {
  const id = pathId(nameOf(c), "Branch");
  const f = await branchFeed(c.get("db"), id);
  const title = `“${f.title}” of “${f.story_title}”`;
  return entriesFeed(
    c,
    { path: branchFeedPath(id), page: `/branches/${id}`, title, subtitle: `New segments on ${title}`, since: f.created_at, lang: f.language },
    f.entries,
  );
});

feedRoutes.get("/feeds/authors/:file", ...publicFeed, async (c) => {
  const id = accountId(nameOf(c));
  const f = await authorFeed(c.get("db"), id);
  const page = authorHref(f.id, f.type);
  const at = { path: authorFeedPath(f.id), page, title: f.name, subtitle: `New stories and segments by ${f.name}`, since: f.created_at };
  return entriesFeed(c, at, f.entries, { name: f.name, uri: absolute(c, page) });
});

feedRoutes.get("/feeds/tags/:file", ...publicFeed, async (c) => {
  const key = tagKey(nameOf(c));
  if (!key) throw notFound("Tag");
  const f = await tagFeed(c.get("db"), key);
  const at = { path: tagFeedPath(f.key), page: `/tags/${encodeURIComponent(f.key)}`, since: f.created_at };
  return entriesFeed(c, { ...at, title: `Stories tagged “${f.name}”`, subtitle: `New stories tagged “${f.name}”` }, f.entries);
});

/** An inbox item as an entry: its words for a title, its quote (or its words again) for content. */
function itemEntry(c: Context<AppEnv>, item: InboxItem): AtomEntry {
  const actor = item.actor;
  return {
    id: `urn:uuid:${item.id}`,
    title: item.message,
    updated: item.updated_at,
    published: item.created_at,
    href: absolute(c, itemHref(item)),
    author: actor ? { name: actor.name, uri: absolute(c, authorHref(actor.id, actor.type)) } : SITE(c),
    content: item.comment?.excerpt || item.segment?.excerpt || item.message,
  };
}

feedRoutes.get("/feeds/inbox/:file", privateFeed, async (c) => {
  const token = nameOf(c);
  const { account, since, items } = await inboxFeed(c.get("db"), token, FEED_ENTRIES);
  const self = absolute(c, inboxFeedPath(token));
  const entries = items.map((item) => itemEntry(c, item));
  const title = `Inbox of ${account.name}`;
  return atom(c, { id: self, title, updated: updatedOf(entries, since), self, alternate: absolute(c, "/inbox"), author: SITE(c), entries });
});
