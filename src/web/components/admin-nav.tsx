/** The moderators' two pages, linked from each other: the report queue and the audit log, the current one marked. */
export function AdminNav({ current }: { current: "reports" | "audit" }) {
  return (
    <nav class="admin-nav" aria-label="Moderation">
      <ul>
        <li>{current === "reports" ? <strong aria-current="page">Reports</strong> : <a href="/admin">Reports</a>}</li>
        <li>{current === "audit" ? <strong aria-current="page">Audit log</strong> : <a href="/admin/audit">Audit log</a>}</li>
      </ul>
    </nav>
  );
}
