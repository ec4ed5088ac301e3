import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";

/**
 * One structured JSON line per request with what the platform's own record of the invocation lacks (Workers
 * Logs already has the method, URL, status, time, duration and CPU; `wrangler dev` prints them too): the route
 * pattern, the request id, D1 round trips, the caller's kind and the error code. Never a body, a query string,
 * a credential or an address. Also puts `X-Request-Id` on the final response, whichever middleware made it.
 */
export const accessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const requestId = c.get("requestId");
  if (requestId) c.res.headers.set("X-Request-Id", requestId);
  if (!c.get("config")?.logRequests) return;
  console.log(
    JSON.stringify({
      request_id: requestId,
      route: c.req.routePath,
      d1_round_trips: c.get("meter")?.roundTrips ?? 0,
      actor: c.get("actor")?.type ?? "anonymous",
      error: c.get("errorCode") ?? null,
    }),
  );
};
