import { sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { nowIso, rawAll, rawRun } from "../db/client";
import { auditStatement } from "../domain/moderation/audit";
import { refuseOwnCase } from "../domain/moderation/moderation";
import { isModerator, suspendedNow } from "../domain/standing/rule";
import { ApiError, notFound, validationError } from "../lib/errors";
import type { Caller } from "./caller";

/** An account as the admin routes answer it: who it is, its role and its standing now. */
export interface AccountStandingView {
  id: string;
  type: "human" | "admin" | "bot";
  name: string;
  role: "user" | "moderator";
  suspended: boolean;
  suspended_at: string | null;
  suspended_until: string | null;
  suspension_reason: string | null;
}

interface AccountRow {
  id: string;
  type: "human" | "admin" | "bot";
  name: string;
  role: "user" | "moderator";
  suspended_at: string | null;
  suspended_until: string | null;
  suspension_reason: string | null;
}

const view = (row: AccountRow, now = nowIso()): AccountStandingView => ({ ...row, suspended: suspendedNow(row, now) });

/** Account ids are UUIDs across both tables: the one row, a human's (or admin's) or a bot's. */
const accountQuery = (id: string) => sql`
  SELECT id, user_type AS type, username AS name, role, suspended_at, suspended_until, suspension_reason FROM users WHERE id = ${id}
  UNION ALL
  SELECT id, 'bot' AS type, name, 'user' AS role, suspended_at, suspended_until, suspension_reason FROM bots WHERE id = ${id}`;

const tableOf = (row: AccountRow) => sql.raw(row.type === "bot" ? "bots" : "users");

/**
 * Reads the account (and a bot's queues) in one trip, which carries the caller's own standing check; refuses what
 * the caller may not do to it: their own account, and (for a moderator who is not an admin) an admin or another
 * moderator, which only admins may suspend or restore (403 PERMISSION_DENIED).
 */
async function target(caller: Caller, accountId: string, verb: string) {
  const [accounts, memberships] = await caller.db.batch([
    rawAll<AccountRow>(caller.db, accountQuery(accountId)),
    // A bot's own queues, or a person's bots' (a person's suspension suspends the bots they own).
    rawAll<Membership>(
      caller.db,
      sql`SELECT branch_id, bot_id FROM branch_members WHERE bot_id = ${accountId} OR bot_id IN (SELECT id FROM bots WHERE owner_id = ${accountId})`,
    ),
  ]);
  const account = accounts[0];
  if (!account) throw notFound("Account");
  refuseOwnCase(caller.actor, account.id, `${verb} your own account`);
  if (caller.actor.type !== "admin" && isModerator(account)) throw new ApiError("PERMISSION_DENIED", `Only an admin may ${verb} an admin or a moderator`);
  return { account, memberships };
}

export interface Suspension {
  reason: string;
  /** When the suspension ends (ISO 8601, in the future); none: until restored. */
  until?: string | null;
}

/**
 * Suspends an account: its standing columns and the audit row in one D1 batch, with `extra` statements
 * of the caller's (a report's resolution) in the same batch. Every credential of the account is refused from its
 * next request on (the standing check). A bot then leaves every queue at once: each room where it is a member
 * passes the turn on; should this request die before a room is told, the sweeper expels it there
 * (src/queue/sweeper.ts) and its webhooks are settled undelivered meanwhile (src/queue/webhooks.ts).
 */
export async function suspendAccount(caller: Caller, accountId: string, input: Suspension, extra: BatchItem<"sqlite">[] = []) {
  const now = nowIso();
  const until = input.until ? new Date(input.until).toISOString() : null; // UTC text, as the standing check compares
  if (until !== null && until <= now) throw validationError([{ field: "until", issue: "must be in the future" }]);
  const { account, memberships } = await target(caller, accountId, "suspend");
  await caller.db.batch([
    rawRun(
      caller.db,
      sql`UPDATE ${tableOf(account)} SET suspended_at = ${now}, suspended_until = ${until}, suspension_reason = ${input.reason} WHERE id = ${account.id}`,
    ),
    auditStatement(caller.db, caller.actor, { action: "suspend", targetType: "account", targetId: account.id, reason: input.reason, detail: { until } }, now),
    ...extra,
  ]);
  await expelEverywhere(caller, memberships);
  return view({ ...account, suspended_at: now, suspended_until: until, suspension_reason: input.reason });
}

/** A bot's place in a branch's queue. */
export interface Membership {
  branch_id: string;
  bot_id: string;
}

/**
 * Each bot leaves each queue it is in (each room passes the turn on, with the next bot's `your_turn`). The suspension
 * (or retirement) is committed before: a room that cannot be reached now does not turn it into an error. That room
 * still holds the bot until the `your_turn` consumer or the sweeper expels it (src/queue/), so it is logged, not thrown.
 */
export async function expelEverywhere(caller: Pick<Caller, "rooms">, memberships: Membership[], change: "suspended" | "left" = "suspended") {
  const results = await Promise.allSettled(memberships.map((m) => caller.rooms.expel(m.branch_id, m.bot_id, change)));
  results.forEach((r, i) => {
    if (r.status === "rejected") {
      const { branch_id, bot_id } = memberships[i];
      console.error(JSON.stringify({ at: nowIso(), event: "expel failed", branch_id, bot_id, error: String(r.reason) }));
    }
  });
}

/** Lifts a suspension (one batch with its audit row): the account logs in again; a bot rejoins queues itself. */
export async function restoreAccount(caller: Caller, accountId: string, input: { reason?: string | null } = {}, extra: BatchItem<"sqlite">[] = []) {
  const { account } = await target(caller, accountId, "restore");
  const now = nowIso();
  await caller.db.batch([
    rawRun(caller.db, sql`UPDATE ${tableOf(account)} SET suspended_at = NULL, suspended_until = NULL, suspension_reason = NULL WHERE id = ${account.id}`),
    auditStatement(caller.db, caller.actor, { action: "unsuspend", targetType: "account", targetId: account.id, reason: input.reason ?? null }, now),
    ...extra,
  ]);
  return view({ ...account, suspended_at: null, suspended_until: null, suspension_reason: null });
}

/**
 * An admin makes a human a moderator, or a moderator a user again (one batch with its audit row). Admins
 * moderate by their type and bots never do: either is 400 naming `role`. The change holds from the account's next request.
 */
export async function setRole(caller: Caller, accountId: string, input: { role: "user" | "moderator"; reason?: string | null }) {
  if (caller.actor.type !== "admin") throw new ApiError("FORBIDDEN", "Only admins grant or remove the moderator role");
  const [account] = await rawAll<AccountRow>(caller.db, accountQuery(accountId));
  if (!account) throw notFound("Account");
  if (account.type !== "human") {
    throw validationError([{ field: "role", issue: account.type === "bot" ? "bots cannot be moderators" : "admins moderate by their type" }]);
  }
  const now = nowIso();
  await caller.db.batch([
    rawRun(caller.db, sql`UPDATE users SET role = ${input.role} WHERE id = ${account.id}`),
    auditStatement(
      caller.db,
      caller.actor,
      { action: "role", targetType: "account", targetId: account.id, reason: input.reason ?? null, detail: { role: input.role } },
      now,
    ),
  ]);
  return view({ ...account, role: input.role }, now);
}
