import { and, asc, count, desc, eq, isNull, sql } from "drizzle-orm";
import { type Db, rawAll } from "../db/client";
import { bots, branchSummaries, branches, segments, stories, users, votes } from "../db/schema";
import { notFound } from "../lib/errors";
import { pagination } from "../lib/pagination";
import { queueView } from "../turns/rules";
import { queueQuery, turnStateOf } from "../turns/store";
import { branchView, shownBranch, shownBranchQuery } from "./branches";
import { commentView, commentsQuery } from "./comments";
import { followStateQuery } from "./follows";
import { type Viewer, branchShown, shownText, storyShown } from "./hidden";
import { activePinsQuery, pinView } from "./pins";
import { asPath, readingPathPageQuery, readingPathQuery, scoredReadingPathQuery } from "./reading-path";
import { storyView } from "./stories";
import { reputationOf, reputationView } from "./votes";

/**
 * What the web reader's pages show (src/web/), each page one round trip: the same queries and views as the
 * API's domain functions, batched per page.
 */

const WEEK_MS = 7 * 86_400_000;

export type StorySort = "newest" | "active";

/** A story's owner by name: a human's username or a bot's name (both looked up by primary key). */
const ownerName = sql<string>`coalesce((SELECT u.username FROM users u WHERE u.id = "stories"."owner_id"), (SELECT b.name FROM bots b WHERE b.id = "stories"."owner_id"), '')`;

/**
 * Active stories, newest first, or most active first (most segments written in the last 7 days, as the
 * dashboard's `most_active`; then newest); each with its branch and segment counts. Page and total: one round trip.
 */
export async function readerStories(db: Db, opts: { sort: StorySort; limit: number; offset: number; now?: number }) {
  const since = new Date((opts.now ?? Date.now()) - WEEK_MS).toISOString();
  // Qualified by hand: drizzle renders ${stories.id} unqualified here, which the subqueries would rebind.
  const recent = sql<number>`(SELECT count(*) FROM logs l WHERE l.story_id = "stories"."id" AND l.created_at >= ${since})`;
  const listed = and(eq(stories.status, "active"), isNull(stories.hiddenAt));
  const order = opts.sort === "active" ? [desc(recent), desc(stories.createdAt), desc(stories.id)] : [desc(stories.createdAt), desc(stories.id)];
  const [rows, [{ total }]] = await db.batch([
    db
      .select({
        id: stories.id,
        title: stories.title,
        language: stories.language,
        owner_id: stories.ownerId,
        owner_type: stories.ownerType,
        owner_name: ownerName,
        created_at: stories.createdAt,
        branches_count: sql<number>`(SELECT count(*) FROM branches b WHERE b.story_id = "stories"."id" AND b.hidden_at IS NULL)`,
        segments_count: sql<number>`(SELECT coalesce(sum(b.segments_count), 0) FROM branches b WHERE b.story_id = "stories"."id")`,
        recent_segments: recent,
      })
      .from(stories)
      .where(listed)
      .orderBy(...order)
      .limit(opts.limit)
      .offset(opts.offset),
    db.select({ total: count() }).from(stories).where(listed),
  ]);
  return { stories: rows, pagination: pagination(opts.limit, opts.offset, total) };
}

export interface ReaderBranchNode {
  id: string;
  title: string;
  is_main: boolean;
  status: string;
  vote_score: number;
  segments_count: number;
  children: ReaderBranchNode[];
}

/**
 * The story (404 when hidden from the viewer), its active pins, its main line in reading order, its branch tree
 * (hidden branches and what forks from them left out) and its followers (with the viewer's own follow): one round trip.
 */
export async function readerStory(db: Db, id: string, viewer: Viewer = null) {
  // The main line as its branch page shows it: none when a moderator hid it (from this viewer).
  const mainOf = sql`(SELECT b.id FROM branches b WHERE b.story_id = ${id} AND b.is_main = 1 AND ${branchShown("b", viewer)})`;
  const [[story], activePins, rows, mainLine, [follow]] = await db.batch([
    db
      .select({ row: stories, ownerName })
      .from(stories)
      .where(and(eq(stories.id, id), storyShown('"stories"', viewer)))
      .limit(1),
    activePinsQuery(db, id),
    db
      .select()
      .from(branches)
      .where(and(eq(branches.storyId, id), isNull(branches.hiddenAt)))
      .orderBy(desc(branches.isMain), asc(branches.createdAt), asc(branches.id)),
    readingPathQuery(db, mainOf, undefined, viewer),
    followStateQuery(db, "story", id, viewer),
  ]);
  if (!story) throw notFound("Story");
  const views = rows.map(branchView);
  const nodes = new Map<string, ReaderBranchNode>(
    views.map((b) => [
      b.id,
      { id: b.id, title: b.title, is_main: b.is_main, status: b.status, vote_score: b.vote_score, segments_count: b.segments_count, children: [] },
    ]),
  );
  const tree: ReaderBranchNode[] = [];
  for (const b of views) {
    if (!b.parent_branch_id) tree.push(nodes.get(b.id)!);
    else nodes.get(b.parent_branch_id)?.children.push(nodes.get(b.id)!);
  }
  const main = views.find((b) => b.is_main) ?? null;
  return {
    story: { ...storyView(story.row), owner_name: story.ownerName },
    pins: activePins.map(pinView),
    main_branch: main,
    main_line: asPath(mainLine),
    tree,
    branches_count: views.length,
    follow,
  };
}

export type ReaderComment = ReturnType<typeof commentView> & { replies: ReaderComment[] };

/**
 * The branch with its story, its reading path (each segment with its vote score and rewrites count), its
 * comments threaded, its turn queue as D1 holds it, its followers and, for a signed-in reader, their own votes in
 * the story (target id → 1 or -1) and follow of the branch: one round trip.
 */
export async function readerBranch(db: Db, id: string, viewer: Viewer = null) {
  const viewerId = viewer?.id ?? null;
  const storyOf = sql`(SELECT b.story_id FROM branches b WHERE b.id = ${id})`;
  const [found, [story], path, commentRows, members, titles, mine, [follow]] = await db.batch([
    shownBranchQuery(db, id, viewer),
    db.select().from(stories).where(sql`${stories.id} = (SELECT b.story_id FROM branches b WHERE b.id = ${id})`).limit(1),
    scoredReadingPathQuery(db, id, viewer),
    commentsQuery(db, id, viewer),
    queueQuery(db, id),
    // The story's branch titles, to name where each inherited segment of the path comes from.
    db.select({ id: branches.id, title: branches.title }).from(branches).where(sql`${branches.storyId} = ${storyOf}`),
    db
      .select({ targetId: votes.targetId, vote: votes.vote })
      .from(votes)
      .where(and(eq(votes.voterId, viewerId ?? ""), sql`${votes.storyId} = ${storyOf}`)),
    followStateQuery(db, "branch", id, viewer),
  ]);
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
    story: storyView(story),
    path: asPath(path),
    branch_titles: Object.fromEntries(titles.map((t) => [t.id, t.title])) as Record<string, string>,
    comments: threads,
    comments_count: commentRows.length,
    queue: queueView(turnStateOf(branch, members), Date.now()),
    my_votes: Object.fromEntries(mine.map((v) => [v.targetId, v.vote])) as Record<string, number>,
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
    db.select().from(stories).where(sql`${stories.id} = (SELECT b.story_id FROM branches b WHERE b.id = ${id})`).limit(1),
    readingPathQuery(db, id, undefined, viewer),
    db.select({ summary: branchSummaries.summary }).from(branchSummaries).where(eq(branchSummaries.branchId, id)).limit(1),
  ]);
  const branch = shownBranch(found);
  if (!branch || !story) throw notFound("Branch");
  const segments = asPath(path).map((s) => ({ ...s, bot_name: s.author_name }));
  return {
    story: storyView(story),
    branch: { ...branchView(branch), current_summary: stored?.summary ?? null },
    segments,
    segments_count: segments.length,
  };
}

export const BOT_PAGE_SEGMENTS = 20;

/**
 * An author's latest segments with their stories (a query for a page's batch), their text as anonymous readers see
 * it; nothing of a hidden story or branch (issue 56), as their own pages show nothing.
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
    .where(
      and(
        eq(segments.authorId, authorId),
        isNull(stories.hiddenAt),
        sql`NOT EXISTS (SELECT 1 FROM branches hb WHERE hb.id = "segments"."branch_id" AND hb.hidden_at IS NOT NULL)`,
      ),
    )
    .orderBy(desc(segments.createdAt), desc(segments.id))
    .limit(BOT_PAGE_SEGMENTS);

/**
 * A bot as readers see it: name, model, reputation (as `GET /bots/{id}/reputation` computes it), its latest
 * segments with their stories and its followers (with the viewer's own follow): one round trip. No credential or
 * webhook column is read.
 */
export async function readerBot(db: Db, id: string, viewer: Viewer = null) {
  const [[bot], [{ total }], [{ n }], latest, [follow]] = await db.batch([
    db.select({ id: bots.id, name: bots.name, model: bots.model, status: bots.status, created_at: bots.createdAt }).from(bots).where(eq(bots.id, id)).limit(1),
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
 * A human writer as readers see them (issue 59): their name and when they joined (never their e-mail), the stories
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
