import { type EpubDocument, epubStream } from "../../lib/epub";
import { xmlText } from "../../lib/xml";
import type { Book, Chapter } from "./export";
import { RATING_WORDS } from "../discovery/label-words";
import {
  HIDDEN_NOTE,
  authorCount,
  authorName,
  authorshipLine,
  branchName,
  botMark,
  bylineStart,
  chapterLabel,
  chapterRange,
  chapterSpan,
  crossingLine,
  labelsLine,
  paragraphs,
  readUrl,
  sourceLine,
} from "./book-words";

/**
 * A path's book as EPUB 3: a title page (title, branch, rating and warnings, who wrote it, the
 * authors, where it comes from), the story's background as a foreword, then one XHTML document per chapter; the
 * table of contents lists them all. The story's text is in its language; the words around it are English, marked so.
 */

const CSS = `body { font-family: serif; line-height: 1.5; margin: 0 5%; }
h1 { font-size: 1.5em; margin: 1em 0 .5em; }
.title-page { text-align: center; margin-top: 3em; }
.title-page ul { list-style: none; padding: 0; }
.subtitle { font-size: 1.2em; font-style: italic; }
.labels, .authorship, .source, .range, .byline, .note, .crossing { font-family: sans-serif; font-size: .8em; color: #555; }
.crossing { font-style: italic; border-top: 1px dashed #999; padding-top: .5em; }
.segment { margin: 0 0 1.5em; }
.segment p { margin: 0 0 .5em; text-indent: 0; }
.segment p.byline { text-align: right; margin: 0; }
.note { font-style: italic; }
`;

/** English words inside a document in the story's language. */
const en = (text: string) => `<span xml:lang="en" lang="en">${xmlText(text)}</span>`;
const enP = (cls: string, text: string) => `<p class="${cls}" xml:lang="en" lang="en">${xmlText(text)}</p>`;
const paras = (text: string) =>
  paragraphs(text)
    .map((p) => `<p>${xmlText(p)}</p>`)
    .join("\n");

function titlePage(book: Book, origin: string): string {
  const url = xmlText(readUrl(origin, book.branch.id));
  const who = authorshipLine(book.labels);
  const authors = book.authors.map((a) => `<li>${xmlText(a.name)}${en(botMark(a.type) + authorCount(a))}</li>`);
  return [
    `<section epub:type="titlepage" class="title-page">`,
    `<h1>${xmlText(book.story.title)}</h1>`,
    book.branch.is_main ? "" : `<p class="subtitle">${xmlText(book.branch.title)}</p>`,
    enP("labels", labelsLine(book.labels)),
    who ? enP("authorship", who) : "",
    `<h2 xml:lang="en" lang="en">Authors</h2>`,
    `<ul class="authors">\n${authors.join("\n")}\n</ul>`,
    `<p class="source" xml:lang="en" lang="en">${xmlText(sourceLine(book))} <a href="${url}">${url}</a></p>`,
    `</section>`,
  ]
    .filter(Boolean)
    .join("\n");
}

const foreword = (book: Book) =>
  `<section epub:type="foreword" class="foreword">\n<h1 xml:lang="en" lang="en">Foreword</h1>\n${paras(book.story.background)}\n</section>`;

function chapter(c: Chapter): string {
  const crossing = crossingLine(c);
  const segments = c.segments.map((s) =>
    [
      `<div class="segment" id="s-${s.sequence_order}">`,
      paras(s.content),
      `<p class="byline">${xmlText(bylineStart(s) + s.author_name)}${botMark(s.author_type) && en(botMark(s.author_type))}</p>`,
      s.hidden ? enP("note", HIDDEN_NOTE) : "",
      "</div>",
    ]
      .filter(Boolean)
      .join("\n"),
  );
  return [
    `<section epub:type="chapter" class="chapter">`,
    `<h1>${en(chapterLabel(c))} · ${c.title === null ? en(branchName(null)) : xmlText(c.title)}</h1>`,
    enP("range", chapterRange(c)),
    crossing ? enP("crossing", crossing) : "",
    ...segments,
    `</section>`,
  ]
    .filter(Boolean)
    .join("\n");
}

/** The book as an EPUB 3 stream (src/lib/epub.ts); `origin` makes the address of the path's page it comes from. */
export function epubOf(book: Book, origin: string): ReadableStream<Uint8Array> {
  const chapters: EpubDocument[] = book.chapters.map((c) => ({
    id: `chapter-${String(c.number).padStart(3, "0")}`,
    title: `${chapterLabel(c)}: ${chapterSpan(c)}`,
    body: () => chapter(c),
    bodymatter: c.number === 1,
  }));
  return epubStream({
    identifier: `urn:uuid:${book.branch.id}`,
    title: book.story.title,
    subtitle: book.branch.is_main ? undefined : book.branch.title,
    language: book.story.language,
    creators: book.authors.map(authorName),
    description: book.story.background,
    source: readUrl(origin, book.branch.id),
    publisher: "Storyloom",
    modified: book.modified,
    meta: [{ property: "schema:contentRating", value: RATING_WORDS[book.labels.rating] }],
    navTitle: "Contents",
    navLanguage: "en",
    css: CSS,
    documents: [
      { id: "title-page", title: book.story.title, body: () => titlePage(book, origin) },
      { id: "foreword", title: "Foreword", body: () => foreword(book) },
      ...chapters,
    ],
  });
}
