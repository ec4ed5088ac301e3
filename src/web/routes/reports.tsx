import { type Context, Hono } from "hono";
import type { AppEnv } from "../../context";
import { notFound } from "../../lib/errors";
import { callerOf } from "../../middleware/caller";
import { limitsAndIdempotency } from "../../middleware/limits";
import { REPORT_TARGETS, type ReportTarget, reportBody } from "../../schemas/reports";
import { fileReport } from "../../usecases/reports";
import { fieldsOf, labelsFrom, optional, parseWith, showErrorsIn } from "../support/form-errors";
import type { FormState } from "../components/forms";
import { reportHref } from "../components/report";
import { ReportPage } from "../pages/report";
import { absolute, page } from "../support/render";
import { safeNext } from "../support/safe-next";
import { formPost, pageViewer, requireSession } from "../support/session";

/**
 * Reports from the pages: `/report?target_type=…&target_id=…&next=…` is the report form's page and where
 * it posts (Origin check, a session, the API's limits and use case); success is a 303 to the same page saying so.
 * An anonymous visitor is sent to log in and comes back to it.
 */
export const reportRoutes = new Hono<AppEnv>();

/** The target named in the query (a type that is not one is a 404 page: there is no such report form). */
function targetOf(c: Context<AppEnv>): { type: ReportTarget; id: string; back: string } {
  const type = c.req.query("target_type") as ReportTarget;
  if (!REPORT_TARGETS.includes(type)) throw notFound("Page");
  return { type, id: c.req.query("target_id") ?? "", back: safeNext(c.req.query("next")) };
}

const here = (c: Context<AppEnv>) => {
  const { type, id, back } = targetOf(c);
  return reportHref(type, id, back);
};

function reportPage(c: Context<AppEnv>, state: FormState | null = null) {
  const { type, id, back } = targetOf(c);
  const sent = c.req.method === "GET" && c.req.query("sent") === "1";
  const canonical = absolute(c, reportHref(type, id, back));
  return page(c, <ReportPage type={type} id={id} back={back} sent={sent} canonical={canonical} viewer={pageViewer(c)} state={state} />);
}

reportRoutes.get("/report", requireSession(here), (c) => reportPage(c));

reportRoutes.post(
  "/report",
  formPost,
  requireSession(here),
  showErrorsIn(() => "report", labelsFrom({ reason: "Reason", note: "Note", target_type: "What is reported", target_id: "What is reported" }), reportPage),
  limitsAndIdempotency("report"),
  async (c) => {
    const { type, id } = targetOf(c);
    const fields = await fieldsOf(c);
    await fileReport(callerOf(c), parseWith(reportBody, { target_type: type, target_id: id, reason: fields.reason, note: optional(fields.note) }));
    return c.redirect(`${here(c)}&sent=1`, 303);
  },
);
