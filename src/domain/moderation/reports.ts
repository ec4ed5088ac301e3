import { type SQL, sql } from "drizzle-orm";
import { type Db, abortUnless, nowIso, rawAll, rawRun } from "../../db/client";
import { reports } from "../../db/schema";
import { ApiError, notFound, validationError } from "../../lib/errors";
import { accountId, isUuid, pathId } from "../../lib/ids";
import { pagination } from "../../lib/pagination";
import type { ReportBody, ReportTarget, ResolveAction } from "../../schemas/reports";
import type { Actor } from "../shared/actor";
import { auditStatement } from "./audit";
import { type IdempotentRequest, commit, recordStatementFromSql } from "../shared/idempotency";

type ReportRow = typeof reports.$inferSelect;

/** How much of the reported text the queue shows (characters); longer text is cut and ends with "…". */
export const EXCERPT_LENGTH = 200;

/** A report as its reporter sees it (what `POST /reports` answers). */
export function reportView(r: Pick<ReportRow, "id" | "status" | "targetType" | "targetId" | "reason" | "note" | "createdAt" | "updatedAt">) {
  return {
    id: r.id,
    status: r.status,
    target_type: r.targetType,
    target_id: r.targetId,
    reason: r.reason,
    note: r.note,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

/** A report as moderators see it: who filed it and how it was resolved. */
export function moderatedView(r: ReportRow) {
  return {
    ...reportView(r),
    reporter_id: r.reporterId,
    reporter_type: r.reporterType,
    resolution: r.resolution,
    resolved_by: r.resolvedBy,
    resolution_note: r.resolutionNote,
    resolved_at: r.resolvedAt,
  };
}

/**
 * The reported thing, joined to a report row `r` by its type: one LEFT JOIN per kind, each on a primary key.
 * `t_author` is whoever answers for it (the author, owner or creator; the account itself), `t_text` its text
 * (cut in SQL so a 100,000-character segment never leaves D1 whole), `t_page` where the web reader shows it.
 */
const TARGET_JOINS = sql.raw(`
  LEFT JOIN segments s ON r.target_type = 'segment' AND s.id = r.target_id
  LEFT JOIN comments c ON r.target_type = 'comment' AND c.id = r.target_id
  LEFT JOIN stories st ON r.target_type = 'story' AND st.id = r.target_id
  LEFT JOIN branches b ON r.target_type = 'branch' AND b.id = r.target_id
  LEFT JOIN users u ON r.target_type = 'account' AND u.id = r.target_id
  LEFT JOIN bots bt ON r.target_type = 'account' AND bt.id = r.target_id`);

const TARGET_COLUMNS = sql.raw(`
  COALESCE(s.author_id, c.author_id, st.owner_id, b.creator_id, u.id, bt.id, r.target_author_id) AS t_author,
  COALESCE(s.id, c.id, st.id, b.id, u.id, bt.id) IS NULL AS t_gone,
  substr(COALESCE(s.content, c.content, st.title || ': ' || st.background, b.title, u.username, bt.name), 1, ${EXCERPT_LENGTH + 1}) AS t_text,
  CASE r.target_type
    WHEN 'segment' THEN '/branches/' || s.branch_id || '#s-' || s.id
    WHEN 'comment' THEN '/branches/' || c.branch_id || '#c-' || c.id
    WHEN 'story' THEN '/stories/' || st.id
    WHEN 'branch' THEN '/branches/' || b.id
    WHEN 'account' THEN '/bots/' || bt.id
  END AS t_page`);

interface TargetColumns {
  /** Who answers for the target: as it is now, else as it was when reported (the target deleted since). */
  t_author: string | null;
  /** The target no longer exists (1), its author kept by the report. */
  t_gone: number;
  t_text: string | null;
  t_page: string | null;
}

/** The reported text, shortened to `EXCERPT_LENGTH` characters (code points, as SQLite counts them). */
export function excerpt(text: string | null): string | null {
  if (text === null) return null;
  const chars = Array.from(text);
  return chars.length > EXCERPT_LENGTH ? `${chars.slice(0, EXCERPT_LENGTH).join("").trimEnd()}…` : text;
}

/** A report with its target, in one statement (a probe row stands in for a report not yet filed). */
const targetOf = (db: Db, type: ReportTarget, id: string) =>
  rawAll<TargetColumns>(
    db,
    sql`SELECT ${TARGET_COLUMNS} FROM (SELECT ${type} AS target_type, ${id} AS target_id, NULL AS target_author_id) r ${TARGET_JOINS} LIMIT 1`,
  );

/**
 * Files a report, or updates the reporter's open report on the same target (one open report per reporter and
 * target: an upsert on the partial unique index, so concurrent repeats leave one row). `created` is false for an
 * update. The target must exist (404).
 */
export async function fileReport(db: Db, actor: Actor, input: ReportBody, idem?: IdempotentRequest) {
  const what = input.target_type === "account" ? "Account" : `${input.target_type[0].toUpperCase()}${input.target_type.slice(1)}`;
  const targetId = input.target_type === "account" ? accountId(input.target_id) : pathId(input.target_id, what);
  const [target] = await targetOf(db, input.target_type, targetId);
  if (!target?.t_author) throw notFound(what);
  const now = nowIso();
  const row: ReportRow = {
    id: crypto.randomUUID(),
    reporterId: actor.id,
    reporterType: actor.type === "bot" ? "bot" : "human",
    targetType: input.target_type,
    targetId,
    targetAuthorId: target.t_author, // kept, so the report outlives its target
    reason: input.reason,
    note: input.note ?? null,
    status: "open",
    resolution: null,
    resolvedBy: null,
    resolutionNote: null,
    resolvedAt: null,
    createdAt: now,
    updatedAt: now,
  };
  const [[saved]] = await commit(() =>
    db.batch([
      db
        .insert(reports)
        .values(row)
        .onConflictDoUpdate({
          target: [reports.reporterId, reports.targetType, reports.targetId],
          targetWhere: sql`status = 'open'`,
          set: { reason: row.reason, note: row.note, updatedAt: now },
        })
        .returning(),
      ...(idem ? [reportRecord(db, idem, row)] : []),
    ]),
  );
  return { created: saved.id === row.id, report: reportView(saved) };
}

/** The Idempotency-Key's answer, built in the report's own batch: only there is it known whether it was new (201). */
function reportRecord(db: Db, idem: IdempotentRequest, row: ReportRow) {
  return recordStatementFromSql(db, idem, {
    status: sql`CASE WHEN r.id = ${row.id} THEN 201 ELSE 200 END`,
    body: sql`json_object('status', 'success', 'data', json_object('id', r.id, 'status', r.status, 'target_type', r.target_type,
      'target_id', r.target_id, 'reason', r.reason, 'note', r.note, 'created_at', r.created_at, 'updated_at', r.updated_at))`,
    from: sql`FROM reports r WHERE r.reporter_id = ${row.reporterId} AND r.target_type = ${row.targetType} AND r.target_id = ${row.targetId} AND r.status = 'open'`,
  });
}

type ReportWithTarget = ReportRow & TargetColumns & { reporters: number };

/** Every column of a report under drizzle's names, its target's columns, and its target's distinct reporters. */
const QUEUE_COLUMNS = sql.raw(`r.id AS id, r.reporter_id AS reporterId, r.reporter_type AS reporterType, r.target_type AS targetType,
  r.target_id AS targetId, r.target_author_id AS targetAuthorId, r.reason AS reason, r.note AS note, r.status AS status, r.resolution AS resolution,
  r.resolved_by AS resolvedBy, r.resolution_note AS resolutionNote, r.resolved_at AS resolvedAt,
  r.created_at AS createdAt, r.updated_at AS updatedAt,
  (SELECT count(DISTINCT x.reporter_id) FROM reports x WHERE x.target_type = r.target_type AND x.target_id = r.target_id) AS reporters,`);

const queueQuery = (db: Db, where: SQL, order: SQL, limit: number, offset: number) =>
  rawAll<ReportWithTarget>(
    db,
    sql`SELECT ${QUEUE_COLUMNS} ${TARGET_COLUMNS} FROM reports r ${TARGET_JOINS} WHERE ${where} ${order} LIMIT ${limit} OFFSET ${offset}`,
  );

/** A report in the moderators' queue: its target's excerpt, who answers for it, its page, and how many reported it. */
export function queueItem(r: ReportWithTarget) {
  return {
    ...moderatedView(r),
    excerpt: excerpt(r.t_text),
    target_gone: r.t_gone === 1,
    target_author_id: r.t_author,
    target_page: r.t_page,
    reporters_count: r.reporters,
  };
}

export interface QueueFilter {
  status: "open" | "resolved";
  target_type?: ReportTarget;
}

/** The moderators' queue: open reports oldest first (the longest waiting on top), resolved ones newest resolved first. */
export async function listReports(db: Db, filter: QueueFilter, limit: number, offset: number) {
  const where = filter.target_type ? sql`r.status = ${filter.status} AND r.target_type = ${filter.target_type}` : sql`r.status = ${filter.status}`;
  const order = filter.status === "open" ? sql`ORDER BY r.created_at ASC, r.id ASC` : sql`ORDER BY r.resolved_at DESC, r.id DESC`;
  const [rows, [{ total }]] = await db.batch([
    queueQuery(db, where, order, limit, offset),
    rawAll<{ total: number }>(db, sql`SELECT count(*) AS total FROM reports r WHERE ${where}`),
  ]);
  return { reports: rows.map(queueItem), pagination: pagination(limit, offset, total) };
}

/** One report with its target, to act on: 404 when there is none, 409 when it is already resolved. */
export async function openReport(db: Db, id: string) {
  const [report] = isUuid(id) ? await queueQuery(db, sql`r.id = ${id}`, sql``, 1, 0) : [];
  if (!report) throw notFound("Report");
  if (report.status !== "open") {
    throw new ApiError("CONFLICT", `This report was already resolved (${report.resolution})`, {
      resolution: report.resolution,
      resolved_at: report.resolvedAt,
    });
  }
  return report;
}

/** What a resolution sets on a report. */
export interface Resolution {
  action: ResolveAction;
  note: string | null;
  by: Pick<Actor, "id" | "name">;
  at: string;
}

/**
 * The statements that resolve a report, for the resolving action's own batch: the report and every other open
 * report on the same target are resolved with it (one decision answers them all), and the audit log records it.
 * The first aborts the batch (D1 runs it as one transaction) unless the report is still open, so two moderators
 * resolving it at once cannot both act: the one whose batch comes second writes nothing (`abortUnless`).
 */
export function resolutionStatements(db: Db, report: ReportRow, r: Resolution) {
  return [
    rawAll(db, abortUnless(sql`EXISTS (SELECT 1 FROM reports WHERE id = ${report.id} AND status = 'open')`, "resolved meanwhile")),
    rawRun(
      db,
      sql`UPDATE reports SET status = 'resolved', resolution = ${r.action}, resolved_by = ${r.by.id}, resolution_note = ${r.note},
        resolved_at = ${r.at}, updated_at = ${r.at}
      WHERE target_type = ${report.targetType} AND target_id = ${report.targetId} AND status = 'open'`,
    ),
    auditStatement(
      db,
      r.by,
      {
        action: "resolve_report",
        targetType: "report",
        targetId: report.id,
        reason: r.note,
        detail: { resolution: r.action, target_type: report.targetType, target_id: report.targetId, reason: report.reason },
      },
      r.at,
    ),
  ] as const;
}

/** The report as it stands once resolved. */
export const resolvedView = (report: ReportRow, r: Resolution) =>
  moderatedView({ ...report, status: "resolved", resolution: r.action, resolvedBy: r.by.id, resolutionNote: r.note, resolvedAt: r.at, updatedAt: r.at });

/**
 * Hiding is for things with text; an account is suspended instead. A target deleted since it was reported has
 * nothing left to hide: 409, the report left open (its author can still be suspended, or the report dismissed).
 */
export function hideable(report: ReportWithTarget): Exclude<ReportTarget, "account"> {
  if (report.targetType === "account") throw validationError([{ field: "action", issue: "an account cannot be hidden: suspend it, or dismiss the report" }]);
  if (report.t_gone) {
    throw new ApiError("CONFLICT", `The reported ${report.targetType} no longer exists: there is nothing to hide (suspend its author, or dismiss the report)`);
  }
  return report.targetType;
}

/** Who answers for the reported thing: its author (owner, creator), or the reported account itself. */
export function accountBehind(report: ReportWithTarget): string {
  if (!report.t_author) throw notFound("The reported item");
  return report.t_author;
}
