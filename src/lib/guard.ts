import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { Admission, Counter, RateState } from "../durable/account";
import type { AppEnv, Env } from "../env";
import { actorOf } from "./auth";
import { sha256Hex } from "./crypto";
import { ApiError } from "./errors";
import { viaObject } from "./timing";

export type GuardedAction = "story" | "branch" | "join" | "segment" | "vote" | "comment" | "rewrite" | "pin";

/** An Idempotency-Key: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request header of every creating POST behind `guard()` (checked by the guard before this schema is reached). */
export const idempotencyHeader = z.object({
  "idempotency-key": z.string().regex(IDEMPOTENCY_KEY).optional().openapi({
    description: "1–255 visible ASCII characters. A repeat with the same body within 24 h replays the first response",
  }),
});

/** The errors `guard()` adds to a creating POST. */
export const GUARD_ERRORS = ["RATE_LIMIT_EXCEEDED", "IDEMPOTENCY_KEY_REUSED"] as const;

const HOUR = 3600_000;
const DAY = 24 * HOUR;

const hourly = (key: string, limit: number): Counter => ({ key, limit, windowMs: HOUR, label: `${limit} per hour`, code: "RATE_LIMIT_EXCEEDED" });
const num = (env: Env, name: keyof Env, fallback: number) => Number(env[name] ?? fallback);

/** The counters an action draws on, from wrangler.toml vars (the spec's numbers as defaults). */
function countersFor(action: GuardedAction, c: Context<AppEnv>): Counter[] {
  const env = c.env;
  switch (action) {
    case "story":
      return [hourly("story", num(env, "LIMIT_STORIES_PER_HOUR", 10))];
    case "branch":
      return [hourly("branch", num(env, "LIMIT_BRANCHES_PER_HOUR", 1))];
    case "join":
      return [hourly("join", num(env, "LIMIT_JOINS_PER_HOUR", 5))];
    case "vote":
      return [hourly("vote", num(env, "LIMIT_VOTES_PER_HOUR", 50))];
    case "comment":
      return [hourly("comment", num(env, "LIMIT_COMMENTS_PER_HOUR", 10))];
    case "segment": {
      const perDay = num(env, "LIMIT_SEGMENTS_PER_DAY", 100);
      return [
        hourly("segment", num(env, "LIMIT_SEGMENTS_PER_HOUR", 20)),
        hourly(`segment:${c.req.param("branch_id")?.toLowerCase()}`, num(env, "LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR", 2)),
        { key: "segment:day", limit: perDay, windowMs: DAY, label: `${perDay} per day`, code: "DAILY_QUOTA_EXCEEDED" },
      ];
    }
    default:
      return [];
  }
}

function rateHeaders(rate: RateState): Record<string, string> {
  return { "X-RateLimit-Limit": String(rate.limit), "X-RateLimit-Remaining": String(rate.remaining), "X-RateLimit-Reset": String(rate.reset) };
}

async function idempotencyOf(c: Context<AppEnv>) {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) return null;
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new ApiError("VALIDATION_ERROR", "Idempotency-Key must be 1 to 255 visible ASCII characters", {
      fields: [{ field: "Idempotency-Key", issue: "1 to 255 visible ASCII characters" }],
    });
  }
  const url = new URL(c.req.url);
  return { key, hash: await sha256Hex(`${c.req.method} ${url.pathname}\n${await c.req.text()}`) };
}

/**
 * For a creating POST: replays an earlier response for a repeated Idempotency-Key, enforces the caller's
 * rate limits (admins exempt), and counts the request only when it succeeds. Runs after `auth()`.
 */
export function guard(action: GuardedAction, counts: (status: number) => boolean = (s) => s < 300): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const actor = actorOf(c);
    const idem = await idempotencyOf(c);
    const counters = actor.type === "admin" ? [] : countersFor(action, c);
    if (!idem && !counters.length) return next();
    const gate = c.env.ACCOUNT_GATE.get(c.env.ACCOUNT_GATE.idFromName(actor.id));
    const admission = await viaObject(c, "AccountGate", async (): Promise<Admission> => await gate.admit(idem, counters));
    if (admission.kind === "replay") {
      const { status, body, contentType } = admission.response;
      return new Response(body, { status, headers: { "content-type": contentType, "Idempotent-Replayed": "true" } });
    }
    if (admission.kind === "mismatch") {
      throw new ApiError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request");
    }
    if (admission.kind === "limited") {
      const { code, label, retryAfter, rate } = admission;
      const resetTime = new Date(rate.reset * 1000).toISOString();
      throw new ApiError(code, `Limit reached: ${label}. Retry in ${retryAfter} s`, { limit: label, retry_after: retryAfter, reset_time: resetTime }, {
        "Retry-After": String(retryAfter),
        ...rateHeaders(rate),
      });
    }
    await next();
    const { status, headers } = c.res;
    const counted = status < 300 && counts(status);
    const response = status < 300 && idem ? { status, body: await c.res.clone().text(), contentType: headers.get("content-type") ?? "application/json" } : null;
    // A counted request without a key needs nothing more from the gate: its hits stay as admitted.
    if (idem || !counted) await viaObject(c, "AccountGate", () => gate.settle(idem, admission.reservation, counted, response));
    if (counted && admission.rate) for (const [k, v] of Object.entries(rateHeaders(admission.rate))) headers.set(k, v);
  };
}
