import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { bytesTag } from "../lib/content-tag";
import { succeeded } from "../lib/envelope";
import { verifiedActor } from "./auth";

/**
 * A micro-cache for public reads, per isolate: the same read within READ_CACHE_MS (wrangler.toml) is answered
 * from memory instead of D1. Public reads without a bookmark may already come from a lagging replica, so a
 * second of staleness adds no new kind of inconsistency. A request with an `x-d1-bookmark` (read your
 * writes) always reads D1, and any successful write through this isolate empties the cache.
 *
 * Caching is opt-in: a route declares `publicReadCache()` among its middleware, so it runs after routing and
 * is keyed on the route Hono matched, its decoded parameters and the query, never on the raw path (a
 * percent-encoded private path cannot alias a public entry) and never on a list of private paths.
 */
interface Entry {
  expires: number;
  /** UTF-8: a hit's Response copies bytes, where a string would be encoded again on every hit. */
  body: Uint8Array;
  contentType: string;
  etag: string;
  /** The route pattern that answered (for the access log of a hit served by the cache-first path). */
  route: string;
  /**
   * A page's or a feed's own headers (its security headers, its cache policy), as the full path's first hit of
   * the entry sent them (`keepDoorHeaders`): until they are known, the cache-first path leaves the page's hits to it.
   */
  headers?: Record<string, string>;
  /** When a request began to read this expired entry again (`Date.now()`); the others answer from it meanwhile. */
  renewing?: number;
}

/**
 * Whether an entry may answer at `now`: while it lives, and once expired, while one request renews it.
 *
 * Why: when an entry expires under load, every request that came before the new answer was stored would read and
 * render it again (the input gate is open while one awaits D1). One does; meanwhile the others (on the cache-first path
 * too) take the expired entry, at most one more `ttl` old. A renewal that answers anything but 200 drops the entry
 * (a story hidden meanwhile is not served from it again); one that never ends (a cancelled request) is taken over
 * after `ttl`.
 */
const servable = (entry: Entry, now: number, ttl: number) => entry.expires > now || (entry.renewing !== undefined && now - entry.renewing < ttl);

const MAX_ENTRIES = 500;
const entries = new Map<string, Entry>();
/**
 * The exact URL of an anonymous read → its entry's key, so the cache-first path finds a hit without routing
 * (src/middleware/cache-first.ts). Only a URL that was routed to that key is here: no other spelling can alias it.
 */
const anonymousUrls = new Map<string, string>();

/**
 * The route Hono matched, its decoded parameters, the raw query string and who reads: a verified caller may see
 * hidden content of their own, so their reads are theirs; anonymous readers share one entry.
 */
function keyOf(c: Context<AppEnv>, viewer: string): string {
  const url = c.req.url;
  const query = url.indexOf("?");
  return `${c.req.method} ${c.req.routePath} ${JSON.stringify(c.req.param())} ${query < 0 ? "" : url.slice(query + 1)} ${viewer}`;
}

/**
 * Serves and stores a public route's 200s; `unless` names requests of that route that must reach D1; `shared`: the
 * route answers every reader alike (a feed shows what anonymous readers see), so all share one entry. An entry
 * keeps the body's bytes with its ETag and content type, so a hit is one Map look-up and one Response: nothing
 * is serialized, copied out of a stream or hashed again.
 */
export function publicReadCache(options: { unless?: (c: Context<AppEnv>) => boolean; shared?: boolean } = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const ttl = c.get("config").readCacheMs;
    if (ttl <= 0 || c.req.header("x-d1-bookmark") || options.unless?.(c)) return next();
    // Known already on a GET (the read limit verified it); a JWT's check is remembered per isolate.
    const viewer = options.shared ? "" : ((await verifiedActor(c))?.id ?? "");
    const key = keyOf(c, viewer);
    const hit = entries.get(key);
    const now = Date.now();
    if (hit && servable(hit, now, ttl)) return hitResponse(hit);
    if (hit) hit.renewing = now;
    await next();
    if (c.res.status !== 200) {
      // The renewal found the read gone (hidden, deleted) or failed: the expired entry must not answer again.
      if (hit && entries.get(key) === hit) entries.delete(key);
      return;
    }
    // `ok()` kept the JSON's bytes it sent; a page (HTML) is read back from a copy of the response.
    const body = c.get("rendered") ?? new Uint8Array(await c.res.clone().arrayBuffer());
    const etag = c.res.headers.get("etag") ?? (await bytesTag(body));
    c.res.headers.set("etag", etag); // the tag the etag middleware then compares, not computes
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    const contentType = c.res.headers.get("content-type") ?? "application/json";
    entries.set(key, { expires: now + ttl, body, contentType, etag, route: c.req.routePath });
    if (viewer) return;
    if (anonymousUrls.size >= MAX_ENTRIES) anonymousUrls.clear(); // its keys only point into entries
    anonymousUrls.set(c.req.url, key);
  };
}

/** A hit's answer: the entry's body, content type and ETag, marked `x-read-cache: hit`, with any `headers` more. */
export const hitResponse = (entry: Entry, headers: Record<string, string> = {}) =>
  new Response(entry.body, { headers: { "content-type": entry.contentType, etag: entry.etag, "x-read-cache": "hit", ...headers } });

/** The entry an anonymous read of exactly this URL stored, if it may answer at `now` (`servable`). */
export function anonymousEntry(url: string, now: number, ttl: number): Entry | undefined {
  const key = anonymousUrls.get(url);
  const entry = key === undefined ? undefined : entries.get(key);
  return entry && servable(entry, now, ttl) ? entry : undefined;
}

/** What a hit's answer carries of its own (`hitResponse`) or per request (its id, its Server-Timing). */
const HIT_OWN_HEADERS = new Set(["content-type", "etag", "x-read-cache", "x-request-id", "server-timing"]);

/**
 * Keeps the headers of the full path's hit `res` of an anonymous page or feed `url` on its entry, so the cache-first path
 * can answer its next hits alike (src/middleware/cache-first.ts). Only a hit's (the caller's check): the answer that
 * stored the entry may carry what only a miss does (a D1 bookmark).
 */
export function keepDoorHeaders(url: string, res: Response, ttl: number) {
  // A cookie set is never replayed to other readers: such a page stays on the full path.
  if (res.headers.has("set-cookie")) return;
  const entry = anonymousEntry(url, Date.now(), ttl);
  if (!entry || entry.headers) return;
  entry.headers = Object.fromEntries([...res.headers].filter(([name]) => !HIT_OWN_HEADERS.has(name)));
}

/** Empties this isolate's cache (after a write that did not come through `emptyReadCacheAfterWrites`: an MCP tool). */
export const emptyReadCache = () => {
  entries.clear();
  anonymousUrls.clear();
};

/** Any successful write through this isolate empties the cache, so a writer never reads its own past here (mounted for writes). */
export const emptyReadCacheAfterWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (succeeded(c.res.status)) emptyReadCache();
};
