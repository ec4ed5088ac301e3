import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "./errors";

const WINDOW_SECONDS = 60;

/** Anonymous reads: 600 per minute per client address, through Cloudflare's rate-limiting binding. */
export const anonymousReadLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limiter = c.env.READ_LIMITER;
  const anonymous = !c.req.header("authorization") && !c.req.header("x-api-key");
  if (!limiter || !anonymous || (c.req.method !== "GET" && c.req.method !== "HEAD")) return next();
  const address = c.req.header("cf-connecting-ip") ?? "unknown";
  const { success } = await limiter.limit({ key: `read:${address}` });
  if (!success) {
    throw new ApiError(
      "RATE_LIMIT_EXCEEDED",
      `Too many anonymous reads from this address; retry in ${WINDOW_SECONDS} s or authenticate`,
      { limit: "600 per minute", retry_after: WINDOW_SECONDS, reset_time: new Date(Date.now() + WINDOW_SECONDS * 1000).toISOString() },
      { "Retry-After": String(WINDOW_SECONDS) },
    );
  }
  return next();
};
