import type { Context, MiddlewareHandler } from "hono";
import { configOf } from "../config";
import type { AppEnv } from "../context";

/**
 * Cloudflare's Ray ID as the edge sets it: 16 lowercase hex digits, a dash, the data centre's IATA code. Anything
 * else in a `cf-ray` header (a client talking to `wrangler dev`, or to the Worker through something that is not
 * Cloudflare's edge) is not logged.
 */
const CF_RAY = /^[0-9a-f]{16}-[A-Z]{3}$/;

/** The line's fields; `status` only where the platform's record does not say it (the live stream's upgrade). */
function line(c: Context<AppEnv>, status?: number): string {
  const entry: Record<string, unknown> = {
    request_id: c.get("requestId"),
    route: c.get("logRoute") ?? c.req.routePath,
    d1_round_trips: c.get("meter")?.roundTrips ?? 0,
    actor: c.get("actor")?.type ?? "anonymous",
    error: c.get("errorCode") ?? null,
  };
  if (status !== undefined) entry.status = status;
  const ray = c.req.header("cf-ray");
  if (ray !== undefined && CF_RAY.test(ray)) entry.cf_ray = ray;
  return JSON.stringify(entry);
}

/**
 * One structured JSON line per request with what the platform's own record of the invocation lacks (Workers
 * Logs already has the method, URL, status, time, duration and CPU; `wrangler dev` prints them too): the route
 * pattern, the request id, D1 round trips, the caller's kind, the error code, and the `cf-ray` (`cf_ray`, only
 * when well formed; it is never the request id). Never a body, a query string, a credential or an address. Also
 * puts `X-Request-Id` on the final response, whichever middleware made it.
 */
export const accessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const requestId = c.get("requestId");
  if (requestId) c.res.headers.set("X-Request-Id", requestId);
  if (!c.get("config")?.logRequests) return;
  // A read's line from a timer, a write's at once: each the cheaper way, as measured (see writeAfterResponse).
  if (c.req.method === "GET" || c.req.method === "HEAD") writeAfterResponse(c, line(c));
  else console.log(line(c));
};

/**
 * Writes the line from a timer of its own, once the response is on its way (`waitUntil` keeps the request until it
 * is written). Why: a console line written from deep in the middleware stack cost a cached read ~7 % more CPU under
 * `wrangler dev` (`npm run bench:ab -- --case cached --logged`: ×0.928 from a timer) than the same line written from
 * a fresh task. A write's line measured the other way: at once was cheaper than from a timer (segment writes
 * `--case write --logged`: ×0.955 CPU at once, in two runs of 8 rounds), so writes do not come here. Without an
 * execution context (Hono's `app.request` in tests) it is written at once.
 */
function writeAfterResponse(c: Context<AppEnv>, text: string): void {
  let ctx: Context["executionCtx"];
  try {
    ctx = c.executionCtx;
  } catch {
    console.log(text);
    return;
  }
  ctx.waitUntil(
    new Promise<void>((resolve) =>
      setTimeout(() => {
        console.log(text);
        resolve();
      }, 0),
    ),
  );
}

/**
 * The live stream's line: the same fields and the status (101, or the refusal), written after the upgrade is
 * answered. It never touches the 101 (the route puts `X-Request-Id` on it itself); the socket's close is logged
 * by the room (src/durable/live.ts).
 */
export const liveAccessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("config", configOf(c.env));
  await next();
  if (c.get("config").logRequests) console.log(line(c, c.res.status));
};
