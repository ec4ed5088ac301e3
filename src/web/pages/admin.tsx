import type { listAudit } from "../../domain/moderation/audit";
import type { listReports } from "../../domain/moderation/reports";
import { REPORT_TARGETS } from "../../schemas/reports";
import { type FormState, PostForm, stateOf, TextArea } from "../components/forms";
import { Layout, Pager, plural, type Viewer, When } from "../components/layout";
import { REASON_LABELS } from "../components/report";

type Queue = Awaited<ReturnType<typeof listReports>>;
type Item = Queue["reports"][number];
type Audit = Awaited<ReturnType<typeof listAudit>>;

/** Where a moderator is: the queue (open or resolved, one kind of target or all) and its page. */
export interface QueueView {
  status: "open" | "resolved";
  targetType: (typeof REPORT_TARGETS)[number] | null;
  page: number;
}

export const queueHref = (v: Partial<QueueView>) => {
  const q = new URLSearchParams();
  if (v.status === "resolved") q.set("status", "resolved");
  if (v.targetType) q.set("target_type", v.targetType);
  if (v.page && v.page > 1) q.set("page", String(v.page));
  const s = q.toString();
  return s ? `/admin?${s}` : "/admin";
};

function AdminNav({ current }: { current: "reports" | "audit" }) {
  return (
    <nav class="admin-nav" aria-label="Moderation">
      <ul>
        <li>{current === "reports" ? <strong aria-current="page">Reports</strong> : <a href="/admin">Reports</a>}</li>
        <li>{current === "audit" ? <strong aria-current="page">Audit log</strong> : <a href="/admin/audit">Audit log</a>}</li>
      </ul>
    </nav>
  );
}

/** One click per action, with the reason every action records (no hide for a target deleted since: nothing to hide). */
function Actions({ r, state, back }: { r: Item; state: FormState | null; back: string }) {
  const form = stateOf(state, `resolve-${r.id}`);
  return (
    <PostForm action={`/admin/reports/${r.id}/resolve?next=${encodeURIComponent(back)}`} state={form} class="resolve">
      <TextArea id={`resolve-${r.id}`} name="note" label="Reason (recorded in the audit log)" state={form} maxlength={1000} rows={2} />
      <p class="buttons">
        <button type="submit" name="action" value="dismiss">
          Dismiss
        </button>
        {r.target_type === "account" || r.target_gone ? null : (
          <button type="submit" name="action" value="hide">
            Hide the {r.target_type}
          </button>
        )}
        <button type="submit" name="action" value="suspend">
          {r.target_type === "account" ? "Suspend the account" : "Suspend the author"}
        </button>
      </p>
    </PostForm>
  );
}

function ReportItem({ r, state, back }: { r: Item; state: FormState | null; back: string }) {
  return (
    <article class="report-item" id={`r-${r.id}`}>
      <header>
        <span class="badge">{r.target_type}</span> <strong>{REASON_LABELS[r.reason]}</strong>{" "}
        <span class="meta">
          · {plural(r.reporters_count, "reporter")} · reported by {r.reporter_type} <code>{r.reporter_id}</code> · <When iso={r.created_at} />
        </span>
      </header>
      {r.excerpt === null ? <p class="meta">The reported {r.target_type} no longer exists.</p> : <blockquote class="excerpt">{r.excerpt}</blockquote>}
      {r.note ? <p class="note">Reporter's note: {r.note}</p> : null}
      {r.target_page ? (
        <p class="meta">
          <a href={r.target_page}>See it in place</a>
        </p>
      ) : null}
      {r.status === "open" ? (
        <Actions r={r} state={state} back={back} />
      ) : (
        <p class="meta">
          Resolved: <strong>{r.resolution}</strong> by <code>{r.resolved_by}</code> {r.resolved_at ? <When iso={r.resolved_at} /> : null}
          {r.resolution_note ? <> · “{r.resolution_note}”</> : null}
        </p>
      )}
    </article>
  );
}

/** The report queue: open reports oldest first, each with the reported text and the actions. */
export function AdminReportsPage({
  data,
  view,
  canonical,
  viewer,
  state,
}: {
  data: Queue;
  view: QueueView;
  canonical: string;
  viewer: Viewer | null;
  state: FormState | null;
}) {
  const back = queueHref(view);
  const heading = view.status === "open" ? "Open reports" : "Resolved reports";
  const unclaimed = state && !data.reports.some((r) => state.form === `resolve-${r.id}`) ? state : null;
  return (
    <Layout title={heading} canonical={canonical} viewer={viewer} error={!!state}>
      <AdminNav current="reports" />
      <h1>{heading}</h1>
      {unclaimed ? (
        <div class="form-error" role="alert">
          <p>{unclaimed.message}</p>
        </div>
      ) : null}
      <p class="meta">
        {plural(data.pagination.total, "report")} · {view.status === "open" ? "oldest first" : "newest resolved first"} ·{" "}
        {view.status === "open" ? (
          <a href={queueHref({ ...view, status: "resolved", page: 1 })}>resolved</a>
        ) : (
          <a href={queueHref({ ...view, status: "open", page: 1 })}>open</a>
        )}
      </p>
      <nav class="filters" aria-label="Kinds of target">
        <ul>
          <li>{view.targetType ? <a href={queueHref({ ...view, targetType: null, page: 1 })}>all</a> : <strong>all</strong>}</li>
          {REPORT_TARGETS.map((t) => (
            <li>{view.targetType === t ? <strong>{t}</strong> : <a href={queueHref({ ...view, targetType: t, page: 1 })}>{t}</a>}</li>
          ))}
        </ul>
      </nav>
      {data.reports.length ? (
        <ol class="report-queue">
          {data.reports.map((r) => (
            <li>
              <ReportItem r={r} state={state} back={back} />
            </li>
          ))}
        </ol>
      ) : (
        <p>Nothing here.</p>
      )}
      {view.page > 1 || data.pagination.has_more ? (
        <Pager page={view.page} hasMore={data.pagination.has_more} href={(n) => queueHref({ ...view, page: n })} />
      ) : null}
    </Layout>
  );
}

/** The audit log, newest first: who did what to which target, why, and when. */
export function AdminAuditPage({ data, page, canonical, viewer }: { data: Audit; page: number; canonical: string; viewer: Viewer | null }) {
  return (
    <Layout title="Audit log" canonical={canonical} viewer={viewer}>
      <AdminNav current="audit" />
      <h1>Audit log</h1>
      <p class="meta">{plural(data.pagination.total, "action")} · newest first · append-only</p>
      {data.entries.length ? (
        <table class="audit">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Target</th>
              <th scope="col">Reason</th>
            </tr>
          </thead>
          <tbody>
            {data.entries.map((e) => (
              <tr>
                <td>
                  <When iso={e.created_at} />
                </td>
                <td>{e.actor_name}</td>
                <td>
                  {e.action}
                  {e.detail && typeof e.detail.resolution === "string" ? ` (${e.detail.resolution})` : null}
                </td>
                <td>
                  {e.target_type} <code>{e.target_id}</code>
                </td>
                <td>{e.reason ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>No moderation actions yet.</p>
      )}
      {page > 1 || data.pagination.has_more ? (
        <Pager page={page} hasMore={data.pagination.has_more} href={(n) => (n > 1 ? `/admin/audit?page=${n}` : "/admin/audit")} />
      ) : null}
    </Layout>
  );
}
