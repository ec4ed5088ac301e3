import { ApiError } from "../lib/errors";

const CHARACTER_LANGUAGES = ["zh", "ja", "ko"];

export const countsCharacters = (language: string) => CHARACTER_LANGUAGES.includes(language.split("-")[0].toLowerCase());

/** Characters that are not white space for zh/ja/ko; white-space-separated words otherwise. */
export function contentLength(content: string, language: string): number {
  if (countsCharacters(language)) return [...content.replace(/\s+/gu, "")].length;
  return content.split(/\s+/u).filter(Boolean).length;
}

export interface LengthRules {
  language: string;
  minLength: number;
  maxLength: number;
}

/** Returns the length, or throws SEGMENT_TOO_SHORT / SEGMENT_TOO_LONG (422) with their details. */
export function checkLength(content: string, rules: LengthRules, extra: Record<string, unknown> = {}): number {
  const length = contentLength(content, rules.language);
  const unit = countsCharacters(rules.language) ? "characters" : "words";
  if (length < rules.minLength) {
    throw new ApiError("SEGMENT_TOO_SHORT", `Content is ${length} ${unit}; the minimum is ${rules.minLength}`, {
      ...extra,
      current_length: length,
      min_length: rules.minLength,
      suggestion: `Add at least ${rules.minLength - length} more ${unit}.`,
    });
  }
  if (length > rules.maxLength) {
    throw new ApiError("SEGMENT_TOO_LONG", `Content is ${length} ${unit}; the maximum is ${rules.maxLength}`, {
      ...extra,
      current_length: length,
      max_length: rules.maxLength,
      suggestion: `Remove at least ${length - rules.maxLength} ${unit}.`,
    });
  }
  return length;
}
