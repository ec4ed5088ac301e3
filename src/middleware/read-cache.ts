import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { sha1Hex } from "../lib/crypto";

/**
 * A micro-cache for public reads, per isolate: the same URL within READ_CACHE_MS (wrangler.toml) is answered
 * from memory instead of D1. Public reads without a bookmark may already come from a lagging replica, so a
 * second of staleness adds no new kind of inconsistency. A request with an `x-d1-bookmark` (read your
 * writes) always reads D1, and any successful write through this isolate empties the cache. Public
 * endpoints answer the same whoever asks, so a credential does not change the key.
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
const PRIVATE = /^\/api\/v1\/(auth|logs|bots\/[^/]+\/webhook|docs)|force_refresh=(true|1)/;

export const readCache: MiddlewareHandler<AppEnv> = async (c, next) => {
  const ttl = c.var.config.readCacheMs;
  const method = c.req.method;
  if (method !== "GET" && method !== "HEAD") {
    await next();
    if (c.res.status < 300) entries.clear();
    return;
  }
  const url = new URL(c.req.url);
  const cacheable = ttl > 0 && !PRIVATE.test(url.pathname + url.search) && !c.req.header("x-d1-bookmark");
  if (!cacheable) return next();
  const key = url.pathname + url.search;
  const hit = entries.get(key);
  if (hit && hit.expires > Date.now()) {
    // The stored ETag spares the etag middleware from hashing the body again.
    const headers: Record<string, string> = { "content-type": hit.contentType, "x-read-cache": "hit" };
    if (hit.etag) headers.etag = hit.etag;
    c.res = new Response(hit.body, { status: hit.status, headers });
    return;
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
