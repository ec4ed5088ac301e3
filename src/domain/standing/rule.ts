import { type SQL, sql } from "drizzle-orm";
import { abortUnless, nowIso } from "../../db/client";
import { ApiError } from "../../lib/errors";
import type { Actor, ActorType } from "../shared/actor";

/**
 * An account's standing: checked on every request that carries a credential, by one rule for every
 * kind of credential. The rule is `verdictOf` (pure); `standingQuery` reads what it needs in the request's own
 * round trip, and `standingGuard` is the same rule as a statement that aborts a write batch it leads.
 * Why, and what was weighed: docs/decisions.md, "Moderation: account standing".
 */

export type Role = "user" | "moderator";

/** A session id that names an OAuth grant: the standing statement then reads the grant, so a revoked grant ends its sessions. */
const OAUTH_JTI_PREFIX = "oauth:";
export const grantJti = (grantId: string) => `${OAUTH_JTI_PREFIX}${grantId}`;

/** What the standing query reads: the account now (null when its row is gone), and whether the session was logged out. */
export interface StandingRow {
  type: ActorType;
  role: Role;
  suspended_at: string | null;
  suspended_until: string | null;
  suspension_reason: string | null;
  revoked: number;
  /** A bot's owner's suspension (a person's suspension suspends the bots they own); absent or null: none. */
  owner_suspended_at?: string | null;
  owner_suspended_until?: string | null;
}

/** Whose standing, and what the request needs of it. */
export interface Expectation {
  /** The account's type as the credential says it (a JWT's `typ`). */
  claimed: ActorType;
  /** The route's `auth({types})`: the account's current type must be one of them. */
  types?: readonly ActorType[];
  /** The route is a moderator's (`moderatorsOnly`): an admin, or a human with the moderator role. */
  moderator?: boolean;
  /** The route serves a suspended account too (logging out): a suspension refuses nothing. */
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

/** A verdict's refusal, thrown as the error the caller answers (nothing for good standing): the one place a verdict becomes an error. */
export function refuseUnless(verdict: Verdict): asserts verdict is Extract<Verdict, { ok: true }> {
  if (!verdict.ok) throw new ApiError(verdict.code, verdict.message, verdict.details);
}

/** Suspended now: from `suspended_at` until `suspended_until` (none: until restored). ISO strings compare as text. */
export const suspendedNow = (row: Pick<StandingRow, "suspended_at" | "suspended_until">, now: string) =>
  row.suspended_at !== null && (row.suspended_until === null || row.suspended_until > now);

/** The one rule. Checked in this order: gone, logged out, suspended, then what the route needs of the current type and role. */
export function verdictOf(row: StandingRow | null, expect: Expectation, now: string): Verdict {
  if (!row) return { ok: false, code: "UNAUTHORIZED", message: "This credential's account no longer exists" };
  if (row.revoked)
    return { ok: false, code: "UNAUTHORIZED", message: "This session was logged out (or its app's access revoked, or its bot's key replaced): log in again" };
  if (!expect.evenSuspended && suspendedNow(row, now)) {
    return {
      ok: false,
      code: "ACCOUNT_SUSPENDED",
      message: "This account is suspended",
      details: { until: row.suspended_until, reason: row.suspension_reason },
    };
  }
  if (
    !expect.evenSuspended &&
    row.owner_suspended_at &&
    suspendedNow({ suspended_at: row.owner_suspended_at, suspended_until: row.owner_suspended_until ?? null }, now)
  ) {
    return {
      ok: false,
      code: "ACCOUNT_SUSPENDED",
      message: "This bot's owner is suspended, and with them the bots they own",
      details: { until: row.owner_suspended_until ?? null, reason: null, owner_suspended: true },
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
  /**
   * When a JWT was issued (ISO, to the millisecond; null for any other credential): a bot's JWT issued before its
   * key was last replaced (`bots.key_rotated_at`) is over, as a logged-out one is.
   */
  issuedAt: string | null;
}

/** A caller's session as its standing reads it. */
export type Session = Pick<Subject, "jti" | "issuedAt">;

/** No session (an API key or API token: revoked by their own rows). */
export const NO_SESSION: Session = { jti: null, issuedAt: null };

/** The caller's session as its standing reads it: a JWT's id and issue time, an OAuth grant's id, none for a key or token. */
export const sessionOf = (actor: Pick<Actor, "session">): Session => ({
  jti: actor.session?.jti ?? null,
  issuedAt: actor.session?.issuedMs === undefined ? null : new Date(actor.session.issuedMs).toISOString(),
});

/**
 * The session is over: a logged-out JWT's jti, or an OAuth grant (`oauth:<grant id>`) revoked, or acting
 * as a bot its approver does not own. A grant row not found is not a refusal: a replica may not have it yet (its
 * token is the library's to check); Revoke's row is what ends it. One text whatever the value (prepared statements
 * bind it: src/db/compile.ts); SQLite's CASE reads only the branch the value takes.
 */
const revoked = (jti: string | null) =>
  sql`(CASE WHEN substr(${jti ?? ""}, 1, ${OAUTH_JTI_PREFIX.length}) = ${OAUTH_JTI_PREFIX}
    THEN EXISTS (SELECT 1 FROM oauth_grants g WHERE g.id = substr(${jti ?? ""}, ${OAUTH_JTI_PREFIX.length + 1}) AND (g.revoked_at IS NOT NULL
      OR (g.actor_type = 'bot' AND NOT EXISTS (SELECT 1 FROM bots gb WHERE gb.id = g.actor_id AND gb.owner_id = g.person_id))))
    ELSE EXISTS (SELECT 1 FROM revoked_sessions WHERE jti = ${jti ?? ""}) END)`;

/**
 * SQL: none of the accounts `ids` (SQL expressions: authors, owners, creators) is suspended at `now`, whichever kind
 * each is, a bot also not when its owner is; a retired bot's writing stays (one primary-key look-up per
 * id and table; an account that is gone is not suspended).
 */
export const noneSuspended = (ids: SQL, now: string) =>
  sql`NOT EXISTS (SELECT 1 FROM users ns WHERE ns.id IN (${ids}) AND NOT ${notSuspendedSql("ns", now)})
    AND NOT EXISTS (SELECT 1 FROM bots ns WHERE ns.id IN (${ids}) AND NOT (${notSuspendedSql("ns", now)}
      AND NOT EXISTS (SELECT 1 FROM users owner WHERE owner.id = ns.owner_id AND NOT ${notSuspendedSql("owner", now)})))`;

/**
 * A bot's JWT issued before its key was last replaced (the row `b` of bots): what the old key logged in to ends with
 * it. Always 0 or 1 (never NULL, which `NOT` would keep NULL); one text whatever the value, as `revoked`.
 */
const keyReplacedSince = (b: string, issuedAt: string | null) => sql`(${issuedAt ?? ""} <> '' AND IFNULL(${sql.raw(b)}.key_rotated_at > ${issuedAt ?? ""}, 0))`;

/** One row (none when the account is gone): the account's type, role and suspension, and whether the session was revoked. */
export function standingQuery(subject: Subject): SQL {
  // A retired bot is gone to its credentials; its owner's suspension is read in the same statement.
  return subject.type === "bot"
    ? sql`SELECT 'bot' AS type, 'user' AS role, b.suspended_at, b.suspended_until, b.suspension_reason,
        (${revoked(subject.jti)} OR ${keyReplacedSince("b", subject.issuedAt)}) AS revoked,
        o.suspended_at AS owner_suspended_at, o.suspended_until AS owner_suspended_until
        FROM bots b LEFT JOIN users o ON o.id = b.owner_id WHERE b.id = ${subject.id} AND b.status <> 'retired'`
    : sql`SELECT user_type AS type, role, suspended_at, suspended_until, suspension_reason, ${revoked(subject.jti)} AS revoked FROM users WHERE id = ${subject.id}`;
}

/** Not suspended now, by the standing columns of the table (or alias) `t`. */
export const notSuspendedSql = (t: string, now: string) =>
  sql`(${sql.raw(t)}.suspended_at IS NULL OR (${sql.raw(t)}.suspended_until IS NOT NULL AND ${sql.raw(t)}.suspended_until <= ${now}))`;

/** A bot (the row `b` of bots) not suspended, nor its owner (if any). */
const botNotSuspendedSql = (b: string, now: string) =>
  sql`(${notSuspendedSql(b, now)} AND NOT EXISTS (SELECT 1 FROM users owner WHERE owner.id = ${sql.raw(b)}.owner_id AND NOT ${notSuspendedSql("owner", now)}))`;

/**
 * An account, by its id (`id`, SQL), not suspended now: a human not suspended, or a bot not suspended nor its owner;
 * true for an id that is no account. Who may still be heard of: the inbox's fan-out and the feeds.
 */
export const accountNotSuspendedSql = (id: SQL, now: string) =>
  sql`(NOT EXISTS (SELECT 1 FROM users sa_u WHERE sa_u.id = ${id} AND NOT ${notSuspendedSql("sa_u", now)})
    AND NOT EXISTS (SELECT 1 FROM bots sa_b WHERE sa_b.id = ${id} AND NOT ${botNotSuspendedSql("sa_b", now)}))`;

/**
 * A bot (the row `b` of bots) in good standing: not retired, not suspended, and its owner (if any) not suspended. One fact for the credentials' guard, the webhooks and the outbox.
 */
export const botInGoodStandingSql = (b: string, now: string) => sql`(${sql.raw(b)}.status <> 'retired' AND ${botNotSuspendedSql(b, now)})`;

/** `verdictOf` as SQL: true when the account is in good standing for what the request expects (its type and role included). */
export function inGoodStanding(subject: Subject, expect: Expectation, now: string): SQL {
  if (subject.type === "bot") {
    const standing = expect.evenSuspended ? sql`b.status <> 'retired'` : botInGoodStandingSql("b", now);
    return sql`(EXISTS (SELECT 1 FROM bots b WHERE b.id = ${subject.id} AND ${standing} AND NOT ${keyReplacedSince("b", subject.issuedAt)}) AND NOT ${revoked(subject.jti)})`;
  }
  const notSuspended = expect.evenSuspended ? sql`1` : notSuspendedSql("users", now);
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

/** What a key or token lookup may accept of a suspended account (the appeal routes). */
export type KeyStanding = Pick<Expectation, "evenSuspended">;

/**
 * The standing rule on an account just read with its credential (a key's, a token's, a login's): the row exists
 * and a key or token is revoked by its own row, so what is left to refuse is a suspension (403 ACCOUNT_SUSPENDED).
 */
export function refuseIfSuspended(
  row: {
    suspendedAt: string | null;
    suspendedUntil: string | null;
    suspensionReason: string | null;
    ownerSuspendedAt?: string | null;
    ownerSuspendedUntil?: string | null;
  },
  expect: KeyStanding = {},
) {
  const verdict = verdictOf(
    {
      type: "human",
      role: "user",
      suspended_at: row.suspendedAt,
      suspended_until: row.suspendedUntil,
      suspension_reason: row.suspensionReason,
      revoked: 0,
      owner_suspended_at: row.ownerSuspendedAt,
      owner_suspended_until: row.ownerSuspendedUntil,
    },
    { claimed: "human", ...expect },
    nowIso(),
  );
  refuseUnless(verdict);
}
