import type { Context } from "hono";
import type { AppEnv } from "../../context";
import type { ErrorStatus } from "../../lib/errors";

/**
 * The absolute address of `path` (which starts with `/`) on the site's configured origin (`PUBLIC_ORIGIN`), never
 * on the request's Host: a page is the same whichever host it was asked for under, so the micro-cache, which
 * does not key on the host, can hand it to any reader.
 */
export const absolute = (c: Context<AppEnv>, path: string) => `${c.get("config").publicOrigin}${path}`;

/** A page as HTML (its Cache-Control is set by the pages' middleware). */
export const page = (c: Context<AppEnv>, html: Parameters<Context<AppEnv>["html"]>[0], status: ErrorStatus | 200 = 200) => c.html(html, status);

/** A page number from a query (`?page=`): a positive integer, at most `max`; anything else is the first page. */
export function positiveInt(value: string | undefined, max: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, max) : 1;
}
