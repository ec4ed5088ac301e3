/**
 * Text from the service (story titles, names, messages) as the bot may print it to an operator's terminal: control
 * characters (C0, DEL, C1: escape sequences that move the cursor, retitle the window or clear the screen) and the
 * bidi embedding, override and isolate marks (which reorder the line) are dropped; tab, newline and carriage
 * return become a space, so an event stays one line.
 */
const LINE_BREAKS = /[\t\n\r]/g;
const UNPRINTABLE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;

export const printable = (text: string) => text.replace(LINE_BREAKS, " ").replace(UNPRINTABLE, "");
