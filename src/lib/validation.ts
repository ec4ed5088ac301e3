import type { ZodError } from "zod";
import { type FieldIssue, validationError } from "./errors";

function describe(issue: ZodError["issues"][number]): string {
  if (issue.code === "invalid_type" && /received undefined/.test(issue.message)) return "is required";
  if (issue.code === "unrecognized_keys") return `unknown field(s): ${issue.keys.join(", ")}`;
  return issue.message;
}

export function fieldIssues(error: ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.map(String).join(".") : "(body)",
    issue: describe(issue),
  }));
}

/** The one hook every route uses: any zod failure becomes 400 VALIDATION_ERROR naming each bad field. */
export function defaultHook(result: { success: boolean; error?: unknown }): void {
  if (!result.success) throw validationError(fieldIssues(result.error as ZodError));
}
