import { type SQL, sql } from "drizzle-orm";
import type { ContentWarning, Rating } from "../../config";
import type { Db } from "../../db/client";
import { type BranchRow, type StoryRow, stories } from "../../db/schema";
import { notFound } from "../../lib/errors";
import type { Authorship } from "../../schemas/fields";
import { shownBranch, shownBranchQuery, shownBranchTitlesQuery } from "../stories/branches";
import type { Viewer } from "../shared/visibility";
import { PATH_PAGE_SEGMENTS } from "../reading/path-page";
import { type PathSegment, asPath, hiddenOnPathQuery, readingPathQuery } from "../stories/path";
import { storyView } from "../stories/stories";

/**
 * A branch's reading path as a book: what its EPUB and Markdown exports hold, in chapters. Hidden
 * segments are left out of a reader's copy unless they may read them (their author, moderators, admins), and the
 * segments they may read are all in it, ancestors' included, as the path page has them.
 * Why, and what was weighed: docs/decisions.md, "Bookmarks, reading progress and exports".
 */

/** Segments a chapter holds at most: a chapter is at most a page of the path page (it also ends at each fork crossed). */
export const CHAPTER_SEGMENTS = PATH_PAGE_SEGMENTS;

/**
 * The books' edition: raise it when the books of an unchanged path change (what they hold, their words, their
 * layout), so every export's version changes with it and no client or cache keeps the old one.
 */
const BOOK_EDITION = 1;

export interface StoryLabels {
  rating: Rating;
  warnings: ContentWarning[];
  /** Who wrote the story (`human`, `bot`, `mixed`) and the share of its segments by bots; null when not known. */
  authorship: { authorship: Authorship; bot_share: number } | null;
}

/** What the story says of itself, as a book shows it: its rating, content warnings and who wrote it. */
export function storyLabels(record: ReturnType<typeof storyView>): StoryLabels {
  return { rating: record.rating, warnings: record.warnings, authorship: { authorship: record.authorship, bot_share: record.bot_share } };
}

/**
 * What a reader's copy of the path holds, without its text: the story's record, the branch, the path's length, and
 * its hidden segments with whether this reader may read each. `key` changes exactly when the copy does, and is the
 * same for every reader whose copy is the same (`shared`: it holds no hidden text).
 */
export interface PathVersion {
  key: string;
  shared: boolean;
  story: StoryRow;
  branch: BranchRow;
}

/** The story of the branch `id`. */
const storyOf = (id: string): SQL => sql`(SELECT b.story_id FROM branches b WHERE b.id = ${id})`;

const versionStatements = (db: Db, id: string, viewer: Viewer) =>
  [
    shownBranchQuery(db, id, viewer),
    db
      .select()
      .from(stories)
      .where(sql`${stories.id} = ${storyOf(id)}`)
      .limit(1),
    hiddenOnPathQuery(db, id, viewer),
  ] as const;

type Hidden = Awaited<ReturnType<typeof hiddenOnPathQuery>>;

function versionOf(found: Record<string, unknown>[], [story]: StoryRow[], hidden: Hidden): PathVersion {
  const branch = shownBranch(found);
  if (!branch || !story) throw notFound("Branch");
  const length = branch.forkSequence + branch.segmentsCount;
  const marks = hidden.map((h) => [h.sequence_order, Number(h.shown)]);
  // The whole story record: what the book shows of it (and who wrote it) changes with it.
  const key = JSON.stringify([BOOK_EDITION, story, branch.id, branch.title, length, marks]);
  return { key, shared: hidden.every((h) => !Number(h.shown)), story, branch };
}

/** The version of the viewer's copy of the branch's path (404 when the branch is hidden from them): one round trip. */
export async function pathVersion(db: Db, id: string, viewer: Viewer): Promise<PathVersion> {
  const [found, story, hidden] = await db.batch(versionStatements(db, id, viewer));
  return versionOf(found, story, hidden);
}

export interface BookAuthor {
  id: string;
  name: string;
  type: string;
  /** Their segments in the book. */
  segments: number;
}

export interface Chapter {
  number: number;
  /** The title of the branch its segments are on; null when that branch is hidden from the reader. */
  title: string | null;
  /** Where the path crossed a fork into this chapter's branch: the branch it left (its title) after that segment. */
  crossing: { from_title: string | null; after: number } | null;
  segments: PathSegment[];
}

export interface Book {
  version: PathVersion;
  story: { id: string; title: string; background: string; language: string };
  branch: { id: string; title: string; is_main: boolean };
  labels: StoryLabels;
  /** Everyone who wrote a segment of the book, in the order they first appear. */
  authors: BookAuthor[];
  chapters: Chapter[];
  segments_count: number;
  /** Hidden segments left out of this copy. */
  left_out: number;
  /** The path's last sequence_order. */
  length: number;
  /** When the book last changed: its last segment, or the story's last edit. */
  modified: string;
}

/**
 * The viewer's copy of the branch's path as a book (404 when the branch is hidden from them): one round trip, the
 * version's statements with the path and the branches' titles, so the version is the text's own.
 */
export async function pathBook(db: Db, id: string, viewer: Viewer): Promise<Book> {
  const [found, story, hidden, rows, titleRows] = await db.batch([
    ...versionStatements(db, id, viewer),
    readingPathQuery(db, id, undefined, viewer),
    shownBranchTitlesQuery(db, storyOf(id), viewer),
  ]);
  const version = versionOf(found, story, hidden);
  const shown = new Set(hidden.filter((h) => Number(h.shown)).map((h) => h.sequence_order));
  const path = asPath(rows);
  const kept = path.filter((s) => !s.hidden || shown.has(s.sequence_order));
  const titles = new Map(titleRows.map((t) => [t.id, t.title]));
  const { branch } = version;
  const record = storyView(version.story, []);
  // ISO 8601 UTC timestamps sort as text.
  const [, modified] = [kept.at(-1)?.created_at ?? record.created_at, record.updated_at].sort();
  return {
    version,
    story: { id: record.id, title: record.title, background: record.background, language: record.language },
    branch: { id: branch.id, title: branch.title, is_main: branch.isMain },
    labels: storyLabels(record),
    authors: authorsOf(kept),
    chapters: chaptersOf(path, kept, titles),
    segments_count: kept.length,
    left_out: path.length - kept.length,
    length: branch.forkSequence + branch.segmentsCount,
    modified,
  };
}

function authorsOf(segments: PathSegment[]): BookAuthor[] {
  const byId = new Map<string, BookAuthor>();
  for (const s of segments) {
    const author = byId.get(s.bot_id);
    if (author) author.segments++;
    else byId.set(s.bot_id, { id: s.bot_id, name: s.author_name, type: s.author_type, segments: 1 });
  }
  return [...byId.values()];
}

/**
 * The kept segments in chapters: a new chapter where the path crosses a fork (marked with the branch it left, even
 * when the segments around the crossing were left out) and where a page of the path page begins.
 */
function chaptersOf(path: PathSegment[], kept: PathSegment[], titles: Map<string, string>): Chapter[] {
  const keep = new Set(kept);
  const chapters: Chapter[] = [];
  let current: (Chapter & { branch_id: string; page: number }) | undefined;
  let crossing: Chapter["crossing"] = null;
  let before: PathSegment | undefined;
  for (const s of path) {
    if (before && before.branch_id !== s.branch_id) crossing = { from_title: titles.get(before.branch_id) ?? null, after: before.sequence_order };
    before = s;
    if (!keep.has(s)) continue;
    const page = Math.ceil(s.sequence_order / CHAPTER_SEGMENTS);
    if (!current || current.branch_id !== s.branch_id || current.page !== page) {
      current = { number: chapters.length + 1, title: titles.get(s.branch_id) ?? null, crossing, segments: [], branch_id: s.branch_id, page };
      chapters.push(current);
      crossing = null;
    }
    current.segments.push(s);
  }
  return chapters.map(({ number, title, crossing, segments }) => ({ number, title, crossing, segments }));
}
