import type { Book, BookAuthor, Chapter, StoryLabels } from "./export";
import { plural } from "../../lib/plural";
import { RATING_WORDS, WARNING_WORDS, botSharePercent } from "../discovery/label-words";
import type { PathSegment } from "../stories/path";

/**
 * The words both exports (EPUB and Markdown) put around the story's own text, in English as the web reader's are:
 * the labels, the authors, chapter headings, crossings and bylines. Plain text: each format escapes it as it must.
 */

/** "Rated Teen · Content warnings: violence, self-harm" (or "none given"). */
export function labelsLine(labels: StoryLabels): string {
  const warnings = labels.warnings.map((w) => WARNING_WORDS[w]);
  return `Rated ${RATING_WORDS[labels.rating]} · Content warnings: ${warnings.length ? warnings.join(", ") : "none given"}`;
}

/** Who wrote the story, in a sentence ("Written by humans and bots: 40 % of its segments by bots"); null when not known. */
export function authorshipLine({ authorship }: StoryLabels): string | null {
  if (!authorship) return null;
  if (authorship.authorship === "human") return "Written by humans: no segment of the story by a bot.";
  if (authorship.authorship === "bot") return "Written by bots: every segment of the story by a bot.";
  return `Written by humans and bots: ${botSharePercent(authorship.bot_share)} of the story's segments by bots.`;
}

/** What marks a bot after its name (" (bot)"), or nothing for a human. */
export const botMark = (type: string) => (type === "bot" ? " (bot)" : "");

/** An author's name as the book shows it: a bot marked. */
export const authorName = (a: Pick<BookAuthor, "name" | "type">) => `${a.name}${botMark(a.type)}`;

/** What follows an author's name (and mark) in the list of authors: ", 12 segments". */
export const authorCount = (a: BookAuthor) => `, ${plural(a.segments, "segment")}`;

/** A branch as the book names it: its title, or "a hidden branch". */
export const branchName = (title: string | null) => title ?? "a hidden branch";

/** "Chapter 3" */
export const chapterLabel = (c: Chapter) => `Chapter ${c.number}`;

/** The sequence_orders of a chapter's first and last segments: "#51–#100" (or "#51"). */
export function chapterRange(c: Chapter): string {
  const first = c.segments[0].sequence_order;
  const last = c.segments.at(-1)!.sequence_order;
  return first === last ? `#${first}` : `#${first}–#${last}`;
}

/** What a chapter holds: "main line, #51–#100" (its branch, and its range). */
export const chapterSpan = (c: Chapter) => `${branchName(c.title)}, ${chapterRange(c)}`;

/** "Here the path leaves main line after #3 and goes on with The Tide Turns." */
export const crossingLine = (c: Chapter) =>
  c.crossing ? `Here the path leaves ${branchName(c.crossing.from_title)} after #${c.crossing.after} and goes on with ${branchName(c.title)}.` : null;

/** What a segment's byline says before its author: "#12 · ". */
export const bylineStart = (s: PathSegment) => `#${s.sequence_order} · `;

/** Under a hidden segment this reader may read (their own, or as a moderator). */
export const HIDDEN_NOTE = "Hidden by a moderator: in this copy because you wrote it or moderate.";

/** Where the book comes from and how much of the path it holds. */
export function sourceLine(book: Book): string {
  const date = book.modified.slice(0, 10);
  const leftOut = book.left_out ? ` (${plural(book.left_out, "segment")} hidden by moderators left out)` : "";
  return `${plural(book.segments_count, "segment")} of the path's ${book.length}${leftOut}, as of ${date}, from Storyloom:`;
}

/** The path's page on the web reader, where the book comes from. */
export const readUrl = (origin: string, branchId: string) => `${origin}/branches/${branchId}/read`;

/** A segment's text as paragraphs: one per line, blank lines dropped. */
export const paragraphs = (text: string) => text.split(/\r?\n/).filter((line) => line.trim() !== "");
