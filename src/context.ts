import type { AccountStanding } from "./domain/standing/check";
import type { Actor } from "./domain/shared/actor";
import type { IdempotentRequest } from "./domain/shared/idempotency";
import type { Env } from "./env";
import type { RequestMeter } from "./lib/meter";
import type { Caller, SegmentQuota } from "./usecases/caller";

/**
 * What every request has on `c.var`, set by the `servicesAndServerTiming` middleware before any route runs.
 * Code reads them with `c.get(name)`: Hono builds a new object from all of them on every `c.var` access.
 */
export interface Services extends Pick<Caller, "config" | "db" | "rooms" | "search"> {
  meter: RequestMeter;
}

export interface AppEnv {
  Bindings: Env;
  Variables: Services & {
    /** This request's id (a new UUID, or a well-formed X-Request-Id), set by `requestId()`; on every response as X-Request-Id. */
    requestId: string;
    /** The UTF-8 bytes of a read's success envelope, as `ok()` sent them (the micro-cache stores them). */
    rendered?: Uint8Array;
    /** The access log's route when the pattern alone does not say it (`/mcp` names the JSON-RPC method and tool). */
    logRoute?: string;
    /** The error code the response carries, set by the one error renderer (for the access log). */
    errorCode?: string;
    /** The authenticated caller, set by `auth()`. */
    actor?: Actor;
    /** The caller's standing, checked in the request's first D1 trip (src/domain/standing/check.ts). */
    standing?: AccountStanding;
    /** The web reader's signed-in human, from the session cookie only (src/web/support/session.ts). */
    viewer?: Actor;
    /** The signed-in human's unread inbox items, read in a page's first D1 trip (src/web/support/session.ts); unknown until then. */
    unread?: number;
    /** The write's Idempotency-Key, set by `limitsAndIdempotency()`: domain writes record it in their batch. */
    idempotency?: IdempotentRequest;
    /**
     * Another origin the page's forms may go to (CSP `form-action`, after `'self'`): the consent page's, where
     * Approve's and Deny's redirects lead. Browsers apply `form-action` to the redirect after a form's POST too.
     */
    formTarget?: string;
    /** The writer's segment limits for the room to count, set by `limitsAndIdempotency("segment")` (src/usecases/caller.ts). */
    segmentQuota?: SegmentQuota;
  };
}
