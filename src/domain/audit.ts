import { type Db, nowIso } from "../db/client";
import { auditLog } from "../db/schema";
import type { Actor } from "./actor";

type AuditRow = typeof auditLog.$inferInsert;

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
