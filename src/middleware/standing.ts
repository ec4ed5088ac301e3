import type { Context } from "hono";
import type { AppEnv } from "../context";
import { type Rider, setPrelude, withRider } from "../db/metered";
import { AccountStanding, type Requirement } from "../domain/standing/check";
import type { Actor } from "../domain/shared/actor";

/**
 * The caller's standing is to be checked on this request: once per request and actor. A JWT's check rides in
 * the first D1 trip (with `rider` behind it, if any); the actor of a key or token was checked when it was looked up.
 */
export function watchStanding(c: Context<AppEnv>, actor: Actor, rider?: Rider): AccountStanding {
  const known = c.get("standing");
  if (known?.actor === actor) return known;
  // A JWT's and an OAuth grant's account is read with the first trip; a key's or token's was read with it.
  const standing = new AccountStanding(actor, actor.credential !== "jwt" && actor.credential !== "oauth");
  c.set("standing", standing);
  if (!standing.known) {
    const prelude = standing.preludeFor(c.get("db"));
    setPrelude(c.get("db").$client, rider ? withRider(prelude, rider) : prelude);
  }
  return standing;
}

/** What the route needs of the caller's current type or role (`auth({types})`, `moderatorsOnly`). */
export function requireStanding(c: Context<AppEnv>, actor: Actor, requirement: Requirement) {
  watchStanding(c, actor).require(requirement);
}
