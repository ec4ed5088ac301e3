import type { Config } from "./config";
import type { Db } from "./db/client";
import type { Actor } from "./domain/actor";
import type { IdempotentRequest } from "./domain/idempotency";
import type { BranchRooms } from "./durable/branch-client";
import type { Env } from "./env";
import type { RateState, Refusal } from "./lib/limit-error";
import type { RequestMeter } from "./lib/meter";

/**
 * What every request has on `c.var`, set by the `servicesAndServerTiming` middleware before any route runs.
 * Code reads them with `c.get(name)`: Hono builds a new object from all of them on every `c.var` access.
 */
export interface Services {
  config: Config;
  /** Drizzle on this request's metered D1 session (`c.env.DB` stays the raw binding). */
  db: Db;
  /** The branch rooms (Durable Objects), called through their client. */
  rooms: BranchRooms;
  meter: RequestMeter;
}

export interface AppEnv {
  Bindings: Env;
  Variables: Services & {
    /** This request's id (a new UUID, or a well-formed X-Request-Id), set by `requestId()`; on every response as X-Request-Id. */
    requestId: string;
    /** The JSON text of a read's success envelope, as `ok()` serialized it (the micro-cache stores it). */
    rendered?: string;
    /** The error code the response carries, set by the one error renderer (for the access log). */
    errorCode?: string;
    /** The authenticated caller, set by `auth()`. */
    actor?: Actor;
    /** The web reader's signed-in human, from the session cookie only (src/web/session.ts). */
    viewer?: Actor;
    /** The write's Idempotency-Key, set by `limitsAndIdempotency()`: domain writes record it in their batch. */
    idempotency?: IdempotentRequest;
    /**
     * A limit the gate counted but left to the route to enforce (the per-branch segment limit, which does not
     * apply to a bot at its own turn): `refusal` when it is reached; the route sets `applies` false when it
     * did not apply, so it is not counted.
     */
    deferredLimit?: { key: string; rate: RateState; refusal: Refusal | null; applies: boolean };
  };
}
