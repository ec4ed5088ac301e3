import { type Context, Hono } from "hono";
import type { AppEnv } from "../../context";
import { listBookmarks } from "../../domain/reading/bookmarks";
import { apiErrorIn } from "../../lib/errors";
import { pathId } from "../../lib/ids";
import { callerOf } from "../../middleware/caller";
import { bookmarkBody, progressBody } from "../../schemas/bookmarks";
import { bookmark, forgetPlace, keepPlace, removeBookmark } from "../../usecases/reading";
import { BookmarksPage, bookmarkHref, noteForm, removeForm } from "../pages/bookmarks";
import { fieldsOf, labelsFrom, parseWith, showErrorsIn } from "../support/form-errors";
import type { FormState } from "../components/forms";
import { BOOKMARKS_PATH, placePath } from "../components/reader-marks";
import { absolute, page, positiveInt } from "../support/render";
import { safeNext } from "../support/safe-next";
import { formPost, requireSession, viewerOf } from "../support/session";

/**
 * Bookmarks and reading places in the web reader, through the API's use cases: the Bookmarks page and
 * its forms (bookmark, note, remove), and the place on a path, kept by the "Keep my place" form and by the reader's
 * script as one reads (its beacon sends `from=script` and gets a 204, not a page). None of these changes what
 * anyone else reads, so none empties the public micro-cache.
 */
export const bookmarkRoutes = new Hono<AppEnv>();

/** Bookmarks per page of the Bookmarks page; pages past the last a cap fills are not served. */
const PER_PAGE = 20;

async function bookmarksPage(c: Context<AppEnv>, state: FormState | null = null) {
  const viewer = viewerOf(c)!;
  const cap = c.get("config").limits.bookmarksPerAccount;
  const n = positiveInt(c.req.query("page"), Math.max(1, Math.ceil(cap / PER_PAGE)));
  const data = await listBookmarks(c.get("db"), viewer, PER_PAGE, (n - 1) * PER_PAGE);
  const canonical = absolute(c, n > 1 ? `${BOOKMARKS_PATH}?page=${n}` : BOOKMARKS_PATH);
  return page(c, <BookmarksPage data={data} page={n} cap={cap} canonical={canonical} viewer={viewer} state={state} />);
}

/** Where a form goes back to: its `next` (a path on this site), else `fallback`. */
const back = (c: Context<AppEnv>, fallback: string) => (c.req.query("next") === undefined ? fallback : safeNext(c.req.query("next")));

bookmarkRoutes.get(
  BOOKMARKS_PATH,
  requireSession(() => BOOKMARKS_PATH),
  (c) => bookmarksPage(c),
);

// A bookmark from a segment's "Bookmark" button (no note: a note kept stays), or a note saved on the Bookmarks page.
bookmarkRoutes.post(
  BOOKMARKS_PATH,
  formPost,
  requireSession((c) => back(c, BOOKMARKS_PATH)),
  showErrorsIn((_, f) => (f.bookmark_id ? noteForm(f.bookmark_id) : "bookmark"), labelsFrom({ note: "Note", segment_id: "Segment" }), bookmarksPage),
  async (c) => {
    const fields = await fieldsOf(c);
    const { bookmark: kept } = await bookmark(callerOf(c), parseWith(bookmarkBody, { segment_id: fields.segment_id, note: fields.note }));
    return c.redirect(back(c, bookmarkHref(kept.id)), 303);
  },
);

bookmarkRoutes.post(
  `${BOOKMARKS_PATH}/:bookmark_id/delete`,
  formPost,
  requireSession(() => BOOKMARKS_PATH),
  showErrorsIn((c) => removeForm(c.req.param("bookmark_id") ?? ""), labelsFrom({}), bookmarksPage),
  async (c) => {
    await removeBookmark(callerOf(c), c.req.param("bookmark_id") ?? "");
    return c.redirect(BOOKMARKS_PATH, 303);
  },
);

const branchOf = (c: Context<AppEnv>) => pathId(c.req.param("branch_id") ?? "", "Branch");

// The place on a path: "Keep my place at #N", or the script's beacon as the reader goes on (a 204: nothing to show).
bookmarkRoutes.post(
  placePath(":branch_id"),
  formPost,
  requireSession((c) => back(c, `/branches/${c.req.param("branch_id")}/read`)),
  async (c) => {
    const fields = await fieldsOf(c);
    await keepPlace(callerOf(c), branchOf(c), parseWith(progressBody, { segment_id: fields.segment_id }));
    return fields.from === "script" ? c.body(null, 204) : c.redirect(back(c, `/branches/${branchOf(c)}/read`), 303);
  },
);

// "Forget" in Continue reading. A place already forgotten (another tab) is what was asked for.
bookmarkRoutes.post(
  `${placePath(":branch_id")}/delete`,
  formPost,
  requireSession(() => "/"),
  async (c) => {
    await forgetPlace(callerOf(c), branchOf(c)).catch((err) => (apiErrorIn(err)?.code === "NOT_FOUND" ? null : Promise.reject(err)));
    return c.redirect("/", 303);
  },
);
