import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { ApiError } from "../lib/errors";
import { ReadLeases, WINDOW_SECONDS } from "../lib/read-leases";

const leases = new ReadLeases();

/** Anonymous reads: 600 per minute per client address, through Cloudflare's rate-limiting binding. */
export const anonymousReadLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limiter = c.env.READ_LIMITER;
  const anonymous = !c.req.header("authorization") && !c.req.header("x-api-key");
  if (!limiter || !anonymous || (c.req.method !== "GET" && c.req.method !== "HEAD")) return next();
  const key = `read:${c.req.header("cf-connecting-ip") ?? "unknown"}`;
  if (leases.take(key, Date.now())) return next();
  const { success } = await limiter.limit({ key });
  if (!success) {
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `Too many anonymous reads from this address; retry in ${WINDOW_SECONDS} s or authenticate`,
      { limit: "600 per minute", retry_after: WINDOW_SECONDS, reset_time: new Date(Date.now() + WINDOW_SECONDS * 1000).toISOString() },
      { "Retry-After": String(WINDOW_SECONDS) },
    );
  }
  leases.grant(key, Date.now());
  return next();
};
