/**
 * Text as XML (and XHTML) holds it. A segment may carry control characters (only names and titles refuse them), and
 * XML 1.0 allows none but tab and the line breaks, nor a lone surrogate or U+FFFE/U+FFFF: one of them makes the whole
 * document unreadable, so they are dropped.
 */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/**
 * What may be one of those: a quick test without the Unicode flag (the surrogates of an emoji too), so the slower
 * replacement above runs only on text that may need it (a tenth of the CPU on a long path's text).
 */
const SUSPECT = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/;

/** Text escaped for an XML element's content or a quoted attribute, without what XML cannot hold. */
export const xmlText = (text: string): string => (SUSPECT.test(text) ? text.replace(NOT_XML, "") : text).replace(/[&<>"']/g, (c) => ENTITIES[c]);
