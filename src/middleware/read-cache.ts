import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { sha1Hex } from "../lib/crypto";
import { succeeded } from "../lib/envelope";

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
  status: number;
  body: ArrayBuffer;
  contentType: string;
  etag: string | null;
}

const MAX_ENTRIES = 500;
const entries = new Map<string, Entry>();

function keyOf(c: Context<AppEnv>): string {
  const query = [...new URL(c.req.url).searchParams].sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify([c.req.method, c.req.routePath, c.req.param(), query]);
}

/** Serves and stores a public route's 200s; `unless` names requests of that route that must reach D1. */
export function publicReadCache(options: { unless?: (c: Context<AppEnv>) => boolean } = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const ttl = c.var.config.readCacheMs;
    if (ttl <= 0 || c.req.header("x-d1-bookmark") || options.unless?.(c)) return next();
    const key = keyOf(c);
    const hit = entries.get(key);
    if (hit && hit.expires > Date.now()) {
      // The stored ETag spares the etag middleware from hashing the body again.
      const headers: Record<string, string> = { "content-type": hit.contentType, "x-read-cache": "hit" };
      if (hit.etag) headers.etag = hit.etag;
      return new Response(hit.body, { status: hit.status, headers });
    }
    await next();
    if (c.res.status !== 200) return;
    if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
    const body = await c.res.clone().arrayBuffer();
    const contentType = c.res.headers.get("content-type") ?? "application/json";
    const etag = `"${await sha1Hex(body)}"`;
    c.res.headers.set("etag", etag); // the same digest the etag middleware would compute
    entries.set(key, { expires: Date.now() + ttl, status: 200, body, contentType, etag });
  };
}

/** Any successful write through this isolate empties the cache, so a writer never reads its own past here. */
export const emptyReadCacheAfterWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  if (!["GET", "HEAD", "OPTIONS"].includes(c.req.method) && succeeded(c.res.status)) entries.clear();
};
