/** The service's length rule (src/domain/shared/length.ts), for writers checking text before they send it. */

const CHARACTER_LANGUAGES = ["zh", "ja", "ko"];

/** zh, ja and ko count characters that are not white space; every other language counts words. */
export const countsCharacters = (language: string) => CHARACTER_LANGUAGES.includes(language.split("-")[0].toLowerCase());

/** Characters that are not white space for zh/ja/ko; white-space-separated words otherwise. */
export function contentLength(content: string, language: string): number {
  if (countsCharacters(language)) return [...content.replace(/\s+/gu, "")].length;
  return content.split(/\s+/u).filter(Boolean).length;
}
