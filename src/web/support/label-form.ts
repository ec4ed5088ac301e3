import { CONTENT_WARNINGS } from "../../config";
import type { Fields } from "./form-errors";

/** A story's labels (tags, rating, warnings) as the new-story and edit forms send and show them. */

/** Tags as typed in one field: split at commas (the Chinese and Japanese ones too), blanks dropped. */
export const splitTags = (text: string | undefined) =>
  (text ?? "")
    .split(/[,，、]/u)
    .map((t) => t.trim())
    .filter(Boolean);

/** A warning's checkbox in a form. */
export const warningField = (w: string) => `warning_${w}`;

/** The labels a form sent, as a story body takes them (checked by its schema). */
export const labelsOf = (fields: Fields) => ({
  tags: splitTags(fields.tags),
  rating: fields.rating,
  warnings: CONTENT_WARNINGS.filter((w) => fields[warningField(w)]),
});

/** A form's fields as the labels of a story fill them (the edit form's first showing). */
export const labelValues = (story: { tags: string[]; rating: string; warnings: string[] }): Fields => ({
  tags: story.tags.join(", "),
  rating: story.rating,
  ...Object.fromEntries(story.warnings.map((w) => [warningField(w), "on"])),
});

/** The form's words for the labels' fields, when one comes back with an error. */
export const LABEL_WORDS: Record<string, string> = { tags: "Tags", rating: "Rating", warnings: "Content warnings" };
