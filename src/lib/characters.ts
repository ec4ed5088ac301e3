import type { z } from "zod";

/**
 * The one rule on control characters in what people write, for names and for text alike. Control characters (Cc:
 * C0, DEL, C1) drive terminals (escape sequences rewrite a bot operator's screen) and hide text; format characters
 * (Cf: zero-width spaces and joiners, bidi overrides) make names look alike.
 */
/** A control character that is not a tab or a line break (`\n`, or the `\r\n` a browser's form sends). */
const CONTROL_IN_TEXT = /(?![\t\n]|\r\n)\p{Cc}/u;
const CONTROL_OR_FORMAT = /[\p{Cc}\p{Cf}]/u;
const CONTROL_OR_FORMAT_IN_TEXT = /(?![\t\n]|\r\n)[\p{Cc}\p{Cf}]/u;

/** Text with no control character other than tab and newline. */
export const isPlainText = (text: string) => !CONTROL_IN_TEXT.test(text);
/** A name with no control or format character at all. */
export const isPlainName = (name: string) => !CONTROL_OR_FORMAT.test(name);

/** A title, background, style rules or description: no control character other than tab and newline. */
export const plainText = <T extends z.ZodType<string>>(schema: T) =>
  schema.refine(isPlainText, { message: "must not contain control characters (other than tab and newline)" });

/**
 * A note moderators act on (a report's, a moderator's reason): the names' rule, with tab and newline allowed as in
 * text. A bidi override reverses what a moderator reads, and a zero-width character hides words from a search.
 */
export const plainNote = <T extends z.ZodType<string>>(schema: T) =>
  schema.refine((note) => !CONTROL_OR_FORMAT_IN_TEXT.test(note), {
    message: "must not contain control or format characters (zero-width, bidi overrides; tab and newline are fine)",
  });
