import { z } from "zod";
import { isPlainName } from "./characters";
import { nameKey } from "./names";

/** At most this many tags on a story, and on a reader's list of hidden tags. */
export const TAGS_PER_STORY = 10;
export const HIDDEN_TAGS_PER_READER = 20;
/** A tag's length, in characters, as shown (after trimming). */
export const TAG_MAX_LENGTH = 50;

/** A tag: the key it is the same tag by, and a spelling to show. */
export interface Tag {
  key: string;
  name: string;
}

const collapse = (text: string) => text.trim().replace(/\s+/gu, " ");

/** A tag as written, to show: NFC, trimmed, every run of white space one space. */
export const tagSpelling = (raw: string) => collapse(raw.normalize("NFC"));

/**
 * The key two tags are the same by (`Sci-Fi`, ` sci-fi `, `ＳＣＩ－ＦＩ`): the names' key (NFKC with full case folding,
 * src/lib/names.ts), trimmed, every run of white space one space (NFKC may make new white space of full-width forms).
 */
export const tagKey = (raw: string) => collapse(nameKey(tagSpelling(raw)));

/** Tags as given, one per key: the first spelling of each, in the order given. */
export function uniqueTags(spellings: readonly string[]): Tag[] {
  const seen = new Map<string, Tag>();
  for (const name of spellings) {
    const key = tagKey(name);
    if (!seen.has(key)) seen.set(key, { key, name: tagSpelling(name) });
  }
  return [...seen.values()];
}

/** One tag as written: 1–50 characters once trimmed, no control or format character (a zero-width space makes a look-alike). */
export const tagField = z
  .string()
  .overwrite(tagSpelling)
  .min(1)
  .max(TAG_MAX_LENGTH)
  .refine(isPlainName, { message: "must not contain control or format characters (zero-width, bidi overrides)" });

/** A list of tags (at most `max`): deduplicated by key, the first spelling kept. */
export const tagsField = (max: number) => z.array(tagField).max(max).transform(uniqueTags);

/** The start of a key as typed (`GET /tags?prefix=`): a key, a space at its end kept (the next word is coming). */
export const tagPrefix = (raw: string) => {
  const key = tagKey(raw);
  return key && /\s$/u.test(raw) ? `${key} ` : key;
};
