import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";

/**
 * One structured JSON line per request (Workers Logs indexes its fields): method, route pattern, status,
 * milliseconds, D1 round trips, the caller's kind, the request id and the error code. Never a body, a query
 * string, a credential or an address. Also puts `X-Request-Id` on the final response, whichever middleware made it.
 */
export const accessLog: MiddlewareHandler<AppEnv> = async (c, next) => {
  const started = performance.now();
  await next();
  const requestId = c.var.requestId;
  if (requestId) c.res.headers.set("X-Request-Id", requestId);
  if (!c.var.config?.logRequests) return;
  console.log(
    JSON.stringify({
      at: new Date().toISOString(),
      request_id: requestId,
      method: c.req.method,
      route: c.req.routePath,
      status: c.res.status,
      ms: Math.round(performance.now() - started),
      d1_round_trips: c.var.meter?.roundTrips ?? 0,
      actor: c.var.actor?.type ?? "anonymous",
      error: c.var.errorCode ?? null,
    }),
  );
};
