import { type SQL, sql } from "drizzle-orm";
import { abortUnless } from "../db/client";
import type { ActorType } from "./actor";

/**
 * An account's standing (issue 23): checked on every request that carries a credential, by one rule for every
 * kind of credential. The rule is `verdictOf` (pure); `standingQuery` reads what it needs in the request's own
 * round trip, and `standingGuard` is the same rule as a statement that aborts a write batch it leads.
 */

export type Role = "user" | "moderator";

/** What the standing query reads: the account now (null when its row is gone), and whether the session was logged out. */
export interface StandingRow {
  type: ActorType;
  role: Role;
  suspended_at: string | null;
  suspended_until: string | null;
  suspension_reason: string | null;
  revoked: number;
}

/** Whose standing, and what the request needs of it. */
export interface Expectation {
  /** The account's type as the credential says it (a JWT's `typ`). */
  claimed: ActorType;
  /** The route's `auth({types})`: the account's current type must be one of them. */
  types?: readonly ActorType[];
  /** The route is a moderator's (`moderatorsOnly`): an admin, or a human with the moderator role. */
  moderator?: boolean;
  /** The route serves a suspended account too (logging out, issue 56): a suspension refuses nothing. */
  evenSuspended?: boolean;
  /**
   * The request has already composed work with the claimed type's rights (a write whose batch leads the trip):
   * an admin token whose account is no longer an admin is then refused rather than acted on as a human.
   */
  composed?: boolean;
}

type Refusal = {
  ok: false;
  code: "UNAUTHORIZED" | "ACCOUNT_SUSPENDED" | "FORBIDDEN" | "AUTH_INVALID_TOKEN";
  message: string;
  details?: Record<string, unknown>;
};

export type Verdict = { ok: true; type: ActorType; role: Role } | Refusal;

/** Suspended now: from `suspended_at` until `suspended_until` (none: until restored). ISO strings compare as text. */
export const suspendedNow = (row: Pick<StandingRow, "suspended_at" | "suspended_until">, now: string) =>
  row.suspended_at !== null && (row.suspended_until === null || row.suspended_until > now);

/** The one rule. Checked in this order: gone, logged out, suspended, then what the route needs of the current type and role. */
export function verdictOf(row: StandingRow | null, expect: Expectation, now: string): Verdict {
  if (!row) return { ok: false, code: "UNAUTHORIZED", message: "This credential's account no longer exists" };
  if (row.revoked) return { ok: false, code: "UNAUTHORIZED", message: "This session was logged out: log in again" };
  if (!expect.evenSuspended && suspendedNow(row, now)) {
    return {
      ok: false,
      code: "ACCOUNT_SUSPENDED",
      message: "This account is suspended",
      details: { until: row.suspended_until, reason: row.suspension_reason },
    };
  }
  if (expect.composed && expect.claimed === "admin" && row.type !== "admin") {
    return {
      ok: false,
      code: "AUTH_INVALID_TOKEN",
      message: "This token was issued to an admin and the account no longer is one: log in again",
      details: { reason: "account_changed" },
    };
  }
  return unmet(row, expect) ?? { ok: true, type: row.type, role: row.role };
}

/** What a route needs of the account's current type and role (`auth({types})`, `moderatorsOnly`), when it is not met. */
export function unmet(account: { type: ActorType; role?: Role }, expect: Pick<Expectation, "types" | "moderator">): Refusal | null {
  if (expect.types && !expect.types.includes(account.type)) {
    return { ok: false, code: "FORBIDDEN", message: `This endpoint is for ${expect.types.join(" or ")} accounts` };
  }
  if (expect.moderator && !isModerator(account)) return { ok: false, code: "FORBIDDEN", message: "This endpoint is for moderators" };
  return null;
}

export const isModerator = (account: { type: ActorType; role?: Role }) => account.type === "admin" || account.role === "moderator";

/** The account whose standing is read: its id, its table (bots, or users for humans and admins), the session's jti. */
export interface Subject {
  id: string;
  type: ActorType;
  /** A JWT's id (null for an API key or API token: those are revoked by their own rows). */
  jti: string | null;
}

const revoked = (jti: string | null) => sql`EXISTS (SELECT 1 FROM revoked_sessions WHERE jti = ${jti ?? ""})`;

/** One row (none when the account is gone): the account's type, role and suspension, and whether the session was revoked. */
export function standingQuery(subject: Subject): SQL {
  return subject.type === "bot"
    ? sql`SELECT 'bot' AS type, 'user' AS role, suspended_at, suspended_until, suspension_reason, ${revoked(subject.jti)} AS revoked FROM bots WHERE id = ${subject.id}`
    : sql`SELECT user_type AS type, role, suspended_at, suspended_until, suspension_reason, ${revoked(subject.jti)} AS revoked FROM users WHERE id = ${subject.id}`;
}

/** SQL: the account row in scope (`users` or `bots`) is not suspended at `now`: `suspendedNow`'s twin. */
export const notSuspendedSql = (now: string): SQL => sql`(suspended_at IS NULL OR (suspended_until IS NOT NULL AND suspended_until <= ${now}))`;

/** `verdictOf` as SQL: true when the account is in good standing for what the request expects (its type and role included). */
export function inGoodStanding(subject: Subject, expect: Expectation, now: string): SQL {
  const notSuspended = expect.evenSuspended ? sql`1` : notSuspendedSql(now);
  if (subject.type === "bot") {
    return sql`(EXISTS (SELECT 1 FROM bots WHERE id = ${subject.id} AND ${notSuspended}) AND NOT ${revoked(subject.jti)})`;
  }
  const allowed = (expect.types ?? ["human", "admin"]).filter((t) => t !== "bot" && (expect.claimed !== "admin" || !expect.composed || t === "admin"));
  const types = allowed.length
    ? sql.join(
        allowed.map((t) => sql`${t}`),
        sql`, `,
      )
    : sql`''`;
  const moderator = expect.moderator ? sql` AND (user_type = 'admin' OR role = 'moderator')` : sql``;
  return sql`(EXISTS (SELECT 1 FROM users WHERE id = ${subject.id} AND ${notSuspended} AND user_type IN (${types})${moderator}) AND NOT ${revoked(subject.jti)})`;
}

/**
 * Leads a write batch: aborts the whole batch (D1 runs a batch as one transaction) unless the account is in good
 * standing, so nothing is written for a refused account. SQLite has no RAISE outside triggers: `json()` of text
 * that is not JSON is the error. The caller then reads the standing alone to say why (an extra trip, on a refusal only).
 */
export function standingGuard(subject: Subject, expect: Expectation, now: string): SQL {
  return abortUnless(inGoodStanding(subject, expect, now), "account not in good standing");
}
