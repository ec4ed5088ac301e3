import { type Context, Hono } from "hono";
import { etag } from "hono/etag";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../../context";
import { readerPath } from "../../domain/reading/path-page";
import { readerBot, readerHome, readerSearch, readerStory, readerTag } from "../../domain/reading/reader";
import { QUERY_MAX_LENGTH } from "../../lib/search-text";
import { SEARCH_TYPES, type SearchType, searchOf, searchWords } from "../../schemas/search";
import { SearchPage } from "../pages/search";
import { tagKey } from "../../lib/tags";
import { ownsOrAdmin } from "../../domain/shared/actor";
import { STORY_SORTS, type StorySort } from "../../schemas/fields";
import { isReadMethod } from "../../lib/envelope";
import { ApiError, type ErrorStatus, apiErrorIn } from "../../lib/errors";
import { isUuid, pathId } from "../../lib/ids";
import { publicReadCache } from "../../middleware/read-cache";
import { exportResponse } from "../../routes/exports";
import { anonymousReadLimit } from "../../middleware/read-limit";
import { BotPage } from "../pages/bot";
import { ErrorPage } from "../pages/error";
import { HomePage } from "../pages/home";
import { StoryPage } from "../pages/story";
import { TagPage } from "../pages/tag";
import { PathPage } from "../pages/path";
import { hasPreferenceCookie, readerPreference } from "../support/reader-preference";
import { absolute, branchPage, page, positiveInt } from "../support/render";
import { pageAgainSignedOut, pageViewer, session, viewerOf } from "../support/session";
import { STYLESHEET, STYLESHEET_PATH } from "../support/style";
import { writeRoutes } from "./writing";
import { adminRoutes } from "./admin";
import { reportRoutes } from "./reports";
import { botPageRoutes } from "./bots";
import { oauthPageRoutes } from "./oauth";
import { preferenceRoutes } from "./preferences";
import { bookmarkRoutes } from "./bookmarks";
import { followRoutes } from "./follows";

/** Stories per page of the home page. */
export const STORIES_PER_PAGE = 20;
/** Pages past this one are not served (an offset is a scan). */
const MAX_PAGE = 1000;

const errorTitles: Partial<Record<ErrorStatus, string>> = { 403: "Refused", 404: "Not found", 413: "Too large", 429: "Too many requests", 500: "Server error" };

/** An error the pages did not expect: logged (as the API's renderer does), and shown without its details. */
function unexpected(c: Context<AppEnv>, err: unknown): ApiError {
  console.error(JSON.stringify({ at: new Date().toISOString(), request_id: c.get("requestId") ?? null, event: "unhandled error" }), err);
  return new ApiError("INTERNAL_ERROR", "Something went wrong on our side.");
}

/** Errors as HTML pages (the API keeps its JSON envelope): 404 for unknown ids and paths, 429, 500. */
function renderPageError(c: Context<AppEnv>, err: unknown) {
  const e = apiErrorIn(err) ?? unexpected(c, err);
  c.set("errorCode", e.code);
  const again = pageAgainSignedOut(c);
  if (again) return again;
  // A session its account's standing refused signs nobody in on its error page (the cookie is cleared too).
  if (c.get("standing")?.refused) c.set("viewer", undefined);
  for (const [name, value] of Object.entries(e.headers ?? {})) c.header(name, value);
  const title = errorTitles[e.status] ?? "Error";
  const message = e.status === 404 ? `${e.message}: there is nothing at this address.` : e.message;
  const canonical = absolute(c, new URL(c.req.url).pathname);
  return page(c, <ErrorPage status={e.status} title={title} message={message} canonical={canonical} viewer={pageViewer(c)} />, e.status);
}

/**
 * The web reader: read-only HTML pages beside the API, mounted at `/` after it. Each page reads through one
 * batched domain function (src/domain/reading/reader.ts): one D1 round trip. Strong ETags answer repeat views with 304.
 */
export const webRoutes = new Hono<AppEnv>();

/** The pages' Content-Security-Policy: this origin's own stylesheet, script, stream and forms, nothing else. */
const pageHeaders = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", "data:"],
    connectSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
    objectSrc: ["'none'"],
  },
  crossOriginEmbedderPolicy: false,
  // Not secureHeaders' no-referrer: under it a browser sends `Origin: null` with a same-origin form POST, which
  // the Origin check must refuse. same-origin keeps the Origin for our own forms and sends nothing to other sites.
  referrerPolicy: "same-origin",
});

/**
 * The pages' headers, with one widening: a page that named another origin for its forms (`formTarget`: the consent
 * page, whose Approve and Deny are answered with a redirect to the app's validated redirect URI) lets its forms go
 * there too. Chromium checks `form-action` against the redirect that follows the POST, so under `'self'` alone
 * Approve and Deny would do nothing; every other page keeps `'self'`.
 */
webRoutes.use("*", async (c, next) => {
  await pageHeaders(c, next);
  const target = c.get("formTarget");
  const policy = c.res.headers.get("Content-Security-Policy");
  if (target && policy) c.res.headers.set("Content-Security-Policy", policy.replace("form-action 'self'", `form-action 'self' ${target}`));
});
webRoutes.use("*", session);
webRoutes.use("*", (c, next) => (isReadMethod(c.req.method) ? pageMiddleware(c, next) : next()));

const strongEtag = etag();
/**
 * ETag (outermost, so a micro-cache hit is answered 304 too), then the anonymous read limit. Pages are
 * revalidated by the browser on every view (`no-cache`): an unchanged page costs a 304, a changed one is seen at once.
 */
async function pageMiddleware(c: Context<AppEnv>, next: () => Promise<void>) {
  await strongEtag(c, () => anonymousReadLimit(c, next) as Promise<void>);
  // Set here, not by the handlers: a 304 (or a micro-cache hit) is a new response that must carry it too.
  // A page that carries a one-time secret (the consent page's handle) is `no-store` already, and stays so.
  if (c.res.headers.get("Cache-Control") === "no-store") return;
  c.res.headers.set("Cache-Control", c.req.path === STYLESHEET_PATH ? "public, max-age=3600" : "no-cache");
}

webRoutes.onError((err, c) => renderPageError(c, err));

webRoutes.get(STYLESHEET_PATH, (c) => {
  return c.body(STYLESHEET, 200, { "Content-Type": "text/css; charset=utf-8" });
});

// The forms and the account and new-story pages (before `/stories/:id`, which would take "new" for an id).
webRoutes.route("/", writeRoutes);
// Reports from every page, and the moderators' pages.
webRoutes.route("/", reportRoutes);
webRoutes.route("/", adminRoutes);
// A person's bots.
webRoutes.route("/", botPageRoutes);
// Signing in an assistant through OAuth, and the person's connected apps.
webRoutes.route("/", oauthPageRoutes);
// A reader's preferences for the lists.
webRoutes.route("/", preferenceRoutes);
// A reader's bookmarks and places on paths.
webRoutes.route("/", bookmarkRoutes);
// Follows, writers' pages and the inbox.
webRoutes.route("/", followRoutes);

/**
 * Pages shown to a signed-in human are theirs (forms, their name, their preferences), as are the lists an anonymous
 * reader's preference cookie filters: never served from or stored in the shared cache.
 */
const readCache = publicReadCache({ unless: (c) => viewerOf(c) !== null || hasPreferenceCookie(c) });

/** A list page's sort and page from its query (an unknown sort is the default; a page out of range the first). */
function listQuery(c: Context<AppEnv>) {
  const asked = c.req.query("sort");
  const sort: StorySort = STORY_SORTS.find((s) => s === asked) ?? "new";
  const pageNo = positiveInt(c.req.query("page"), MAX_PAGE);
  const hrefOf = (path: string, s: StorySort, n: number) => {
    const q = new URLSearchParams();
    if (s !== "new") q.set("sort", s);
    if (n > 1) q.set("page", String(n));
    const text = q.toString();
    return text ? `${path}?${text}` : path;
  };
  const links = (path: string) => ({ sortHref: (s: StorySort) => hrefOf(path, s, 1), pageHref: (n: number) => hrefOf(path, sort, n) });
  return { sort, page: pageNo, offset: (pageNo - 1) * STORIES_PER_PAGE, links, canonical: (path: string) => absolute(c, hrefOf(path, sort, pageNo)) };
}

webRoutes.get("/", readCache, async (c) => {
  const q = listQuery(c);
  const viewer = viewerOf(c);
  // "Continue reading" heads the first page for a signed-in reader, read in the list's own batch.
  const opts = { sort: q.sort, limit: STORIES_PER_PAGE, offset: q.offset, preference: readerPreference(c) };
  const [data, places] = await readerHome(c.get("db"), opts, q.page === 1 ? viewer : null);
  return page(c, <HomePage data={data} places={places} sort={q.sort} page={q.page} canonical={q.canonical("/")} {...q.links("/")} viewer={pageViewer(c)} />);
});

webRoutes.get("/tags/:tag", readCache, async (c) => {
  const key = tagKey(c.req.param("tag"));
  if (!key) throw new ApiError("NOT_FOUND", "Tag not found");
  const q = listQuery(c);
  const path = `/tags/${encodeURIComponent(key)}`;
  const data = await readerTag(c.get("db"), key, { sort: q.sort, limit: STORIES_PER_PAGE, offset: q.offset, preference: readerPreference(c) });
  return page(c, <TagPage tag={data.tag} data={data} sort={q.sort} page={q.page} canonical={q.canonical(path)} {...q.links(path)} viewer={pageViewer(c)} />);
});

/** Hits per page of the search page. */
const HITS_PER_PAGE = 20;

/** Why words cannot be searched for, as the search page says it (by the field's refusal). */
const SEARCH_REFUSALS: Record<string, string> = {
  too_small: "Type a word to search for.",
  too_big: `Search for at most ${QUERY_MAX_LENGTH} characters.`,
  custom: "Type a word to search for: punctuation alone finds nothing.",
};

webRoutes.get("/search", readCache, async (c) => {
  const raw = c.req.query("q");
  const type = SEARCH_TYPES.find((t) => t === c.req.query("type")) ?? "all";
  const pageNo = positiveInt(c.req.query("page"), MAX_PAGE);
  const hrefOf = (t: SearchType, n: number) => {
    const q = new URLSearchParams({ q: raw ?? "" });
    if (t !== "all") q.set("type", t);
    if (n > 1) q.set("page", String(n));
    return `/search?${q}`;
  };
  const props = {
    viewer: viewerOf(c),
    type,
    page: pageNo,
    typeHref: (t: SearchType) => hrefOf(t, 1),
    pageHref: (n: number) => hrefOf(type, n),
  };
  if (raw === undefined) return page(c, <SearchPage canonical={absolute(c, "/search")} words={undefined} found={null} {...props} />);
  const canonical = absolute(c, hrefOf(type, pageNo));
  const words = searchWords.safeParse(raw);
  if (!words.success) {
    const error = SEARCH_REFUSALS[words.error.issues[0].code] ?? words.error.issues[0].message;
    return page(c, <SearchPage canonical={canonical} words={raw} found={null} error={error} {...props} />, 400);
  }
  // The web reader's lists show active stories by the reader's preference; so does its search.
  const filter = { status: "active" as const, tag: [], exclude_tag: [], rating: [], authorship: [] };
  const query = searchOf({ ...filter, q: words.data, type, limit: HITS_PER_PAGE, offset: (pageNo - 1) * HITS_PER_PAGE });
  const found = await readerSearch(c.get("db"), query, readerPreference(c));
  return page(c, <SearchPage canonical={canonical} words={raw} found={found} {...props} />);
});

webRoutes.get("/stories/:id", readCache, async (c) => {
  const id = pathId(c.req.param("id"), "Story");
  const viewer = viewerOf(c);
  const data = await readerStory(c.get("db"), id, viewer);
  const canEdit = !!viewer && ownsOrAdmin(viewer, data.story.owner_id);
  // The map with this branch's part unfolded; anything but a branch id draws it folded.
  const expand = c.req.query("expand");
  const unfolded = isUuid(expand) ? expand.toLowerCase() : null;
  return page(c, <StoryPage data={data} canonical={absolute(c, `/stories/${id}`)} viewer={pageViewer(c)} expand={unfolded} canEdit={canEdit} />);
});

webRoutes.get("/branches/:id", readCache, async (c) => branchPage(c, pathId(c.req.param("id"), "Branch")));

webRoutes.get("/branches/:id/read", readCache, async (c) => {
  const id = pathId(c.req.param("id"), "Branch");
  const pageNo = positiveInt(c.req.query("page"), Number.MAX_SAFE_INTEGER);
  const data = await readerPath(c.get("db"), id, pageNo, viewerOf(c));
  const canonical = absolute(c, pageNo > 1 ? `/branches/${id}/read?page=${pageNo}` : `/branches/${id}/read`);
  return page(c, <PathPage data={data} canonical={canonical} viewer={pageViewer(c)} />);
});

// The path as a file to take away, as the signed-in reader may read it: the API's export, for the cookie's
// viewer (the API reads no cookie). Never through the micro-cache: the file is streamed, and exports have a cache of their own.
for (const format of ["epub", "md"] as const) {
  webRoutes.get(`/branches/:id/export.${format}`, (c) => exportResponse(c, pathId(c.req.param("id"), "Branch"), format, viewerOf(c)));
}

webRoutes.get("/bots/:id", readCache, async (c) => {
  const id = pathId(c.req.param("id"), "Bot");
  const data = await readerBot(c.get("db"), id, viewerOf(c));
  return page(c, <BotPage data={data} canonical={absolute(c, `/bots/${id}`)} viewer={pageViewer(c)} />);
});

// Any other path: an HTML 404.
webRoutes.all("*", () => {
  throw new ApiError("NOT_FOUND", "Page not found");
});
