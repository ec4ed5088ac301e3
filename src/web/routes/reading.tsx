import { type Context, Hono } from "hono";
import type { AppEnv } from "../../context";
import { readerPath } from "../../domain/reading/path-page";
import { readerBot, readerHome, readerStory, readerTag } from "../../domain/reading/reader";
import { readerSearch } from "../../usecases/search";
import { ownsOrAdmin } from "../../domain/shared/actor";
import { ApiError } from "../../lib/errors";
import { isUuid, pathId } from "../../lib/ids";
import { QUERY_MAX_LENGTH } from "../../lib/search-text";
import { tagKey } from "../../lib/tag-rule";
import { publicReadCache } from "../../middleware/read-cache";
import { exportResponse } from "../../routes/exports";
import { STORY_SORTS, type StorySort } from "../../schemas/fields";
import { SEARCH_TYPES, type SearchType, searchOf, searchWords } from "../../schemas/search";
import { BotPage } from "../pages/bot";
import { HomePage } from "../pages/home";
import { PathPage } from "../pages/path";
import { SearchPage } from "../pages/search";
import { StoryPage } from "../pages/story";
import { TagPage } from "../pages/tag";
import { hasPreferenceCookie, readerPreference } from "../support/reader-preference";
import { absolute, page, positiveInt } from "../support/render";
import { branchPage } from "./shared-pages";
import { pageViewer, viewerOf } from "../support/session";

/** Stories per page of the home page. */
export const STORIES_PER_PAGE = 20;
/** Pages past this one are not served (an offset is a scan). */
const MAX_PAGE = 1000;

/**
 * The read pages: the home page and a tag's (lists of stories), search, a story, a branch, its path and its export, a
 * bot. Each page reads through one batched domain function (src/domain/reading/reader.ts): one D1 round trip.
 */
export const readingRoutes = new Hono<AppEnv>();

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

readingRoutes.get("/", readCache, async (c) => {
  const q = listQuery(c);
  const viewer = viewerOf(c);
  // "Continue reading" heads the first page for a signed-in reader, read in the list's own batch.
  const opts = { sort: q.sort, limit: STORIES_PER_PAGE, offset: q.offset, preference: readerPreference(c) };
  const [data, places] = await readerHome(c.get("db"), opts, q.page === 1 ? viewer : null);
  return page(c, <HomePage data={data} places={places} sort={q.sort} page={q.page} canonical={q.canonical("/")} {...q.links("/")} viewer={pageViewer(c)} />);
});

readingRoutes.get("/tags/:tag", readCache, async (c) => {
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

readingRoutes.get("/search", readCache, async (c) => {
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
  const found = await readerSearch(c.get("db"), c.get("search"), query, readerPreference(c));
  return page(c, <SearchPage canonical={canonical} words={raw} found={found} {...props} />);
});

readingRoutes.get("/stories/:id", readCache, async (c) => {
  const id = pathId(c.req.param("id"), "Story");
  const viewer = viewerOf(c);
  const data = await readerStory(c.get("db"), id, viewer);
  const canEdit = !!viewer && ownsOrAdmin(viewer, data.story.owner_id);
  // The map with this branch's part unfolded; anything but a branch id draws it folded.
  const expand = c.req.query("expand");
  const unfolded = isUuid(expand) ? expand.toLowerCase() : null;
  return page(c, <StoryPage data={data} canonical={absolute(c, `/stories/${id}`)} viewer={pageViewer(c)} expand={unfolded} canEdit={canEdit} />);
});

readingRoutes.get("/branches/:id", readCache, async (c) => branchPage(c, pathId(c.req.param("id"), "Branch")));

readingRoutes.get("/branches/:id/read", readCache, async (c) => {
  const id = pathId(c.req.param("id"), "Branch");
  const pageNo = positiveInt(c.req.query("page"), Number.MAX_SAFE_INTEGER);
  const data = await readerPath(c.get("db"), id, pageNo, viewerOf(c));
  const canonical = absolute(c, pageNo > 1 ? `/branches/${id}/read?page=${pageNo}` : `/branches/${id}/read`);
  return page(c, <PathPage data={data} canonical={canonical} viewer={pageViewer(c)} />);
});

// The path as a file to take away, as the signed-in reader may read it: the API's export, for the cookie's
// viewer (the API reads no cookie). Never through the micro-cache: the file is streamed, and exports have a cache of their own.
for (const format of ["epub", "md"] as const) {
  readingRoutes.get(`/branches/:id/export.${format}`, (c) => exportResponse(c, pathId(c.req.param("id"), "Branch"), format, viewerOf(c)));
}

readingRoutes.get("/bots/:id", readCache, async (c) => {
  const id = pathId(c.req.param("id"), "Bot");
  const data = await readerBot(c.get("db"), id, viewerOf(c));
  return page(c, <BotPage data={data} canonical={absolute(c, `/bots/${id}`)} viewer={pageViewer(c)} />);
});
