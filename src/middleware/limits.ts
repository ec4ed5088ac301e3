import type { Context, MiddlewareHandler, Next } from "hono";
import type { AppEnv } from "../context";
import { KeyAlreadyCommitted, committedAnswer } from "../domain/shared/idempotency";
import { sha256Hex } from "../lib/crypto";
import { succeeded } from "../lib/envelope";
import { ApiError, keyReused } from "../lib/errors";
import type { Actor } from "../domain/shared/actor";
import { rateHeaders } from "../lib/limit-error";
import { IDEMPOTENCY_KEY, type LimitedAction, admitWrite, countsAgainstLimit, segmentQuotaOf } from "../usecases/limits";
import { actorOf } from "./auth";
import { inBackground } from "./background";
import { renderError } from "./render-error";

export type { LimitedAction } from "../usecases/limits";

/**
 * The request header of every creating POST, as the OpenAPI document describes it (the route's `parameters`).
 * Not a zod schema of the route's: `limitsAndIdempotency()` reads and checks the header before any validator
 * would, so a validator would only parse every header again to find nothing to refuse.
 */
export const idempotencyParameter = {
  name: "idempotency-key",
  in: "header",
  required: false,
  description: "1–255 visible ASCII characters. A repeat with the same body within 24 h replays the first response",
  schema: { type: "string", pattern: IDEMPOTENCY_KEY.source },
} as const;

/** The errors `limitsAndIdempotency()` adds to a creating POST. */
export const LIMIT_ERRORS = ["RATE_LIMIT_EXCEEDED", "IDEMPOTENCY_KEY_REUSED"] as const;

/** Which successful responses count against the limit: a join that finds the bot already queued (200) does not. */
const counts = (action: LimitedAction, status: number) => succeeded(status) && countsAgainstLimit(action, status === 201);

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
 * For a creating POST: the door-neutral rule of `admitWrite` (src/usecases/limits.ts) over HTTP. Replays an
 * earlier response for a repeated Idempotency-Key, enforces the caller's rate limits (admins exempt), and counts
 * the request only when it succeeds. Runs after `auth()`.
 */
export function limitsAndIdempotency(action: LimitedAction): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const actor = actorOf(c);
    const idem = await idempotencyOf(c);
    if (action === "segment") return countedByTheRoom(c, next, { actor, idem });
    const services = { config: c.get("config"), accountGates: c.env.ACCOUNT_GATE, meter: c.get("meter"), db: c.get("db") };
    const admitted = await admitWrite(services, actor, action, idem);
    if (admitted.kind === "replay") {
      const { status, body, contentType, bookmark } = admitted.response;
      const headers: Record<string, string> = {
        "content-type": contentType,
        "Idempotent-Replayed": "true",
        ...(admitted.rate ? rateHeaders(admitted.rate) : {}),
      };
      if (bookmark) headers["x-d1-bookmark"] = bookmark;
      return new Response(body, { status, headers });
    }
    if (idem) c.set("idempotency", { actorId: actor.id, ...idem });
    await next();
    const replayed = idem ? await replayIfCommitted(c, { actorId: actor.id, ...idem }) : false;
    const { status, headers } = c.res;
    const counted = !replayed && counts(action, status);
    const response =
      status < 300 && idem
        ? { status, body: await c.res.clone().text(), contentType: headers.get("content-type") ?? "application/json", bookmark: c.get("meter").bookmark() }
        : null;
    const settled = admitted.settle({ counted, response });
    // With a key the answer must be stored before we answer; a counted request without one need not wait.
    if (idem || !counted) await settled;
    else await inBackground(c, settled);
    const rate = admitted.rate;
    // A replay counted nothing: it shows the counter as it stands.
    const shown = replayed && rate ? { ...rate, remaining: Math.min(rate.limit, rate.remaining + 1) } : rate;
    if ((counted || replayed) && shown) for (const [k, v] of Object.entries(rateHeaders(shown))) headers.set(k, v);
  };
}

/**
 * Segments: the branch's room counts the writer's limits in the write's own D1 batch (src/domain/stories/segment-quota.ts),
 * and D1 keeps the Idempotency-Key with the write, so no gate is asked: the write is one RPC. The room answers a
 * refusal with the 429 itself; a success gets the tightest counter's headers from what the room wrote back.
 */
async function countedByTheRoom(c: Context<AppEnv>, next: Next, { actor, idem }: { actor: Actor; idem: { key: string; hash: string } | null }) {
  if (idem) c.set("idempotency", { actorId: actor.id, ...idem });
  const quota = segmentQuotaOf(actor, c.get("config"));
  if (quota) c.set("segmentQuota", quota);
  await next();
  const replayed = idem ? await replayIfCommitted(c, { actorId: actor.id, ...idem }) : false;
  if (!replayed && quota?.rate && c.res.status < 300) for (const [k, v] of Object.entries(rateHeaders(quota.rate))) c.res.headers.set(k, v);
}

/**
 * The key was committed by an attempt whose answer was lost (a crash): replay what D1 recorded with it. The
 * write itself may find out (its batch fails on the key), or a rule may refuse the retry before it gets there
 * (the turn has passed since): either way an error answer to a keyed request first asks D1.
 */
function replayIfCommitted(c: Context<AppEnv>, request: { actorId: string; key: string; hash: string }): Promise<boolean> | false {
  const mayBeCommitted = c.error instanceof KeyAlreadyCommitted || c.res.status >= 400;
  return mayBeCommitted && replayCommitted(c, request);
}

/** Answers with the response D1 committed under the key (or 422 when the key came with another request). */
async function replayCommitted(c: Context<AppEnv>, request: { actorId: string; key: string; hash: string }): Promise<boolean> {
  const stored = await committedAnswer(c.get("db"), request);
  if (!stored) return false;
  c.error = undefined;
  // Hono's setter copies the previous response's headers onto a new one; the error's (Retry-After …) must not stay.
  c.res = undefined as unknown as Response;
  if (stored.hash !== request.hash) {
    c.res = renderError(c, keyReused());
    return true;
  }
  c.res = new Response(stored.body, { status: stored.status, headers: { "content-type": "application/json", "Idempotent-Replayed": "true" } });
  return true;
}
