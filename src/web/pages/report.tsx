import type { ReportTarget } from "../../schemas/reports";
import { type FormState, PostForm } from "../components/forms";
import { Layout, type Viewer } from "../components/layout";
import { ReportFields, reportHref } from "../components/report";

/** The report form on its own page (an error comes back here), or the thanks once it is sent. */
export function ReportPage({
  type,
  id,
  back,
  sent,
  canonical,
  viewer,
  state,
}: {
  type: ReportTarget;
  id: string;
  back: string;
  sent: boolean;
  canonical: string;
  viewer: Viewer | null;
  state: FormState | null;
}) {
  const title = sent ? "Report sent" : `Report this ${type}`;
  return (
    <Layout title={title} canonical={canonical} viewer={viewer} error={!!state}>
      <h1>{title}</h1>
      {sent ? (
        <p role="status">Thank you: the moderators will look at it. While it is open, reporting it again changes your reason and note.</p>
      ) : (
        <PostForm action={reportHref(type, id, back)} state={state} id="report-form">
          <p class="meta">Tell the moderators what is wrong with this {type}. They see your account with the report; the author does not.</p>
          <ReportFields id="report" state={state} />
          <button type="submit">Send report</button>
        </PostForm>
      )}
      <p>
        <a href={back}>Back to the page</a>
      </p>
    </Layout>
  );
}
