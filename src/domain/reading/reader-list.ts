import { sql } from "drizzle-orm";
import type { ContentWarning, Rating } from "../../config";
import { type Db, type Read, rawAll, readOf } from "../../db/client";
import { preparedByShape } from "../../db/compile";
import { pagination } from "../../lib/pagination";
import type { Authorship, StorySort } from "../../schemas/fields";
import { preferencesQuery } from "../accounts/preferences";
import { type FilterShape, type ReaderPreference, shapeKey } from "../discovery/story-filter";
import { accountNameSql } from "../shared/actor";
import { type StoryListValues, shownBranchesCount, storyListOf, storyListSql } from "../stories/story-list";

/**
 * The web reader's list of stories (its home and tag pages): the list as every list builds it
 * (src/domain/stories/story-list.ts) with what a card shows, and what the reader's preference leaves out.
 */

interface ReaderListRow {
  id: string;
  title: string;
  language: string;
  owner_id: string;
  owner_type: string;
  owner_name: string;
  created_at: string;
  /** The start of the story's background (BLURB_CHARS characters and one more, to tell that it goes on). */
  background: string;
  /** When anything was last written on it: its newest shown branch or the newest segment on one. */
  last_activity: string;
  branches_count: number;
  segments_count: number;
  /** What the sort ranks by: segments written this week (`active`), the vote score (`top`); null for `new`. */
  sort_key: number | null;
  tags: string;
  rating: Rating;
  warnings: string;
  authorship: Authorship;
  bot_share: number;
}

/** How much of a story's background a list reads for its card's blurb (the page cuts it shorter, at a word). */
export const BLURB_CHARS = 200;

/**
 * A story's last activity: the newest of its shown branches' creation and their last shown segments, each branch's
 * read through the (branch, sequence) index, so a story of many segments costs one look-up per branch. Turn changes
 * are left out: a turn that passes on its own every hour is not someone writing.
 */
const lastActivitySql = sql.raw(`(SELECT max(max(b.created_at, coalesce((SELECT sg.created_at FROM segments sg
    WHERE sg.branch_id = b.id AND sg.hidden_at IS NULL ORDER BY sg.sequence_order DESC LIMIT 1), '')))
  FROM branches b WHERE b.story_id = s.id AND b.hidden_at IS NULL)`);

/** What a card of the reader's list selects on `stories s` (its labels and sort are the list's: `storyListSql`). */
const readerColumns = sql`s.id, s.title, s.language, s.owner_id, s.owner_type,
  ${accountNameSql("s.owner_id")} AS owner_name, substr(s.background, 1, ${BLURB_CHARS + 1}) AS background,
  s.created_at, coalesce(${lastActivitySql}, s.created_at) AS last_activity, ${shownBranchesCount} AS branches_count, s.segments_count`;

/** The reader's list's page and total (one statement each, one batch), its text one per filter shape. */
const readerPage = preparedByShape(shapeKey, (v: StoryListValues, shape: FilterShape) => storyListSql(v, shape, readerColumns).page);
const readerTotal = preparedByShape(shapeKey, (v: StoryListValues, shape: FilterShape) => storyListSql(v, shape, readerColumns).total);

export interface ReaderListOptions {
  sort: StorySort;
  limit: number;
  offset: number;
  /** A tag page's tag (its key). */
  tags?: string[];
  preference?: ReaderPreference;
  now?: number;
}

/**
 * Active stories by the list's filter (a tag page's tag) and the reader's preference, in the sort's order, each with
 * its branch and segment counts, its labels and what it is ranked by: a read of two statements (page and total).
 */
export function readerListRead(db: Db, opts: ReaderListOptions) {
  const preference = opts.preference ?? null;
  const { values, shape } = storyListOf(
    { status: "active", tags: opts.tags ?? [], excludeTags: [], ratings: [], authorships: [], sort: opts.sort, limit: opts.limit, offset: opts.offset },
    preference,
    opts.now,
  );
  const hiding = hidingRead(db, preference);
  return readOf(
    [rawAll<ReaderListRow>(db, readerPage(values, shape)), rawAll<{ total: number }>(db, readerTotal(values, shape)), ...hiding.statements],
    ([rows, [{ total }], ...prefs]) => ({
      stories: rows.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[], warnings: JSON.parse(r.warnings) as ContentWarning[] })),
      pagination: pagination(opts.limit, opts.offset, total),
      hiding: hiding.shape(prefs),
    }),
  );
}

/**
 * What an account's preference leaves out, to say so on the page (the list's query applied it itself): a read to
 * share the list's round trip (a cookie's preference is known without one).
 */
export function hidingRead(db: Db, preference: ReaderPreference): Read<Hiding | null> {
  const account = preference && "accountId" in preference ? preference.accountId : null;
  return readOf(account ? [preferencesQuery(db, account)] : [], ([prefs]) =>
    hidingOf(preference, (prefs as Awaited<ReturnType<typeof preferencesQuery>> | undefined)?.[0]),
  );
}

/** What a list leaves out by the reader's preference: mature stories, and how many tags' stories; null when nothing. */
export interface Hiding {
  mature: boolean;
  tags: number;
}

function hidingOf(preference: ReaderPreference, account: { hide_mature: boolean; hidden_tags: string[] } | undefined): Hiding | null {
  const prefs = account ? { hideMature: account.hide_mature, hiddenTags: account.hidden_tags } : preference && "hideMature" in preference ? preference : null;
  if (!prefs || (!prefs.hideMature && !prefs.hiddenTags.length)) return null;
  return { mature: prefs.hideMature, tags: prefs.hiddenTags.length };
}
