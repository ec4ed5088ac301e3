import type { Context, MiddlewareHandler } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import type { AppEnv } from "../../context";
import { statementOf } from "../../db/client";
import type { Rider } from "../../db/metered";
import type { Actor } from "../../domain/shared/actor";
import { unreadCountSql } from "../../domain/following/inbox";
import { ApiError } from "../../lib/errors";
import { limitBody } from "../../middleware/body-limit";
import { isLoopback } from "../../middleware/origin";
import { actorOfClaims } from "../../middleware/auth";
import { watchStanding } from "../../middleware/standing";
import { isReadMethod } from "../../lib/envelope";
import { isFormBody } from "../../lib/form-body";
import { verifyJwt } from "../../lib/jwt";
import type { Viewer as PageViewer } from "../components/layout";
import { STYLESHEET_PATH } from "./style";

/**
 * A human's session on the web reader: the access token a login returns, in an HttpOnly cookie (scripts never
 * see it), SameSite=Lax (other sites' forms do not carry it), Secure everywhere but on the local machine, where
 * it is also the only place without the `__Host-` prefix (which needs Secure: no subdomain can set or shadow it).
 * The API never reads it: it takes credentials from headers only, so the cookie is good for these pages alone.
 */
const SESSION_COOKIE = "storyloom_session";

const isLocal = (c: Context<AppEnv>) => isLoopback(new URL(c.req.url).hostname);
/** hono/cookie's prefix option: `__Host-` off the local machine. */
const prefixOf = (c: Context<AppEnv>) => (isLocal(c) ? undefined : ("host" as const));

/** How the pages' cookies are set (the session's, a reader's preference): HttpOnly, SameSite=Lax, site-wide, Secure and `__Host-` but locally. */
export const cookieOptions = (c: Context<AppEnv>) => ({ httpOnly: true, secure: !isLocal(c), sameSite: "Lax" as const, path: "/", prefix: prefixOf(c) });

/** Starts a session that lasts as long as its token. */
export function startSession(c: Context<AppEnv>, accessToken: string) {
  setCookie(c, SESSION_COOKIE, accessToken, { ...cookieOptions(c), maxAge: c.get("config").jwt.ttlSeconds });
}

export const endSession = (c: Context<AppEnv>) => deleteCookie(c, SESSION_COOKIE, cookieOptions(c));

/** The signed-in human, or null: from the session cookie only (never from a header credential). */
export const viewerOf = (c: Context<AppEnv>): Actor | null => c.get("viewer") ?? null;

/** The signed-in human as a page's header shows them: with their unread inbox count once the page's first trip read it. */
export function pageViewer(c: Context<AppEnv>): PageViewer | null {
  const viewer = viewerOf(c);
  return viewer && { id: viewer.id, name: viewer.name, unread: c.get("unread") ?? null };
}

/** The unread count, read behind the standing in a page's first D1 trip: no trip of its own. */
const unreadRider = (c: Context<AppEnv>, accountId: string): Rider => ({
  statement: statementOf(c.get("db"), unreadCountSql(accountId)),
  read: (result) => c.set("unread", (result.results[0] as { unread: number } | undefined)?.unread ?? 0),
});

/**
 * Reads the session: a token that verifies (a human's or an admin's, its account's standing checked with the
 * page's first D1 trip) is the page's viewer, and the caller on
 * `c.var.actor` (as `auth()` does for the API, so the forms run the same limits and domain functions, and the
 * read limit counts the reader as authenticated); one that does not (expired, an old secret) is dropped.
 */
export const session: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = getCookie(c, SESSION_COOKIE, prefixOf(c));
  if (token) {
    try {
      const claims = await verifyJwt(token, c.get("config").jwt.secret);
      if (claims.typ !== "bot") {
        const viewer = actorOfClaims(claims);
        c.set("viewer", viewer);
        c.set("actor", viewer);
        // Suspended, gone or logged out: refused with the page's first D1 trip, which also reads the header's unread count.
        watchStanding(c, viewer, isReadMethod(c.req.method) ? unreadRider(c, viewer.id) : undefined);
      }
    } catch {
      endSession(c);
    }
  }
  await next();
  // A session its account's standing refused (logged out, the account gone or suspended) is ended here too.
  if (c.get("standing")?.refused) endSession(c);
  // A page shown to a signed-in human is theirs (its 304s too): no shared cache may keep it; it varies with the cookie.
  // A page carrying a secret shown once (a bot's new key) is `no-store` already, and stays so.
  const noStore = c.res.headers.get("Cache-Control") === "no-store";
  if (viewerOf(c) && c.req.path !== STYLESHEET_PATH && !noStore) c.res.headers.set("Cache-Control", "private, no-cache");
  c.res.headers.append("Vary", "Cookie");
};

/**
 * A page its session's standing refused (logged out elsewhere, suspended, the account gone): the browser is sent
 * to the same page again, without the cookie (`session` clears it), so a public page is shown signed out rather
 * than as an error, and one that needs a sign-in sends it to log in as usual. Null for a form POST
 * (its error page says why), or any other error.
 */
export function pageAgainSignedOut(c: Context<AppEnv>): Response | null {
  const standing = c.get("standing");
  if (!standing?.refused || standing.actor !== viewerOf(c) || !isReadMethod(c.req.method)) return null;
  c.set("viewer", undefined);
  const url = new URL(c.req.url);
  return c.redirect(`${url.pathname}${url.search}`, 303);
}

/** A form that needs a session: without one, the visitor is sent to log in and brought back to `back`. */
export function requireSession(back: (c: Context<AppEnv>) => string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (viewerOf(c)) return next();
    return c.redirect(`/login?next=${encodeURIComponent(back(c))}`, 303);
  };
}

/**
 * Every form POST: it must come from one of these pages (Hono's `csrf()`: the Origin is this site's, or the
 * browser says Sec-Fetch-Site: same-origin) and be a form (a JSON body is the API's, not these pages').
 */
const sameOrigin = csrf();
export const formPost: MiddlewareHandler<AppEnv> = async (c, next) => {
  try {
    await sameOrigin(c, async () => {});
  } catch {
    throw new ApiError("FORBIDDEN", "This form was sent from another site: forms are accepted only from Storyloom's own pages.");
  }
  if (!isFormBody(c.req.header("content-type"))) {
    throw new ApiError("VALIDATION_ERROR", "Send this form from its page (application/x-www-form-urlencoded or multipart/form-data).");
  }
  return limitBody(c, next); // 1 MiB, as the API
};
