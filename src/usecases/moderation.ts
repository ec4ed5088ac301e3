// PLACEHOLDER (issue 23, branch issue-23-reports): the real module is the hiding branch's and is merged over this
// file. Only `hideItem`'s signature is relied on here (resolving a report with 'hide'); the body is the least that
// lets that path run in this branch's tests: the hiding columns and the audit row, with `extra` in the same batch.
// No read hides anything yet: that is the real module's work.
import type { BatchItem } from "drizzle-orm/batch";
import { sql } from "drizzle-orm";
import { rawAll, rawRun } from "../db/client";
import { auditStatement } from "../domain/audit";
import { notFound } from "../lib/errors";
import type { Caller } from "./caller";

export type HideableType = "segment" | "comment" | "story" | "branch";

const TABLES = { segment: "segments", comment: "comments", story: "stories", branch: "branches" } as const;

export async function hideItem(
  caller: Caller,
  item: { type: HideableType; id: string },
  reason: string,
  extra: BatchItem<"sqlite">[] = [],
): Promise<{ type: HideableType; id: string; hidden: true }> {
  const db = caller.db;
  const now = new Date().toISOString();
  const table = sql.raw(TABLES[item.type]);
  const [found] = await rawAll(db, sql`SELECT id FROM ${table} WHERE id = ${item.id}`);
  if (!found) throw notFound(item.type);
  await db.batch([
    rawRun(db, sql`UPDATE ${table} SET hidden_at = ${now}, hidden_by = ${caller.actor.id}, hidden_reason = ${reason} WHERE id = ${item.id}`),
    auditStatement(db, caller.actor, { action: "hide", targetType: item.type, targetId: item.id, reason }, now),
    ...extra,
  ]);
  return { ...item, hidden: true };
}
