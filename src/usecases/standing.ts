// PLACEHOLDER (issue 23, branch issue-23-reports): the real module is the account-standing branch's and is merged
// over this file. Only `suspendAccount`'s signature is relied on here (resolving a report with 'suspend'); the body
// is the least that lets that path run in this branch's tests: the suspension columns and the audit row, with
// `extra` in the same batch. No credential is refused, no queue left: that is the real module's work.
import type { BatchItem } from "drizzle-orm/batch";
import { sql } from "drizzle-orm";
import { rawAll, rawRun } from "../db/client";
import { auditStatement } from "../domain/audit";
import { notFound } from "../lib/errors";
import type { Caller } from "./caller";

export async function suspendAccount(
  caller: Caller,
  accountId: string,
  { reason, until }: { reason: string; until: string | null },
  extra: BatchItem<"sqlite">[] = [],
): Promise<{ account_id: string; suspended_until: string | null }> {
  const db = caller.db;
  const [found] = await rawAll<{ id: string }>(db, sql`SELECT id FROM users WHERE id = ${accountId} UNION ALL SELECT id FROM bots WHERE id = ${accountId}`);
  if (!found) throw notFound("Account");
  const now = new Date().toISOString();
  await db.batch([
    rawRun(db, sql`UPDATE users SET suspended_at = ${now}, suspended_until = ${until}, suspension_reason = ${reason} WHERE id = ${accountId}`),
    rawRun(db, sql`UPDATE bots SET suspended_at = ${now}, suspended_until = ${until}, suspension_reason = ${reason} WHERE id = ${accountId}`),
    auditStatement(db, caller.actor, { action: "suspend", targetType: "account", targetId: accountId, reason, detail: { until } }, now),
    ...extra,
  ]);
  return { account_id: accountId, suspended_until: until };
}
