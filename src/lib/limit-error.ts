import { ApiError } from "./errors";

/** Where a rate-limit counter stands, as the X-RateLimit-* headers state it. */
export interface RateState {
  limit: number;
  remaining: number;
  /** Unix seconds when the oldest hit in the window expires. */
  reset: number;
}

/** A limit a request ran into, as the 429 states it. */
export interface Refusal {
  code: "RATE_LIMIT_EXCEEDED" | "DAILY_QUOTA_EXCEEDED";
  /** How the limit reads, e.g. "10 per hour". */
  label: string;
  retryAfter: number;
  rate: RateState;
}

export function rateHeaders(rate: RateState): Record<string, string> {
  return { "X-RateLimit-Limit": String(rate.limit), "X-RateLimit-Remaining": String(rate.remaining), "X-RateLimit-Reset": String(rate.reset) };
}

/** The one 429: `details {limit, retry_after, reset_time}` (plus `extra`), `Retry-After` and the counter's headers. */
export function limitError(refusal: Refusal, extra: Record<string, unknown> = {}): ApiError {
  const { code, label, retryAfter, rate } = refusal;
  const resetTime = new Date(rate.reset * 1000).toISOString();
  return new ApiError(
    code,
    `Limit reached: ${label}. Retry in ${retryAfter} s`,
    { limit: label, retry_after: retryAfter, reset_time: resetTime, ...extra },
    {
      "Retry-After": String(retryAfter),
      ...rateHeaders(rate),
    },
  );
}
