import { type Context, Hono } from "hono";
import { etag } from "hono/etag";
import { secureHeaders } from "hono/secure-headers";
import type { AppEnv } from "../context";
import { isReadMethod } from "../lib/envelope";
import { ApiError, type ErrorStatus, apiErrorIn } from "../lib/errors";
import { anonymousReadLimit } from "../middleware/read-limit";
import { ErrorPage } from "./pages/error";
import { absolute, page } from "./support/render";
import { pageAgainSignedOut, pageViewer, session } from "./support/session";
import { STYLESHEET, STYLESHEET_PATH } from "./support/style";
import { adminRoutes } from "./routes/admin";
import { bookmarkRoutes } from "./routes/bookmarks";
import { botPageRoutes } from "./routes/bots";
import { followRoutes } from "./routes/follows";
import { oauthPageRoutes } from "./routes/oauth";
import { preferenceRoutes } from "./routes/preferences";
import { readingRoutes } from "./routes/reading";
import { reportRoutes } from "./routes/reports";
import { writeRoutes } from "./routes/writing";

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
 * The web reader: HTML pages and their forms beside the API, mounted at `/` after it. Here its parts are put
 * together under the pages' headers, session, ETags and read limit, with errors shown as pages; each part's routes
 * are in src/web/routes/.
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
// The read pages: the lists, stories, branches, paths, bots and search.
webRoutes.route("/", readingRoutes);

// Any other path: an HTML 404.
webRoutes.all("*", () => {
  throw new ApiError("NOT_FOUND", "Page not found");
});
