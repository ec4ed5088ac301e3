import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context";
import { addressKey } from "../lib/address";
import { isReadMethod } from "../lib/envelope";
import { ApiError } from "../lib/errors";
import { ReadLeases, WINDOW_SECONDS } from "../lib/read-leases";
import { verifiedActor } from "./auth";

const leases = new ReadLeases();
/** One purchase in flight per address: concurrent reads that find no lease wait for it instead of each buying. */
const purchases = new Map<string, Promise<boolean>>();

/** Takes a read from the address's lease, buying one from the binding when none is left; false when refused. */
async function admitRead(limiter: RateLimit, key: string): Promise<boolean> {
  for (;;) {
    if (leases.take(key, Date.now())) return true;
    const pending = purchases.get(key);
    if (pending) {
      if (!(await pending)) return false;
      continue;
    }
    const purchase = limiter
      .limit({ key })
      .then(({ success }) => {
        if (success) leases.grant(key, Date.now());
        return success;
      })
      .finally(() => purchases.delete(key));
    purchases.set(key, purchase);
    // The buyer's read is the first of its lease (grant takes it); waiters loop back to take theirs.
    return purchase;
  }
}

/** The client the limit counts: its address, an IPv6 address by its /64 (src/lib/address.ts). */
const readKeyOf = (address: string | null | undefined) => `read:${addressKey(address)}`;
const readKey = (c: Context<AppEnv>) => readKeyOf(c.req.header("cf-connecting-ip"));

/**
 * An anonymous read taken from the address's lease at once when it can be: true when there is no limit or a lease
 * had a read left; otherwise a promise that buys (or waits for) a lease, false when the binding refuses.
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
