import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";

const EXPOSED = [
  "ETag",
  "Retry-After",
  "Server-Timing",
  "x-d1-bookmark",
  "Idempotent-Replayed",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "X-Request-Id",
];

/** Preflights: Hono's cors(). */
const preflight = cors({
  origin: "*",
  allowHeaders: ["Authorization", "X-API-Key", "Content-Type", "Idempotency-Key", "If-None-Match", "x-d1-bookmark"],
  allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"],
  exposeHeaders: EXPOSED,
  maxAge: 86400,
});
/** The two headers every API answer but a preflight carries (the cache-first path's hits too: src/middleware/cache-first.ts). */
export const CORS_HEADERS = { "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED.join(",") } as const;

/**
 * The API's CORS: any origin (no cookies ever reach the API), the headers above readable by scripts.
 *
 * Why not cors() for every request: it writes its headers onto `c.res` before the handler runs, which makes Hono
 * build an empty response first and then copy its headers into the handler's: two Response objects and a header
 * copy on every request (bench/PROFILE.md). Preflights still go through cors(); every other request gets the
 * same two headers it would set, after the handler, on the response the handler made.
 */
export const apiCors: MiddlewareHandler = async (c, next) => {
  if (c.req.method === "OPTIONS") return preflight(c, next);
  await next();
  for (const [name, value] of Object.entries(CORS_HEADERS)) c.res.headers.set(name, value);
};
