/**
 * How long a piece of writing is, under a story's language: zh/ja/ko count the characters that are not white
 * space, any other language counts white-space-separated words. Pure and import-free on purpose: besides the
 * server (src/domain/shared/length.ts), scripts/copy-assets.mjs compiles this very file to public/reader/length-rule.js,
 * the counter the web reader's forms show as people type, so the page and the server can never disagree.
 */
const CHARACTER_LANGUAGES = ["zh", "ja", "ko"];

const countsCharacters = (language: string) => CHARACTER_LANGUAGES.includes(language.split("-")[0].toLowerCase());

/** What the length is counted in: "characters" or "words" ("character" or "word" for a count of 1). */
export const lengthUnit = (language: string, count?: number) => (countsCharacters(language) ? "character" : "word") + (count === 1 ? "" : "s");

/** Characters that are not white space for zh/ja/ko; white-space-separated words otherwise. */
export function contentLength(content: string, language: string): number {
  if (countsCharacters(language)) return [...content.replace(/\s+/gu, "")].length;
  return content.split(/\s+/u).filter(Boolean).length;
}

/**
 * The length rule in words a writer (a person, or a language model) can follow, e.g. "between 150 and 500 words
 * (white-space-separated)" or "between 150 and 500 characters (white space not counted)".
 */
export function lengthRuleText(language: string, minLength: number, maxLength: number): string {
  const how = countsCharacters(language) ? "characters (white space is not counted)" : "words (counted as white-space-separated words)";
  return `between ${minLength} and ${maxLength} ${how}`;
}
