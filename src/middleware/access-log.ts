import type { Context, MiddlewareHandler } from "hono";
import { configOf } from "../config";
import type { AppEnv } from "../context";
import { isReadMethod } from "../lib/envelope";

/**
 * Cloudflare's Ray ID as the edge sets it: 16 lowercase hex digits, a dash, the data centre's IATA code. Anything
 * else in a `cf-ray` header (a client talking to `wrangler dev`, or to the Worker through something that is not
 * Cloudflare's edge) is not logged.
 */
const CF_RAY = /^[0-9a-f]{16}-[A-Z]{3}$/;

/** The line's fields (see `accessLog`); `cf-ray` only when well formed. */
export interface LineFields {
  request_id: string | undefined;
  route: string;
  d1_round_trips: number;
  actor: string;
  error: string | null;
  /** Only where the platform's record does not say it (the live stream's upgrade). */
  status?: number;
  /** The OAuth client (its client id) a `/mcp` call came through. */
  oauth_client?: string;
  /** The Durable Objects the request reached, when any (a branch's room, the search shards, an account's gate): where a read that left D1 went. */
  objects?: string[];
}

/** The access log's one JSON line. */
export function logLine(fields: LineFields, ray: string | undefined | null): string {
  const entry: Record<string, unknown> = { ...fields };
  if (ray != null && CF_RAY.test(ray)) entry.cf_ray = ray;
  return JSON.stringify(entry);
}

function line(c: Context<AppEnv>, status?: number): string {
  const fields: LineFields = {
    request_id: c.get("requestId"),
    route: c.get("logRoute") ?? c.req.routePath,
    d1_round_trips: c.get("meter")?.roundTrips ?? 0,
    actor: c.get("actor")?.type ?? "anonymous",
    error: c.get("errorCode") ?? null,
  };
  if (status !== undefined) fields.status = status;
  const objects = c.get("meter")?.objectNames() ?? [];
  if (objects.length) fields.objects = objects;
  const client = c.get("actor")?.oauthClient;
  if (client) fields.oauth_client = client;
  return logLine(fields, c.req.header("cf-ray"));
}

/**
 * One structured JSON line per request with what the platform's own record of the invocation lacks (Workers
 * Logs already has the method, URL, status, time, duration and CPU; `wrangler dev` prints them too): the route
 * pattern, the request id, D1 round trips, the Durable Objects reached, the caller's kind, the error code, and the `cf-ray` (`cf_ray`, only
 * when well formed; it is never the request id). Never a body, a query string, a credential or an address. Also
 * puts `X-Request-Id` on the final response, whichever middleware made it.
 */
export const accessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const requestId = c.get("requestId");
  if (requestId) c.res.headers.set("X-Request-Id", requestId);
  if (!c.get("config")?.logRequests) return;
  // A read's line from a timer, a write's at once: each the cheaper way, as measured (see writeAfterResponse).
  if (isReadMethod(c.req.method)) writeAfterResponse(executionContextOf(c), line(c));
  else console.info(line(c));
};

/**
 * Writes the line from a timer of its own, once the response is on its way (`waitUntil` keeps the request until it
 * is written). Why: a console line written from deep in the middleware stack cost a cached read ~7 % more CPU under
 * `wrangler dev` (`npm run bench:ab -- --case cached --logged`: ×0.928 from a timer) than the same line written from
 * a fresh task. A write's line measured the other way: at once was cheaper than from a timer (segment writes
 * `--case write --logged`: ×0.955 CPU at once, in two runs of 8 rounds), so writes do not come here. Without an
 * execution context (Hono's `app.request` in tests) it is written at once.
 */
export function writeAfterResponse(ctx: ExecutionContext | undefined, text: string): void {
  if (!ctx) {
    console.info(text);
    return;
  }
  ctx.waitUntil(
    new Promise<void>((resolve) =>
      setTimeout(() => {
        console.info(text);
        resolve();
      }, 0),
    ),
  );
}

/** The request's execution context; none under Hono's `app.request` without one (tests). */
export function executionContextOf(c: Context<AppEnv>): ExecutionContext | undefined {
  try {
    return c.executionCtx as ExecutionContext;
  } catch {
    return undefined;
  }
}

/**
 * The live stream's line: the same fields and the status (101, or the refusal), written after the upgrade is
 * answered. It never touches the 101 (the route puts `X-Request-Id` on it itself); the socket's close is logged
 * by the room (src/durable/live.ts).
 */
export const liveAccessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("config", configOf(c.env));
  await next();
  if (c.get("config").logRequests) console.info(line(c, c.res.status));
};
