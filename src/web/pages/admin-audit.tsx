import type { listAudit } from "../../domain/moderation/audit";
import { AdminNav } from "../components/admin-nav";
import { Layout, Pager, plural, type Viewer, When } from "../components/layout";

type Audit = Awaited<ReturnType<typeof listAudit>>;

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
