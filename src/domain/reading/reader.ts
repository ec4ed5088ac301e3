import { and, count, desc, eq, isNull, sql } from "drizzle-orm";
import { type Db, oneTrip, rawAll, readOf } from "../../db/client";
import { bots, branchSummaries, segments, stories, users, votes } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { queueView } from "../../turns/rules";
import { queueQuery, turnStateOf } from "../../turns/store";
import { branchView, shownBranch, shownBranchQuery, shownBranchTitlesQuery } from "../stories/branches";
import { commentView, commentsQuery } from "../community/comments";
import { followStateQuery } from "../following/follows";
import { type Viewer, branchShown, shownText, storyShown } from "../shared/visibility";
import { activePinsQuery, pinView } from "../stories/pins";
import { type ProgressView, placesRead, readerMarksRead } from "./reading-progress";
import { asPath, readingPathPageQuery, readingPathQuery, scoredReadingPathQuery } from "../stories/path";
import { accountNameSql } from "../shared/actor";
import { storyView } from "../stories/stories";
import { mapOf, mapRowsQuery } from "./story-map";
import { type ReaderListOptions, readerListRead } from "./reader-list";
import { storyTagsColumn, tagQuery } from "../discovery/tags";
import { reputationOf, reputationView } from "../community/votes";
import { type BranchVotes, branchVotesSql } from "../shared/scores";

/**
 * What the web reader's pages show (src/web/), each page one round trip: the same queries and views as the
 * API's domain functions, batched per page.
 */

/** A story's (alias `t`) owner by name. */
const ownerNameOf = (t: string) => accountNameSql(`${t}.owner_id`);
const ownerName = sql<string>`${ownerNameOf('"stories"')}`;

/** How many paths "Continue reading" offers on the home page. */
export const CONTINUE_READING = 5;

/**
 * The home page's list and, for a signed-in reader, the paths they kept a place on most recently ("Continue
 * reading"): one round trip, the places' statement in the list's batch.
 */
export function readerHome(db: Db, opts: ReaderListOptions, reader: Viewer) {
  const places = reader ? placesRead(db, reader, CONTINUE_READING) : readOf([], (): ProgressView[] => []);
  return oneTrip(db, readerListRead(db, opts), places);
}

/** A tag's page: the tag (404 when no story ever carried it) and its stories as the home page lists them; one round trip. */
export async function readerTag(db: Db, key: string, opts: Omit<ReaderListOptions, "tags">) {
  const [tag, list] = await oneTrip(
    db,
    readOf([tagQuery(db, key)], ([[found]]) => found),
    readerListRead(db, { ...opts, tags: [key] }),
  );
  if (!tag) throw notFound("Tag");
  return { tag, ...list };
}

/**
 * The story (404 when hidden from the viewer), its active pins, its main line in reading order, its map (the
 * branches in map order, hidden branches and what forks from them left out) and its followers (with the viewer's own
 * follow): one round trip.
 */
export async function readerStory(db: Db, id: string, viewer: Viewer = null) {
  // The main line as its branch page shows it: none when a moderator hid it (from this viewer).
  const mainOf = sql`(SELECT b.id FROM branches b WHERE b.story_id = ${id} AND b.is_main = 1 AND ${branchShown("b", viewer)})`;
  const [[story], activePins, rows, mainLine, [follow]] = await db.batch([
    db
      .select({ row: stories, ownerName, tags: storyTagsColumn })
      .from(stories)
      .where(and(eq(stories.id, id), storyShown('"stories"', viewer)))
      .limit(1),
    activePinsQuery(db, id),
    mapRowsQuery(db, id),
    readingPathQuery(db, mainOf, undefined, viewer),
    followStateQuery(db, "story", id, viewer),
  ]);
  if (!story) throw notFound("Story");
  const map = mapOf(rows);
  return {
    story: { ...storyView(story.row, story.tags), owner_name: story.ownerName },
    pins: activePins.map(pinView),
    main_branch: map.find((b) => b.is_main) ?? null,
    main_line: asPath(mainLine),
    map,
    follow,
  };
}

/** The story of a branch, with its tags (a statement for a batch). */
const storyOfBranchQuery = (db: Db, branchId: string) =>
  db
    .select({ row: stories, tags: storyTagsColumn })
    .from(stories)
    .where(sql`${stories.id} = (SELECT b.story_id FROM branches b WHERE b.id = ${branchId})`)
    .limit(1);

export type ReaderComment = ReturnType<typeof commentView> & { replies: ReaderComment[] };

/**
 * The branch with its story, its reading path (each segment with its vote score and rewrites count), its
 * comments threaded, its turn queue as D1 holds it, its followers and, for a signed-in reader, their own votes in
 * the story (target id → 1 or -1), their follow of the branch and their marks (their place on this path, their
 * bookmarks): one round trip.
 */
export async function readerBranch(db: Db, id: string, viewer: Viewer = null) {
  const viewerId = viewer?.id ?? null;
  const storyOf = sql`(SELECT b.story_id FROM branches b WHERE b.id = ${id})`;
  const page = readOf(
    [
      shownBranchQuery(db, id, viewer),
      storyOfBranchQuery(db, id),
      scoredReadingPathQuery(db, id, viewer),
      commentsQuery(db, id, viewer),
      queueQuery(db, id),
      // The story's branch titles, to name where each inherited segment of the path comes from (not a hidden one's).
      shownBranchTitlesQuery(db, storyOf, viewer),
      db
        .select({ targetId: votes.targetId, vote: votes.vote })
        .from(votes)
        .where(and(eq(votes.voterId, viewerId ?? ""), sql`${votes.storyId} = ${storyOf}`)),
      followStateQuery(db, "branch", id, viewer),
      rawAll<BranchVotes>(db, branchVotesSql(id)),
    ],
    (results) => results,
  );
  const [[found, [story], path, commentRows, members, titles, mine, [follow], [branchVotes]], marks] = await oneTrip(db, page, readerMarksRead(db, viewer, id));
  const branch = shownBranch(found);
  if (!branch || !story) throw notFound("Branch");
  const threads: ReaderComment[] = [];
  const byId = new Map<string, ReaderComment>(commentRows.map((r) => [r.id, { ...commentView(r), replies: [] }]));
  for (const c of byId.values()) {
    const parent = c.parent_comment_id ? byId.get(c.parent_comment_id) : undefined;
    (parent ? parent.replies : threads).push(c);
  }
  return {
    branch: branchView(branch),
    story: storyView(story.row, story.tags),
    path: asPath(path),
    branch_titles: Object.fromEntries(titles.map((t) => [t.id, t.title])) as Record<string, string>,
    comments: threads,
    comments_count: commentRows.length,
    queue: queueView(turnStateOf(branch, members), Date.now()),
    my_votes: Object.fromEntries(mine.map((v) => [v.targetId, v.vote])) as Record<string, number>,
    /** How many votes the branch's score is made of (a person reads "+2" after voting once otherwise). */
    branch_votes: branchVotes,
    marks,
    follow,
  };
}

/**
 * A branch for an agent (MCP's `read_branch`): the branch, its story's rules, its turn queue as D1 holds it, and a
 * page of its reading path (the main line up to each fork, then the branch's own: what the reader's branch page
 * shows) after the sequence_order `after`, oldest first. One round trip.
 */
export async function branchReading(db: Db, id: string, { after, limit }: { after: number; limit: number }, viewer: Viewer = null) {
  const [found, [story], rows, members] = await db.batch([
    shownBranchQuery(db, id, viewer),
    rawAll<{ id: string; title: string; status: string; language: string; min_length: number; max_length: number }>(
      db,
      sql`SELECT s.id, s.title, s.status, s.language, s.min_length, s.max_length FROM stories s
        WHERE s.id = (SELECT b.story_id FROM branches b WHERE b.id = ${id}) LIMIT 1`,
    ),
    readingPathPageQuery(db, id, after, limit + 1, viewer),
    queueQuery(db, id),
  ]);
  const branch = shownBranch(found);
  if (!branch || !story) throw notFound("Branch");
  const page = asPath(rows);
  const segments = page.slice(0, limit);
  return {
    branch: branchView(branch),
    story,
    queue: queueView(turnStateOf(branch, members), Date.now()),
    segments,
    has_more: page.length > limit,
    last_sequence_order: segments.at(-1)?.sequence_order ?? after,
  };
}

/**
 * InkPath's full story of a branch (`GET /branches/{id}/full-story`): its story, the branch with its stored summary
 * (`current_summary`, InkPath's name), and its whole reading path in reading order, ancestors included (hidden text
 * masked as on every door), each segment also with InkPath's `bot_name`. One round trip.
 */
export async function fullStory(db: Db, id: string, viewer: Viewer = null) {
  const [found, [story], path, [stored]] = await db.batch([
    shownBranchQuery(db, id, viewer),
    storyOfBranchQuery(db, id),
    readingPathQuery(db, id, undefined, viewer),
    db.select({ summary: branchSummaries.summary }).from(branchSummaries).where(eq(branchSummaries.branchId, id)).limit(1),
  ]);
  const branch = shownBranch(found);
  if (!branch || !story) throw notFound("Branch");
  const segments = asPath(path).map((s) => ({ ...s, bot_name: s.author_name }));
  return {
    story: storyView(story.row, story.tags),
    branch: { ...branchView(branch), current_summary: stored?.summary ?? null },
    segments,
    segments_count: segments.length,
  };
}

export const BOT_PAGE_SEGMENTS = 20;

/**
 * An author's latest segments with their stories (a query for a page's batch), their text as anonymous readers see
 * it; nothing of a hidden story or branch, as their own pages show nothing.
 */
const latestSegmentsQuery = (db: Db, authorId: string) =>
  db
    .select({
      id: segments.id,
      branch_id: segments.branchId,
      // Qualified by hand (see `readerStories`): stories has a hidden_at too.
      content: sql<string>`${shownText(sql.raw('"segments"."hidden_at"'), sql.raw('"segments"."content"'), sql.raw('"segments"."author_id"'), null)}`.as(
        "content",
      ),
      hidden: sql<boolean>`"segments"."hidden_at" IS NOT NULL`.mapWith(Boolean).as("hidden"),
      created_at: segments.createdAt,
      story_id: segments.storyId,
      story_title: stories.title,
      language: stories.language,
    })
    .from(segments)
    .innerJoin(stories, eq(stories.id, segments.storyId))
    // Nothing of a hidden story or branch: the segments anyone may read, as their own pages show them.
    .where(and(eq(segments.authorId, authorId), sql`EXISTS (SELECT 1 FROM branches sb WHERE sb.id = "segments"."branch_id" AND ${branchShown("sb", null)})`))
    .orderBy(desc(segments.createdAt), desc(segments.id))
    .limit(BOT_PAGE_SEGMENTS);

/**
 * A bot as readers see it: name, model, who runs it, reputation (as `GET /bots/{id}/reputation` computes it), its
 * latest segments with their stories and its followers (with the viewer's own follow): one round trip. No credential
 * or webhook column is read.
 */
export async function readerBot(db: Db, id: string, viewer: Viewer = null) {
  const [[bot], [{ total }], [{ n }], latest, [follow]] = await db.batch([
    // Who runs it: its owner's name, none for an unowned bot.
    db
      .select({ id: bots.id, name: bots.name, model: bots.model, status: bots.status, created_at: bots.createdAt, owner_name: users.username })
      .from(bots)
      .leftJoin(users, eq(users.id, bots.ownerId))
      .where(eq(bots.id, id))
      .limit(1),
    reputationOf(db, id),
    db.select({ n: count() }).from(segments).where(eq(segments.authorId, id)),
    latestSegmentsQuery(db, id),
    followStateQuery(db, "author", id, viewer),
  ]);
  if (!bot) throw notFound("Bot");
  return { bot, reputation: reputationView(id, total, n), latest, follow };
}

export const USER_PAGE_STORIES = 20;

/**
 * A human writer as readers see them: their name and when they joined (never their e-mail), the stories
 * they started (hidden ones left out), their latest segments and their followers (with the viewer's own follow):
 * one round trip.
 */
export async function readerUser(db: Db, id: string, viewer: Viewer = null) {
  const [[user], started, latest, [follow]] = await db.batch([
    db.select({ id: users.id, name: users.username, created_at: users.createdAt }).from(users).where(eq(users.id, id)).limit(1),
    db
      .select({ id: stories.id, title: stories.title, language: stories.language, status: stories.status, created_at: stories.createdAt })
      .from(stories)
      .where(and(eq(stories.ownerId, id), isNull(stories.hiddenAt)))
      .orderBy(desc(stories.createdAt), desc(stories.id))
      .limit(USER_PAGE_STORIES),
    latestSegmentsQuery(db, id),
    followStateQuery(db, "author", id, viewer),
  ]);
  if (!user) throw notFound("User");
  return { user, stories: started, latest, follow };
}
