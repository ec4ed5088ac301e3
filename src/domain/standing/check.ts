import type { SQL } from "drizzle-orm";
import { type Db, nowIso, statementOf } from "../../db/client";
import type { Actor, ActorType } from "../shared/actor";
import { type Expectation, type StandingRow, type Verdict, refuseUnless, sessionOf, standingGuard, standingQuery, unmet, verdictOf } from "./rule";

/** What a route needs of the caller's current standing, besides being in good standing. */
export interface Requirement {
  types?: readonly ActorType[];
  moderator?: boolean;
  /** A suspended account may still do this (log out). */
  evenSuspended?: boolean;
}

/**
 * One request's check of its caller's standing. A JWT's account is read in the request's first D1
 * round trip (a prelude of the metered D1: docs/decisions.md, "account standing"), so a read costs no extra trip;
 * until then the actor is what the token claims, and the verdict updates it in place (its current type and
 * role) or refuses the request before the caller sees anything of that trip. An API key or API token was read
 * with its standing already (`resolveActor`), so its verdict is known from the start.
 */
export class AccountStanding {
  private expect: Expectation;
  /** The verdict is in (the actor's type and role are the account's current ones). */
  known: boolean;
  /** The request was refused by its standing (the web reader then ends the session). */
  refused = false;

  constructor(
    readonly actor: Actor,
    known: boolean,
  ) {
    this.known = known;
    this.expect = { claimed: actor.type };
  }

  /** Adds what a route needs; checked now when the verdict is already in, else with it. */
  require(requirement: Requirement) {
    if (requirement.types) this.expect.types = requirement.types;
    if (requirement.moderator) this.expect.moderator = true;
    if (requirement.evenSuspended) this.expect.evenSuspended = true;
    const refused = this.known ? unmet(this.actor, requirement) : null;
    if (refused) refuseUnless(refused);
  }

  /** Applies a verdict: the actor becomes the account as it is now, or the request is refused. */
  apply(verdict: Verdict) {
    this.refused = !verdict.ok;
    refuseUnless(verdict);
    this.actor.type = verdict.type;
    this.actor.role = verdict.role;
    this.known = true;
  }

  /** The prelude the request's first D1 trip carries: the standing query (and, on a write, the guard in front). */
  preludeFor(db: Db) {
    const subject = { id: this.actor.id, type: this.expect.claimed, ...sessionOf(this.actor) };
    // Prepared statements (not drizzle queries): the metered D1 puts them in the trip's batch as they are.
    const statement = (query: SQL) => statementOf(db, query);
    const query = () => statement(standingQuery(subject));
    let composed = false;
    return {
      statements: (write: boolean) => {
        composed = write;
        return write ? [statement(standingGuard(subject, { ...this.expect, composed }, nowIso())), query()] : [query()];
      },
      check: (results: D1Result[]) => {
        const row = (results.at(-1)?.results[0] ?? null) as StandingRow | null;
        this.apply(verdictOf(row, { ...this.expect, composed }, nowIso()));
      },
      failed: async (_err: unknown, direct: (statements: unknown[]) => Promise<D1Result[]>) => {
        // Why the trip failed is unknown here (its guard, or the statements' own fault): read the standing alone.
        const [result] = await direct([query()]);
        this.apply(verdictOf((result.results[0] ?? null) as StandingRow | null, { ...this.expect, composed }, nowIso()));
      },
    };
  }
}
