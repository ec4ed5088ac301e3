import type { Book, Chapter } from "./export";
import {
  HIDDEN_NOTE,
  authorCount,
  authorshipLine,
  bylineStart,
  chapterLabel,
  chapterSpan,
  crossingLine,
  labelsLine,
  authorName,
  paragraphs,
  readUrl,
  sourceLine,
} from "./book-words";

/**
 * A path's book as Markdown (CommonMark): the title, the branch, the labels, who wrote it and the
 * authors, the background as a foreword, then a `##` heading per chapter, each segment's lines as paragraphs
 * followed by its byline. The text people wrote is escaped so that it reads as the words they typed, never as
 * Markdown or HTML: a `*`, a `<script>` or a line starting with `#` stays text.
 */

/** ASCII punctuation Markdown reads anywhere in a line (emphasis, code, links, HTML, entities, tables, strikethrough). */
const INLINE = /[\\`*_[\]<>&|~]/g;
/** What starts a block at the beginning of a line: a heading, a list item, a setext underline or rule. */
const BLOCK_START = /^(?:[#+=-]|\d+[.)])/;

/** One line of people's text as Markdown shows it (leading white space dropped: four spaces would make code). */
export function markdownText(line: string): string {
  const text = line.trimStart().replace(INLINE, (c) => `\\${c}`);
  if (!BLOCK_START.test(text)) return text;
  // An ordered list's number is escaped at the punctuation after it ("1\."), any other marker before itself.
  return /^\d/.test(text) ? text.replace(/^(\d+)/, "$1\\") : `\\${text}`;
}

const paras = (text: string) => paragraphs(text).map(markdownText).join("\n\n");

function frontMatter(book: Book, origin: string): string {
  const who = authorshipLine(book.labels);
  const url = readUrl(origin, book.branch.id);
  return [
    `# ${markdownText(book.story.title)}`,
    book.branch.is_main ? null : `*${markdownText(book.branch.title)}*`,
    markdownText(labelsLine(book.labels)),
    who ? markdownText(who) : null,
    `**Authors:** ${book.authors.map((a) => markdownText(authorName(a) + authorCount(a))).join("; ")}`,
    `${markdownText(sourceLine(book))} <${url}>`,
    "## Foreword",
    paras(book.story.background),
  ]
    .filter((part) => part !== null)
    .join("\n\n");
}

function chapter(c: Chapter): string {
  const crossing = crossingLine(c);
  const parts = [`## ${chapterLabel(c)} · ${markdownText(chapterSpan(c))}`];
  if (crossing) parts.push(`*${markdownText(crossing)}*`);
  for (const s of c.segments) {
    parts.push(paras(s.content));
    parts.push(`*${bylineStart(s)}${markdownText(authorName({ name: s.author_name, type: s.author_type }))}*`);
    if (s.hidden) parts.push(`*${markdownText(HIDDEN_NOTE)}*`);
  }
  return parts.join("\n\n");
}

/** The book's Markdown, a chapter per read of the stream. */
export function markdownOf(book: Book, origin: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const parts = [() => frontMatter(book, origin), ...book.chapters.map((c) => () => chapter(c))].values();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = parts.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(`${next.value()}\n\n`));
    },
  });
}
