/**
 * Text as XML (and XHTML) holds it. A segment may carry control characters (only names and titles refuse them), and
 * XML 1.0 allows none but tab and the line breaks, nor a lone surrogate or U+FFFE/U+FFFF: one of them makes the whole
 * document unreadable, so they are dropped.
 */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** Text escaped for an XML element's content or a quoted attribute, without what XML cannot hold. */
export const xmlText = (text: string): string => text.replace(NOT_XML, "").replace(/[&<>"']/g, (c) => ENTITIES[c]);
