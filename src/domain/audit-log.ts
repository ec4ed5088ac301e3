import { type SQL, and, count, desc, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { auditLog } from "../db/schema";
import { pagination } from "../lib/pagination";

type AuditRow = typeof auditLog.$inferSelect;

/** An audit entry: who (id and name at the time), what, on which target, why, when, and what the action set. */
export function auditView(a: AuditRow) {
  return {
    id: a.id,
    actor_id: a.actorId,
    actor_name: a.actorName,
    action: a.action,
    target_type: a.targetType,
    target_id: a.targetId,
    reason: a.reason,
    detail: (a.detail ?? null) as Record<string, unknown> | null,
    created_at: a.createdAt,
  };
}

export interface AuditFilter {
  target_type?: AuditRow["targetType"];
  target_id?: string;
  actor_id?: string;
  action?: AuditRow["action"];
}

/** The audit log, newest first, filtered by any of target, actor and action. */
export async function listAudit(db: Db, filter: AuditFilter, limit: number, offset: number) {
  const conditions: SQL[] = [];
  if (filter.target_type) conditions.push(eq(auditLog.targetType, filter.target_type));
  if (filter.target_id) conditions.push(eq(auditLog.targetId, filter.target_id.toLowerCase()));
  if (filter.actor_id) conditions.push(eq(auditLog.actorId, filter.actor_id.toLowerCase()));
  if (filter.action) conditions.push(eq(auditLog.action, filter.action));
  const where = conditions.length ? and(...conditions) : undefined;
  const [rows, [{ total }]] = await db.batch([
    db.select().from(auditLog).where(where).orderBy(desc(auditLog.createdAt), desc(auditLog.id)).limit(limit).offset(offset),
    db.select({ total: count() }).from(auditLog).where(where),
  ]);
  return { entries: rows.map(auditView), pagination: pagination(limit, offset, total) };
}
