import { type SQL, and, count, desc, eq } from "drizzle-orm";
import { type Db, nowIso } from "../../db/client";
import { auditLog } from "../../db/schema";
import { pagination } from "../../lib/pagination";
import type { Actor } from "../shared/actor";

type AuditRow = typeof auditLog.$inferInsert;
type AuditRead = typeof auditLog.$inferSelect;

/** One moderation action as the audit log records it. */
export interface AuditEntry {
  action: AuditRow["action"];
  targetType: AuditRow["targetType"];
  targetId: string;
  reason?: string | null;
  detail?: Record<string, unknown> | null;
}

/**
 * The audit row of a moderation action, as a statement for the action's own `db.batch()`: the action and its
 * record land together or not at all. The table refuses UPDATE and DELETE (migrations/0008).
 */
export const auditStatement = (db: Db, by: Pick<Actor, "id" | "name">, entry: AuditEntry, at = nowIso()) =>
  db.insert(auditLog).values({
    id: crypto.randomUUID(),
    actorId: by.id,
    actorName: by.name,
    action: entry.action,
    targetType: entry.targetType,
    targetId: entry.targetId,
    reason: entry.reason ?? null,
    detail: entry.detail ?? null,
    createdAt: at,
  });

/** An audit entry: who (id and name at the time), what, on which target, why, when, and what the action set. */
export function auditView(a: AuditRead) {
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
