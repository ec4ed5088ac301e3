import { againstRule } from "../../domain/shared/length";
import { validationError } from "../../lib/errors";
import { lengthUnit } from "../../lib/length-rule";
import { type CreateStoryBody, createStoryBody } from "../../schemas/stories";
import { type FieldProblem, type Fields, checkWith, optional } from "./form-errors";
import { labelsOf } from "./label-form";

/**
 * The new-story form as a person's step: the spec's rule (a starter and 3 to 5 initial segments within the story's
 * length rule) checked with the API's own schema and length rule, but every field that is wrong named at once (the
 * API answers the first segment out of its rule, as the spec says; a person fixing a form wants them all).
 */

/** Segments 1–3 are required, 4 and 5 optional (a story opens with 3 to 5). */
export const INITIAL_SEGMENT_FIELDS = [1, 2, 3, 4, 5].map((n) => ({ name: `segment_${n}`, label: `Segment ${n}`, required: n <= 3 }));

/**
 * The length rule the form suggests, by what the language counts: lengths a person writing by hand can meet for a
 * story's opening segments (a paragraph or two). The API's own defaults (150 to 500) are the spec's, for bots.
 */
export const FORM_LENGTH_DEFAULTS = {
  words: { min: 30, max: 300 },
  characters: { min: 50, max: 500 },
} as const;

/** The suggested rule for a language: words, or characters for zh, ja and ko. */
export const formDefaultsFor = (language: string) => FORM_LENGTH_DEFAULTS[lengthUnit(language) === "characters" ? "characters" : "words"];

/** The story form's segment fields that were filled in, in order (blank optional ones are skipped). */
export const filledSegments = (fields: Fields) => INITIAL_SEGMENT_FIELDS.filter((f) => fields[f.name]?.trim());

/** The form's fields in the order the page shows them: the problems are listed in it. */
const FIELD_ORDER = ["title", "language", "background", "style_rules", "tags", "rating", "warnings", "min_length", "max_length", "starter", "initial_segments"];
const place = (field: string) => {
  const [name, index] = field.split(".");
  const at = FIELD_ORDER.indexOf(name);
  return (at < 0 ? FIELD_ORDER.length : at) * 10 + (index === undefined ? 0 : Number(index) + 1);
};

/** The form's fields as the API's story body takes them. */
function bodyOf(fields: Fields) {
  return {
    title: fields.title,
    background: fields.background,
    style_rules: optional(fields.style_rules) ?? null,
    language: fields.language,
    min_length: Number(fields.min_length),
    max_length: Number(fields.max_length),
    starter: fields.starter,
    initial_segments: filledSegments(fields).map((f) => fields[f.name]),
    ...labelsOf(fields),
  };
}

/** The schema's words for a rule that is the wrong way round name its field; the form's names its label. */
const inFormWords = (p: FieldProblem): FieldProblem =>
  p.field === "min_length" && p.issue === "must not exceed max_length" ? { ...p, issue: "must not be more than the longest segment" } : p;

/**
 * A rule the wrong way round, when the schema stopped before saying so (its check of the whole body runs only when
 * every field passed): named with the rest.
 */
function ruleProblems(body: ReturnType<typeof bodyOf>, named: FieldProblem[]): FieldProblem[] {
  const { min_length: min, max_length: max } = body;
  if (named.some((p) => p.field === "min_length") || !(Number.isInteger(min) && Number.isInteger(max) && min > max)) return [];
  return [{ field: "min_length", issue: "must not be more than the longest segment" }];
}

/** The form's fields that make the length rule. */
const RULE_FIELDS = new Set(["language", "min_length", "max_length"]);

/**
 * Each filled segment outside the length rule (as the server counts it), when the rule's own fields are sound: a
 * rule that is itself wrong (not a number, min above max, not a language) is named on its own fields instead.
 */
function lengthProblems(body: ReturnType<typeof bodyOf>, named: FieldProblem[]): FieldProblem[] {
  const { min_length: minLength, max_length: maxLength } = body;
  const sound = !named.some((p) => RULE_FIELDS.has(p.field)) && Number.isInteger(minLength) && Number.isInteger(maxLength) && minLength <= maxLength;
  if (!sound) return [];
  const rules = { language: body.language ?? "zh", minLength, maxLength };
  const unit = (n: number) => lengthUnit(rules.language, n);
  return body.initial_segments.flatMap((content, i) => {
    const field = `initial_segments.${i}`;
    if (named.some((p) => p.field === field)) return [];
    const { length, missing, excess } = againstRule(content, rules);
    if (missing) return [{ field, issue: `is ${length} ${unit(length)}; the shortest allowed is ${minLength}: add ${missing} more ${unit(missing)}` }];
    if (excess) return [{ field, issue: `is ${length} ${unit(length)}; the longest allowed is ${maxLength}: remove ${excess} ${unit(excess)}` }];
    return [];
  });
}

/**
 * The story body of a new-story form, or one 400 `VALIDATION_ERROR` naming every bad field in the form's order: the
 * schema's complaints and each segment too short or too long for the story's rule. The use case checks the lengths
 * again (the server stays the judge, whichever door).
 */
export function storyFormBody(fields: Fields): CreateStoryBody {
  const body = bodyOf(fields);
  const { data, problems } = checkWith(createStoryBody, body);
  const all = [...problems.map(inFormWords), ...ruleProblems(body, problems), ...lengthProblems(body, problems)];
  if (all.length) throw validationError(all.sort((a, b) => place(a.field) - place(b.field)));
  return data as CreateStoryBody;
}
