import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { AppEnv } from "../../context";
import { listAudit } from "../../domain/moderation/audit";
import { listReports } from "../../domain/moderation/reports";
import { apiErrorIn, notFound } from "../../lib/errors";
import { pathId } from "../../lib/ids";
import { callerOf } from "../../middleware/caller";
import { moderatorsOnly } from "../../middleware/moderators";
import { REPORT_TARGETS, type ReportTarget, resolveBody } from "../../schemas/reports";
import { resolveReport } from "../../usecases/reports";
import { AdminAuditPage } from "../pages/admin-audit";
import { AdminReportsPage } from "../pages/admin-reports";
import { type QueueView, queueHref } from "../support/admin-queue";
import { fieldsOf, labelsFrom, optional, parseWith, showErrorsIn } from "../support/form-errors";
import type { FormState } from "../components/forms";
import { absolute, page } from "../support/render";
import { safeNext } from "../support/safe-next";
import { formPost, pageViewer, viewerOf } from "../support/session";

/** Reports and audit entries per page. */
const PER_PAGE = 50;
const MAX_PAGE = 1000;

/**
 * The moderators' pages: the report queue with one-click actions, and the audit log. Anyone else, signed
 * in or not, gets the same 404 page as an address that does not exist: the pages do not say they are here.
 */
export const adminRoutes = new Hono<AppEnv>();

const notHere = () => notFound("Page");

const forbidden = (err: unknown) => apiErrorIn(err)?.code === "FORBIDDEN";

/**
 * A signed-in moderator or admin (the API's own `moderatorsOnly`), else 404. A session's role is read with its
 * standing in the page's first D1 trip, so a refusal may come from the page itself (`c.error`): the same 404.
 */
const moderatorPages: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!viewerOf(c)) throw notHere();
  try {
    await moderatorsOnly(c, async () => {});
  } catch (err) {
    throw forbidden(err) ? notHere() : err;
  }
  await next();
  if (c.get("standing")?.refused && forbidden(c.error)) throw notHere();
};

adminRoutes.use("/admin", moderatorPages);
adminRoutes.use("/admin/*", moderatorPages);

const pageNo = (value: string | null | undefined) => {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, MAX_PAGE) : 1;
};

/** The queue a query asks for (unknown values fall back to the open queue, all kinds, page 1). */
function viewOf(q: URLSearchParams): QueueView {
  const type = q.get("target_type") as ReportTarget | null;
  return {
    status: q.get("status") === "resolved" ? "resolved" : "open",
    targetType: type && REPORT_TARGETS.includes(type) ? type : null,
    page: pageNo(q.get("page")),
  };
}

async function queuePage(c: Context<AppEnv>, view: QueueView, state: FormState | null = null) {
  const data = await listReports(c.get("db"), { status: view.status, target_type: view.targetType ?? undefined }, PER_PAGE, (view.page - 1) * PER_PAGE);
  return page(c, <AdminReportsPage data={data} view={view} canonical={absolute(c, queueHref(view))} viewer={pageViewer(c)} state={state} />);
}

/** Where a resolve form goes back to: the queue it was sent from. */
const backOf = (c: Context<AppEnv>) => {
  const next = safeNext(c.req.query("next"));
  return next.startsWith("/admin") ? next : "/admin";
};

adminRoutes.get("/admin", (c) => queuePage(c, viewOf(new URL(c.req.url).searchParams)));

adminRoutes.get("/admin/audit", async (c) => {
  const n = pageNo(c.req.query("page"));
  const data = await listAudit(c.get("db"), {}, PER_PAGE, (n - 1) * PER_PAGE);
  return page(c, <AdminAuditPage data={data} page={n} canonical={absolute(c, n > 1 ? `/admin/audit?page=${n}` : "/admin/audit")} viewer={pageViewer(c)} />);
});

adminRoutes.post(
  "/admin/reports/:report_id/resolve",
  formPost,
  showErrorsIn(
    (c) => `resolve-${c.req.param("report_id")}`,
    labelsFrom({ action: "Action", note: "Reason" }),
    (c, state) => queuePage(c, viewOf(new URL(backOf(c), "http://x").searchParams), state),
  ),
  async (c) => {
    const fields = await fieldsOf(c);
    const body = parseWith(resolveBody, { action: fields.action, note: optional(fields.note) });
    await resolveReport(callerOf(c), pathId(c.req.param("report_id"), "Report"), body);
    return c.redirect(backOf(c), 303);
  },
);
