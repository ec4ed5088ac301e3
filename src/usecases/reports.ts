import * as domain from "../domain/moderation/reports";
import { nowIso } from "../db/client";
import type { ReportBody, ResolveBody } from "../schemas/reports";
import type { Caller } from "./caller";
import { refuseOwnCase } from "../domain/moderation/moderation";
import { hideItem } from "./moderation";
import { suspendAccount } from "./admin-accounts";

/** Files a report (or updates the caller's open one on the same target: `created` false). */
export const fileReport = (caller: Caller, body: ReportBody) => domain.fileReport(caller.db, caller.actor, body, caller.idempotency);

/**
 * A moderator resolves an open report: 'dismiss' changes nothing else; 'hide' hides the reported item; 'suspend'
 * suspends the account behind it (the content's author, or the reported account). Each is one D1 batch: the
 * action, its audit row, and the report (with every other open report on the same target) resolved with it.
 */
export async function resolveReport(caller: Caller, reportId: string, body: ResolveBody) {
  const report = await domain.openReport(caller.db, reportId);
  refuseOwnCase(caller.actor, report.t_author, "resolve a report about yourself or your own content");
  const resolution: domain.Resolution = { action: body.action, note: body.note?.trim() || null, by: caller.actor, at: nowIso() };
  const statements = domain.resolutionStatements(caller.db, report, resolution);
  const reason = resolution.note ?? `Reported for ${report.reason}`;
  try {
    if (body.action === "dismiss") await caller.db.batch(statements);
    else if (body.action === "hide") await hideItem(caller, { type: domain.hideable(report), id: report.targetId }, reason, [...statements]);
    else await suspendAccount(caller, domain.accountBehind(report), { reason, until: null }, [...statements]);
  } catch (err) {
    // Resolved by someone else meanwhile (the batch's first statement refused it): their resolution, as a 409.
    await domain.openReport(caller.db, reportId);
    throw err;
  }
  return domain.resolvedView(report, resolution);
}
