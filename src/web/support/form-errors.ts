import type { Context, MiddlewareHandler } from "hono";
import type { ZodError, ZodType } from "zod";
import type { AppEnv } from "../../context";
import { ApiError, type ErrorStatus, apiErrorIn, validationError } from "../../lib/errors";
import { fieldIssues } from "../../lib/validation";
import type { FormState } from "../components/forms";

export type Fields = Record<string, string>;

/** A field left blank (or only spaces) is absent, as an API body would leave it out. */
export const optional = (value: string | undefined) => (value?.trim() ? value : undefined);

/** A form's fields as sent (text fields only; a file field is ignored). */
export async function fieldsOf(c: Context<AppEnv>): Promise<Fields> {
  const body = await c.req.parseBody().catch(() => {
    throw new ApiError("VALIDATION_ERROR", "This form's body could not be read: send it from its page.");
  });
  return Object.fromEntries(Object.entries(body).filter((e): e is [string, string] => typeof e[1] === "string"));
}

type Issue = ZodError["issues"][number];

/** A schema's complaint as a person reads it (the API keeps zod's own wording, which its clients may match). */
function friendly(issue: Issue, fallback: string): string {
  const what = "origin" in issue ? issue.origin : undefined;
  if (issue.code === "too_small" && what === "string") return Number(issue.minimum) <= 1 ? "is required" : `needs at least ${issue.minimum} characters`;
  if (issue.code === "too_big" && what === "string") return `may have at most ${issue.maximum} characters`;
  if (issue.code === "too_small" && what === "number") return `must be at least ${issue.minimum}`;
  if (issue.code === "too_small" && what === "array") return `need at least ${issue.minimum} filled in`;
  if (issue.code === "too_big" && what === "number") return `must be at most ${issue.maximum}`;
  if (issue.code === "invalid_format" && issue.format === "email") return "must be an email address";
  if (issue.code === "invalid_type" && issue.expected === "number") return "must be a number";
  return fallback;
}

/** A bad field as a form names it: its path (`initial_segments.1`) and what is wrong, in words. */
export type FieldProblem = { field: string; issue: string };

/** A form checked with the API's own body schema: the data, or every bad field in a person's words. */
export function checkWith<T>(schema: ZodType<T>, input: unknown): { data: T; problems: [] } | { data: null; problems: FieldProblem[] } {
  const result = schema.safeParse(input);
  if (result.success) return { data: result.data, problems: [] };
  const fields = fieldIssues(result.error);
  return { data: null, problems: result.error.issues.map((issue, i) => ({ field: fields[i].field, issue: friendly(issue, fields[i].issue) })) };
}

/** Checks a form with the API's own body schema: the same rules, the same 400 naming each bad field. */
export function parseWith<T>(schema: ZodType<T>, input: unknown): T {
  const { data, problems } = checkWith(schema, input);
  if (problems.length) throw validationError(problems);
  return data as T;
}

/** Names a field as its form (with these values) labels it: `initial_segments.1`, or a domain error's `{field, index}`. */
export type Labels = (field: string, index: number | undefined, values: Fields) => string;

/** What a limit's refusal says before the time: "You can write again" on a writing form, else "You can try again". */
export type Again = "You can write again" | "You can try again";

const MINUTE_MS = 60_000;

/**
 * The error as a person reads it: the domain's sentence and suggestion, and each bad field by its label. A limit's
 * refusal says when, not a count of seconds: the limit, and the minute the person may try again (rounded up, so
 * trying at the minute shown succeeds), which the page says in the reader's clock.
 */
export function inWords(
  err: ApiError,
  label: (field: string, index?: number) => string,
  again: Again = "You can try again",
): Pick<FormState, "message" | "problems" | "again"> {
  const details = err.details ?? {};
  if (err.status === 429 && typeof details.retry_after === "number" && typeof details.limit === "string") {
    const at = new Date(Math.ceil((Date.now() + details.retry_after * 1000) / MINUTE_MS) * MINUTE_MS).toISOString();
    return { message: `Limit reached: ${details.limit}.`, problems: [], again: { at, what: again } };
  }
  if (err.code === "VALIDATION_ERROR" && Array.isArray(details.fields)) {
    const fields = details.fields as { field: string; issue: string }[];
    return { message: "Please check these fields:", problems: fields.map((f) => `${label(f.field)}: ${f.issue}`) };
  }
  const where = typeof details.field === "string" ? `${label(details.field, details.index as number | undefined)}: ` : "";
  const suggestion = typeof details.suggestion === "string" ? ` ${details.suggestion}` : "";
  const sentence = /[.!?]$/.test(err.message) ? err.message : `${err.message}.`;
  return { message: `${where}${sentence}${suggestion}`, problems: [] };
}

/**
 * Around a form's handler (after the Origin check, which answers its 403 page itself): an error the person can fix
 * (any 4xx) shows the form's page again with the error in words inside the form and what they typed, under the
 * error's own status (and headers, e.g. Retry-After). Anything else is left to the pages' error handler.
 */
export function showErrorsIn(
  formOf: (c: Context<AppEnv>, fields: Fields) => string,
  label: Labels,
  rerender: (c: Context<AppEnv>, state: FormState) => Response | Promise<Response>,
  again?: Again,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const err = apiErrorIn(c.error);
    if (!err || err.status >= 500) return;
    const values = await fieldsOf(c).catch((): Fields => ({}));
    delete values.password; // never sent back
    const words = inWords(err, (field, index) => label(field, index, values), again);
    const page = await rerender(c, { form: formOf(c, values), values, ...words });
    c.error = undefined;
    c.res = undefined as unknown as Response; // Hono would otherwise copy the error page's headers over
    c.res = new Response(page.body, { status: err.status satisfies ErrorStatus, headers: page.headers });
    for (const [name, value] of Object.entries(err.headers ?? {})) c.res.headers.set(name, value);
    c.set("errorCode", err.code);
  };
}

/** Labels from a plain map, falling back to the field's own name. */
export const labelsFrom =
  (map: Record<string, string>): Labels =>
  (field) =>
    map[field] ?? field;
