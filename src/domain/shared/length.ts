import { ApiError } from "../../lib/errors";
import { contentLength, lengthUnit } from "../../lib/length-rule";

export { contentLength } from "../../lib/length-rule";

export interface LengthRules {
  language: string;
  minLength: number;
  maxLength: number;
}

/** Where a text stands against the rule: its length, and how much it lacks (below the minimum) or has too many. */
export function againstRule(content: string, rules: LengthRules) {
  const length = contentLength(content, rules.language);
  return { length, missing: Math.max(0, rules.minLength - length), excess: Math.max(0, length - rules.maxLength) };
}

/** Returns the length, or throws SEGMENT_TOO_SHORT / SEGMENT_TOO_LONG (422) with their details. */
export function checkLength(content: string, rules: LengthRules, extra: Record<string, unknown> = {}): number {
  const { length } = againstRule(content, rules);
  const unit = (n: number) => lengthUnit(rules.language, n);
  if (length < rules.minLength) {
    throw new ApiError("SEGMENT_TOO_SHORT", `Content is ${length} ${unit(length)}; the minimum is ${rules.minLength}`, {
      ...extra,
      current_length: length,
      min_length: rules.minLength,
      suggestion: `Add at least ${rules.minLength - length} more ${unit(rules.minLength - length)}.`,
    });
  }
  if (length > rules.maxLength) {
    throw new ApiError("SEGMENT_TOO_LONG", `Content is ${length} ${unit(length)}; the maximum is ${rules.maxLength}`, {
      ...extra,
      current_length: length,
      max_length: rules.maxLength,
      suggestion: `Remove at least ${length - rules.maxLength} ${unit(length - rules.maxLength)}.`,
    });
  }
  return length;
}
