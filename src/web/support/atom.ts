/**
 * Atom 1.0 (RFC 4287) as text: a feed and its entries, every text and attribute value through one escape. Hono's JSX
 * renders HTML, not XML (its void elements, its attribute rules), so a feed is built here instead. What RFC 4287
 * requires is in the types: a feed's id, title, updated, author and self link; an entry's id, title, updated, author
 * and alternate link. Times are RFC 3339 (the ISO strings D1 holds).
 */

export const ATOM_TYPE = "application/atom+xml; charset=utf-8";

export interface AtomPerson {
  name: string;
  /** An absolute URL: the person's page. */
  uri?: string;
}

export interface AtomEntry {
  /** A permanent IRI (`urn:uuid:…`): the same thing keeps its id in every feed that carries it. */
  id: string;
  title: string;
  /** When it last changed (an inbox item collapsing another event). */
  updated: string;
  published?: string;
  /** The page it is about (absolute). */
  href: string;
  author: AtomPerson;
  /** Plain text (`type="text"`). */
  content: string;
  /** The content's language (BCP 47): a story's. */
  lang?: string;
}

export interface AtomFeed {
  /** A permanent IRI: the feed's own absolute URL. */
  id: string;
  title: string;
  subtitle?: string;
  /** The newest entry's `updated` (or, with none, when what the feed follows began). */
  updated: string;
  /** The feed's own absolute URL (`rel="self"`) and its page's (`rel="alternate"`). */
  self: string;
  alternate: string;
  lang?: string;
  author: AtomPerson;
  entries: AtomEntry[];
}

/** Characters XML 1.0 does not allow (controls, lone surrogates, U+FFFE/U+FFFF), replaced: a feed must parse whatever text it quotes. */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** Text or an attribute value as XML: the five special characters escaped, characters XML cannot carry replaced by U+FFFD. */
export const xmlEscape = (text: string) => text.replace(NOT_XML, "\uFFFD").replace(/[&<>"']/g, (ch) => ESCAPES[ch]);

const element = (name: string, text: string, attrs = "") => `<${name}${attrs}>${xmlEscape(text)}</${name}>`;
const link = (rel: string, type: string, href: string) => `<link rel="${rel}" type="${type}" href="${xmlEscape(href)}"/>`;
const lang = (tag: string | undefined) => (tag ? ` xml:lang="${xmlEscape(tag)}"` : "");

const author = (p: AtomPerson) => `<author>${element("name", p.name)}${p.uri ? element("uri", p.uri) : ""}</author>`;

function entry(e: AtomEntry) {
  return [
    "<entry>",
    element("id", e.id),
    element("title", e.title, ' type="text"'),
    element("updated", e.updated),
    e.published ? element("published", e.published) : "",
    link("alternate", "text/html", e.href),
    author(e.author),
    element("content", e.content, ` type="text"${lang(e.lang)}`),
    "</entry>",
  ].join("");
}

/** The feed as an Atom document (UTF-8). */
export function atomXml(feed: AtomFeed): string {
  return [
    '<?xml version="1.0" encoding="utf-8"?>\n',
    `<feed xmlns="http://www.w3.org/2005/Atom"${lang(feed.lang)}>`,
    element("id", feed.id),
    element("title", feed.title, ' type="text"'),
    feed.subtitle ? element("subtitle", feed.subtitle, ' type="text"') : "",
    element("updated", feed.updated),
    link("self", "application/atom+xml", feed.self),
    link("alternate", "text/html", feed.alternate),
    author(feed.author),
    element("generator", "Storyloom"),
    ...feed.entries.map(entry),
    "</feed>\n",
  ].join("");
}
