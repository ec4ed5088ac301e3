import { configOf } from "../config";
import type { Env } from "../env";
import { RequestMeter } from "../lib/meter";
import { logLine, writeAfterResponse } from "./access-log";
import { CORS_HEADERS } from "./cors";
import { anonymousEntry, hitResponse } from "./read-cache";
import { leasedRead } from "./read-limit";

/** What a hit's Server-Timing says: no D1 round trip. */
const NO_TRIPS = new RequestMeter().serverTiming();

/**
 * Headers that send a read down the full path: a credential (the reader may see hidden content of their own), a
 * bookmark (it must reach D1), the caller's own request id (Hono's rule decides whether it is kept). Without any of
 * them, a hit's answer depends on the URL and `If-None-Match` alone.
 */
const FULL_PATH_HEADERS = ["authorization", "x-api-key", "x-d1-bookmark", "x-request-id"];

/** Which app a request is for: the API's hits carry its CORS headers; a page's or feed's, the headers it keeps. */
export type Door = "api" | "web";

/**
 * Whether the cache-first path may answer this request from an anonymous entry: a plain GET, and for a page or a feed,
 * no cookie (a session or a reader's preferences make the page theirs).
 */
export function plainAnonymousGet(request: Request, door: Door): boolean {
  if (request.method !== "GET") return false;
  const { headers } = request;
  for (const name of FULL_PATH_HEADERS) if (headers.has(name)) return false;
  return door === "api" || !headers.has("cookie");
}

/**
 * The cache-first path's answer to a plain anonymous GET that the micro-cache holds, before any routing or middleware:
 * the same body (or 304), headers and access-log line as the full path's hit (test/edge.test.ts compares the two), or null
 * for the full path. The anonymous read limit still counts it: a read taken from the address's lease, or, with none
 * left, a promise of the answer once a lease is bought (null when the binding refuses: the full path answers the 429).
 *
 * Why: a micro-cache hit through Hono's router and middleware chain cost ~7 % more CPU than the same answer made
 * here (`npm run bench:ab -- --case cached`: ×0.927 CPU, ×1.10 requests per second), most of what stood between a
 * cached read and the trivial Worker; and a page's full path costs several times its hit, so the read in ten that buys
 * its address a lease is answered here too.
 */
export function cacheFirst(request: Request, env: Env, ctx: ExecutionContext | undefined, door: Door = "api"): Response | Promise<Response | null> | null {
  if (!plainAnonymousGet(request, door)) return null;
  const { headers } = request;
  const config = configOf(env);
  if (config.readCacheMs <= 0) return null;
  const entry = anonymousEntry(request.url, Date.now(), config.readCacheMs);
  const own = door === "api" ? CORS_HEADERS : entry?.headers;
  if (!entry || !own) return null;
  // The ETag a client got back, as it got it, is a 304; any other If-None-Match (a list, `*`, a weak tag) is left to
  // the ETag middleware's own rule, which answers this one the same way.
  const ifNoneMatch = headers.get("if-none-match");
  if (ifNoneMatch !== null && ifNoneMatch !== entry.etag) return null;
  const answer = () => {
    const requestId = crypto.randomUUID();
    if (config.logRequests) {
      const fields = { request_id: requestId, route: entry.route, d1_round_trips: 0, actor: "anonymous", error: null };
      writeAfterResponse(ctx, logLine(fields, headers.get("cf-ray")));
    }
    const always = { "Server-Timing": NO_TRIPS, ...own, "X-Request-Id": requestId };
    if (ifNoneMatch !== null) return new Response(null, { status: 304, statusText: "Not Modified", headers: { ETag: entry.etag, ...always } });
    return hitResponse(entry, always);
  };
  // The entry was live when the request came: answered from it even if it expires while a lease is bought.
  const admitted = leasedRead(env.READ_LIMITER, headers.get("cf-connecting-ip"));
  // Refused: the full path asks the binding again and answers its 429 (a refused address costs two calls per read).
  return admitted === true ? answer() : admitted.then((ok) => (ok ? answer() : null));
}
