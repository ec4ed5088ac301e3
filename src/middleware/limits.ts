import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import type { Config } from "../config";
import type { AppEnv } from "../context";
import type { AccountGate, Admission, Counter } from "../durable/account";
import { KeyAlreadyCommitted, committedAnswer } from "../domain/idempotency";
import { sha256Hex } from "../lib/crypto";
import { succeeded } from "../lib/envelope";
import { ApiError } from "../lib/errors";
import { type RateState, limitError, rateHeaders } from "../lib/limit-error";
import { actorOf } from "./auth";
import { inBackground } from "./background";
import { renderError } from "./render-error";

export type LimitedAction = "story" | "branch" | "join" | "segment" | "vote" | "comment" | "rewrite" | "pin";

/** An Idempotency-Key: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** The request header of every creating POST behind `limitsAndIdempotency()` (checked there before this schema is reached). */
export const idempotencyHeader = z.object({
  "idempotency-key": z.string().regex(IDEMPOTENCY_KEY).optional().openapi({
    description: "1–255 visible ASCII characters. A repeat with the same body within 24 h replays the first response",
  }),
});

/** The errors `limitsAndIdempotency()` adds to a creating POST. */
export const LIMIT_ERRORS = ["RATE_LIMIT_EXCEEDED", "IDEMPOTENCY_KEY_REUSED"] as const;

const HOUR = 3600_000;
const DAY = 24 * HOUR;

const hourly = (key: string, limit: number): Counter => ({ key, limit, windowMs: HOUR, label: `${limit} per hour`, code: "RATE_LIMIT_EXCEEDED" });

/** The counters an action draws on (numbers from wrangler.toml through the config). */
function countersFor(action: LimitedAction, limits: Config["limits"], branchId: string | undefined): Counter[] {
  switch (action) {
    case "story":
      return [hourly("story", limits.storiesPerHour)];
    case "branch":
      return [hourly("branch", limits.branchesPerHour)];
    case "join":
      return [hourly("join", limits.joinsPerHour)];
    case "vote":
      return [hourly("vote", limits.votesPerHour)];
    case "comment":
      return [hourly("comment", limits.commentsPerHour)];
    case "rewrite":
      return [hourly("rewrite", limits.rewritesPerHour)];
    case "pin":
      return [hourly("pin", limits.pinsPerHour)];
    case "segment":
      return [
        hourly("segment", limits.segmentsPerHour),
        // Deferred: it does not apply to a bot writing at its own turn, which only the branch's room knows.
        { ...hourly(`segment:${branchId?.toLowerCase()}`, limits.segmentsPerBranchPerHour), deferred: true },
        { key: "segment:day", limit: limits.segmentsPerDay, windowMs: DAY, label: `${limits.segmentsPerDay} per day`, code: "DAILY_QUOTA_EXCEEDED" },
      ];
    default:
      return [];
  }
}

/** Which successful responses count against the limit: a join that finds the bot already queued (200) does not. */
const counts = (action: LimitedAction, status: number) => succeeded(status) && (action !== "join" || status === 201);

/**
 * What a refusal adds for an action: a bot refused at its own turn loses the turn at once, so the branch is
 * not held up for the turn timeout (`turn_passed`, `next_bot` in the 429's details).
 */
const onLimited: Partial<Record<LimitedAction, (c: Context<AppEnv>) => Promise<Record<string, unknown>>>> = {
  segment: async (c) => {
    const actor = actorOf(c);
    if (actor.type !== "bot") return {};
    const { turn_passed, next_bot } = await c.get("rooms").yieldTurn(c.req.param("branch_id")!.toLowerCase(), actor.id);
    return turn_passed ? { turn_passed, next_bot } : {};
  },
};

const tighter = (a: RateState | null, b: RateState | null) => (!a ? b : !b ? a : b.remaining < a.remaining ? b : a);

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
export function limitsAndIdempotency(action: LimitedAction): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const actor = actorOf(c);
    const idem = await idempotencyOf(c);
    const counters = actor.type === "admin" ? [] : countersFor(action, c.get("config").limits, c.req.param("branch_id"));
    if (!idem && !counters.length) return next();
    const gate = c.env.ACCOUNT_GATE.get(c.env.ACCOUNT_GATE.idFromName(actor.id)) as DurableObjectStub<AccountGate>;
    const timeGate = <T>(call: () => Promise<T>) => c.get("meter").timeObject("AccountGate", call);
    const admission = await timeGate(async (): Promise<Admission> => await gate.admit(idem, counters));
    if (admission.kind === "replay") {
      const { status, body, contentType, bookmark } = admission.response;
      const headers: Record<string, string> = {
        "content-type": contentType,
        "Idempotent-Replayed": "true",
        ...(admission.rate ? rateHeaders(admission.rate) : {}),
      };
      if (bookmark) headers["x-d1-bookmark"] = bookmark;
      return new Response(body, { status, headers });
    }
    if (admission.kind === "mismatch") {
      throw new ApiError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request");
    }
    if (admission.kind === "limited") throw limitError(admission, await onLimited[action]?.(c));
    if (idem) c.set("idempotency", { actorId: actor.id, ...idem });
    if (admission.deferred) c.set("deferredLimit", { ...admission.deferred, applies: true });
    await next();
    // The key was committed by an attempt whose answer was lost (a crash): replay what D1 recorded with it. The
    // write itself may find out (its batch fails on the key), or a rule may refuse the retry before it gets
    // there (the turn has passed since): either way an error answer to a keyed request first asks D1.
    const mayBeCommitted = c.error instanceof KeyAlreadyCommitted || c.res.status >= 400;
    const replayed = idem && mayBeCommitted ? await replayCommitted(c, { actorId: actor.id, ...idem }) : false;
    const { status, headers } = c.res;
    const counted = !replayed && counts(action, status);
    const response =
      status < 300 && idem
        ? { status, body: await c.res.clone().text(), contentType: headers.get("content-type") ?? "application/json", bookmark: c.get("meter").bookmark() }
        : null;
    const deferred = c.get("deferredLimit");
    const keys = counters.map((k) => k.key).filter((k) => deferred?.applies !== false || k !== deferred.key);
    const settled = timeGate(() => gate.settle(idem, admission.reservation, { counted, response, keys }));
    // With a key the answer must be stored before we answer; a counted request without one need not wait.
    if (idem || !counted) await settled;
    else await inBackground(c, settled);
    const rate = tighter(admission.rate, deferred?.applies ? deferred.rate : null);
    // A replay counted nothing: it shows the counter as it stands.
    const shown = replayed && rate ? { ...rate, remaining: Math.min(rate.limit, rate.remaining + 1) } : rate;
    if ((counted || replayed) && shown) for (const [k, v] of Object.entries(rateHeaders(shown))) headers.set(k, v);
  };
}

/** Answers with the response D1 committed under the key (or 422 when the key came with another request). */
async function replayCommitted(c: Context<AppEnv>, request: { actorId: string; key: string; hash: string }): Promise<boolean> {
  const stored = await committedAnswer(c.get("db"), request);
  if (!stored) return false;
  c.error = undefined;
  // Hono's setter copies the previous response's headers onto a new one; the error's (Retry-After …) must not stay.
  c.res = undefined as unknown as Response;
  if (stored.hash !== request.hash) {
    c.res = renderError(c, new ApiError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was used with a different request"));
    return true;
  }
  c.res = new Response(stored.body, { status: stored.status, headers: { "content-type": "application/json", "Idempotent-Replayed": "true" } });
  return true;
}
