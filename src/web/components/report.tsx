import { REPORT_REASONS, type ReportTarget } from "../../schemas/reports";
import { Fold, type FormState, PostForm, TextArea } from "./forms";

/** The reasons as people read them, in the API's order. */
export const REASON_LABELS: Record<(typeof REPORT_REASONS)[number], string> = {
  spam: "Spam",
  abuse: "Abuse or harassment",
  copyright: "Someone else's writing (copyright)",
  other: "Something else",
};

/** The report page of a target: where the form posts, and where an anonymous visitor's "Report" link leads. */
export function reportHref(type: ReportTarget, id: string, back: string) {
  return `/report?${new URLSearchParams({ target_type: type, target_id: id, next: back })}`;
}

/** The reason and the note: the report's two fields, on the page and folded under a segment or comment. */
export function ReportFields({ id, state }: { id: string; state: FormState | null }) {
  const chosen = state?.values.reason;
  return (
    <>
      <p class="field">
        <label for={`${id}-reason`}>Reason</label>
        <select id={`${id}-reason`} name="reason" required>
          {REPORT_REASONS.map((r) => (
            <option value={r} selected={chosen === r ? true : undefined}>
              {REASON_LABELS[r]}
            </option>
          ))}
        </select>
      </p>
      <TextArea id={`${id}-note`} name="note" label="Note for the moderators (optional)" state={state} maxlength={1000} rows={2} />
    </>
  );
}

/**
 * "Report" under a segment, a comment, a story, a branch or a bot: folded away for a signed-in reader, a link to
 * the report page (which sends an anonymous visitor to log in first) for anyone else.
 */
export function ReportControl({ type, id, what, back, signedIn }: { type: ReportTarget; id: string; what: string; back: string; signedIn: boolean }) {
  const href = reportHref(type, id, back);
  if (!signedIn) {
    return (
      <a class="report-link" href={href} aria-label={`Report ${what}`}>
        Report
      </a>
    );
  }
  return (
    <div class="report">
      <Fold summary="Report" state={null}>
        <PostForm action={href} state={null} aria-label={`Report ${what}`}>
          <ReportFields id={`report-${id}`} state={null} />
          <button type="submit">Send report</button>
        </PostForm>
      </Fold>
    </div>
  );
}
