import type { Child } from "hono/jsx";
import { lengthUnit } from "../../lib/length-rule";
import { LocalTime } from "./layout";

/**
 * A form that came back with an error: which form (its key), the error in words, and what the person had typed,
 * so the page shows it again in place, next to the error.
 */
export interface FormState {
  form: string;
  message: string;
  problems: string[];
  values: Record<string, string>;
  /** A limit refused it: when the person may try again (ISO, to the minute), said in their own clock. */
  again?: { at: string; what: string };
}

/** The state of `form` if the error is its own, else none (every other form on the page starts empty). */
export const stateOf = (state: FormState | null | undefined, form: string) => (state?.form === form ? state : null);

const typed = (state: FormState | null, field: string) => state?.values[field] ?? "";

/** The error, in words, at the top of its form: a live region, so a screen reader announces it. */
export function FormError({ state }: { state: FormState | null }) {
  if (!state) return null;
  return (
    <div class="form-error" role="alert" tabindex={-1}>
      <p>
        {state.message}
        {state.again ? (
          <>
            {" "}
            {state.again.what} at <LocalTime iso={state.again.at} />.
          </>
        ) : null}
      </p>
      {state.problems.length ? (
        <ul>
          {state.problems.map((p) => (
            <li>{p}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

interface FieldProps {
  id: string;
  name: string;
  label: string;
  state: FormState | null;
  hint?: Child;
}

/** The ids a field's description is read from (its hint, its counter), for aria-describedby. */
const describedBy = (...ids: (string | false | undefined)[]) => ids.filter(Boolean).join(" ") || undefined;

/** A field's hint, which its field names as its description. */
const Hint = ({ id, hint }: { id: string; hint?: Child }) =>
  hint ? (
    <small class="hint" id={`${id}-hint`}>
      {hint}
    </small>
  ) : null;

/** A labelled one-line input. */
export function Input({ id, name, label, state, hint, type = "text", ...attrs }: FieldProps & { type?: string } & Record<string, unknown>) {
  return (
    <p class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        type={type}
        value={type === "password" ? "" : typed(state, name)}
        aria-describedby={describedBy(hint ? `${id}-hint` : undefined)}
        {...attrs}
      />
      <Hint id={id} hint={hint} />
    </p>
  );
}

/** A length rule a text area is counted under; `fromForm`: its form's own language and length fields set it (new story). */
export interface LengthOf {
  language: string;
  min: number;
  max: number;
  fromForm?: boolean;
}

/**
 * A labelled text area; with `length` it shows the story's length rule and, with the page's script, a live count
 * (under the rule its data attributes carry, or, `fromForm`, the one its form's fields say as they change).
 */
export function TextArea({ id, name, label, state, hint, length, ...attrs }: FieldProps & { length?: LengthOf } & Record<string, unknown>) {
  const counter = length ? `${id}-count` : undefined;
  const own = length && !length.fromForm ? length : undefined;
  return (
    <p class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        name={name}
        aria-describedby={describedBy(counter, hint ? `${id}-hint` : undefined)}
        data-count={counter}
        data-language={own?.language}
        data-min={own ? String(own.min) : undefined}
        data-max={own ? String(own.max) : undefined}
        {...attrs}
      >
        {typed(state, name)}
      </textarea>
      {length ? (
        <output id={counter} class="hint" for={id} aria-live="off">
          {`Length: ${length.min}–${length.max} ${lengthUnit(length.language)}`}
        </output>
      ) : null}
      <Hint id={id} hint={hint} />
    </p>
  );
}

/** A POST form with its error on top (Origin-checked on arrival, src/web/support/session.ts). */
export function PostForm({ action, state, children, ...attrs }: { action: string; state: FormState | null; children?: Child } & Record<string, unknown>) {
  return (
    <form method="post" action={action} {...attrs}>
      <FormError state={state} />
      {children}
    </form>
  );
}

/** Up and down votes on one target, as two buttons of one form; `mine` (1 or -1) shows as the pressed one. */
export function VoteButtons({ action, what, state, mine }: { action: string; what: string; state: FormState | null; mine?: number }) {
  return (
    <PostForm action={action} state={state} class="vote">
      <button type="submit" name="vote" value="1" aria-label={`Vote ${what} up`} aria-pressed={mine === 1 ? "true" : "false"} title="Vote up">
        ▲
      </button>
      <button type="submit" name="vote" value="-1" aria-label={`Vote ${what} down`} aria-pressed={mine === -1 ? "true" : "false"} title="Vote down">
        ▼
      </button>
    </PostForm>
  );
}

/** A form folded away until opened (reply, fork): open when it came back with an error. */
export function Fold({ summary, state, children }: { summary: string; state: FormState | null; children?: Child }) {
  return (
    <details class="fold" open={state ? true : undefined}>
      <summary>{summary}</summary>
      {children}
    </details>
  );
}
