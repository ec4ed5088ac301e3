import type { listReports } from "../../domain/moderation/reports";
import { REPORT_TARGETS } from "../../schemas/reports";
import { AdminNav } from "../components/admin-nav";
import { type FormState, PostForm, stateOf, TextArea } from "../components/forms";
import { Layout, Pager, plural, type Viewer, When } from "../components/layout";
import { REASON_LABELS } from "../components/report";
import { type QueueView, queueHref } from "../support/admin-queue";

type Queue = Awaited<ReturnType<typeof listReports>>;
type Item = Queue["reports"][number];

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
