import type { Context } from "hono";
import type { AppEnv } from "../context";
import type { Caller, Guest } from "../usecases/caller";
import { actorOf } from "./auth";
import { inBackground } from "./background";

/** This request's services as the use cases take them, before anyone is authenticated (registering, logging in). */
export function guestOf(c: Context<AppEnv>): Guest {
  return {
    config: c.get("config"),
    db: c.get("db"),
    rooms: c.get("rooms"),
    search: c.get("search"),
    webhooks: c.env.WEBHOOKS,
    fanout: c.env.FANOUT,
    background: (work) => inBackground(c, work),
  };
}

/**
 * The use cases' caller for a request past `auth()` (the API) or `requireSession` (the web forms): the services,
 * the actor, and what `limitsAndIdempotency()` left on the context. `segmentQuota` is the context's own object,
 * so the `rate` a use case writes back is what the middleware shows.
 */
export function callerOf(c: Context<AppEnv>): Caller {
  return { ...guestOf(c), actor: actorOf(c), idempotency: c.get("idempotency"), segmentQuota: c.get("segmentQuota") };
}
