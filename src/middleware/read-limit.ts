import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { addressKey } from "../lib/address";
import { isReadMethod } from "../lib/envelope";
import { ApiError } from "../lib/errors";
import { ReadLeases, WINDOW_SECONDS } from "../lib/read-leases";
import { verifiedActor } from "./auth";

const leases = new ReadLeases();

/**
 * Takes a read from the address's lease, buying one from the binding when none is left; false when refused.
 *
 * Each request buys for itself, even while another request's purchase for the same address is in flight: no
 * request ever awaits another request's promise. Why: workerd hands such a wait back to the waiting request only
 * while V8 runs the code unoptimized; once the cache-first path's functions were hot (minutes into a soak), the waiter
 * went on in the buyer's I/O context, built its answer there and failed with "Cannot perform I/O on behalf of a
 * different request" (or hung). Concurrent buyers of one address lose nothing (`grant` adds to a live lease); a
 * refused buyer still takes a read another buyer's lease brought meanwhile.
 */
async function admitRead(limiter: RateLimit, key: string): Promise<boolean> {
  if (leases.take(key, Date.now())) return true;
  const { success } = await limiter.limit({ key });
  // The buyer's read is the first of its lease (grant takes it).
  if (success) leases.grant(key, Date.now());
  return success || leases.take(key, Date.now());
}

/** The client the limit counts: its address, an IPv6 address by its /64 (src/lib/address.ts). */
const readKeyOf = (address: string | null | undefined) => `read:${addressKey(address)}`;
const readKey = (c: Context<AppEnv>) => readKeyOf(c.req.header("cf-connecting-ip"));

/**
 * An anonymous read taken from the address's lease at once when it can be: true when there is no limit or a lease
 * had a read left; otherwise a promise that buys a lease, false when the binding refuses.
 */
export function leasedRead(limiter: RateLimit | undefined, address: string | null): true | Promise<boolean> {
  if (!limiter) return true;
  const key = readKeyOf(address);
  return leases.take(key, Date.now()) || admitRead(limiter, key);
}

const refusal = () =>
  new ApiError(
    "RATE_LIMIT_EXCEEDED",
    `Too many anonymous reads from this address; retry in ${WINDOW_SECONDS} s or authenticate`,
    { limit: "600 per minute", retry_after: WINDOW_SECONDS, reset_time: new Date(Date.now() + WINDOW_SECONDS * 1000).toISOString() },
    { "Retry-After": String(WINDOW_SECONDS) },
  );

/**
 * Anonymous reads: 600 per minute per client address, through Cloudflare's rate-limiting binding. A request
 * counts as authenticated only when its credential verifies (it is then on `c.var.actor` for `auth()`); a
 * garbage or expired credential is limited like no credential at all.
 */
export const anonymousReadLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const limiter = c.env.READ_LIMITER;
  if (!limiter || !isReadMethod(c.req.method) || (await verifiedActor(c))) return next();
  if (await admitRead(limiter, readKey(c))) return next();
  throw refusal();
};

/**
 * The same limit for a read that is no ordinary GET: the live stream's upgrade takes `reads` (1, plus 1 for a
 * page of replay) before anything is served, or throws the same 429. Signed-in callers have no read limit.
 */
export async function chargeReads(c: Context<AppEnv>, reads: number): Promise<void> {
  const limiter = c.env.READ_LIMITER;
  if (!limiter || (await verifiedActor(c))) return;
  const key = readKey(c);
  for (let i = 0; i < reads; i++) if (!(await admitRead(limiter, key))) throw refusal();
}
