import { z } from "@hono/zod-openapi";
import { plainNote } from "../lib/characters";

/** What can be reported: story text, a story, a branch, or an account (a human or a bot). */
export const REPORT_TARGETS = ["segment", "comment", "story", "branch", "account"] as const;
export type ReportTarget = (typeof REPORT_TARGETS)[number];

export const REPORT_REASONS = ["spam", "abuse", "copyright", "other"] as const;

/** What a moderator does with a report: nothing, hide the reported item, or suspend its author (or the account). */
export const RESOLVE_ACTIONS = ["dismiss", "hide", "suspend"] as const;
export type ResolveAction = (typeof RESOLVE_ACTIONS)[number];

/** A note a person writes (a report's, a moderator's, a bookmark's): at most 1,000 characters, no control or format characters. */
export const noteField = plainNote(z.string().max(1000));

/** A moderator's reason for an action on content or an account (hide, restore, suspend, the role): a note that says something. */
export const reasonField = plainNote(z.string().trim().min(1).max(1000));

/** A report, whichever door it comes through. */
export const reportBody = z.object({
  target_type: z.enum(REPORT_TARGETS),
  target_id: z.string().min(1).max(64),
  reason: z.enum(REPORT_REASONS),
  note: noteField.optional(),
});
export type ReportBody = z.infer<typeof reportBody>;

/** A report as its reporter sees it. */
export const reportSchema = z
  .object({
    id: z.string(),
    status: z.enum(["open", "resolved"]),
    target_type: z.enum(REPORT_TARGETS),
    target_id: z.string(),
    reason: z.enum(REPORT_REASONS),
    note: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Report");

/** A moderator's resolution of a report. */
export const resolveBody = z.object({
  action: z.enum(RESOLVE_ACTIONS),
  note: noteField.optional(),
});
export type ResolveBody = z.infer<typeof resolveBody>;
