import { and, asc, count, desc, eq, isNull, sql, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../db/client";
import { nowIso, rawRun, readOf, runRead } from "../../db/client";
import { WholeRow, rowWhere } from "../../db/whole-row";
import { branches, segments, stories, type BranchRow, visible } from "../../db/schema";
import { notFound, storyArchived, validationError } from "../../lib/errors";
import { idInStory, isUuid } from "../../lib/ids";
import { pagination } from "../../lib/pagination";
import { round3 } from "../../lib/round";
import { queueView } from "../../turns/rules";
import { queueQuery, turnStateOf } from "../../turns/store";
import { type Actor, writerType } from "../shared/actor";
import { type IdempotentRequest, commit, recordStatements } from "../shared/idempotency";
import { checkLength } from "../shared/length";
import { followStateQuery } from "../following/follows";
import { type Viewer, branchShown, storyShown } from "../shared/visibility";
import {
  type NewSegment,
  asSegments,
  branchHeadQuery,
  rowOf,
  segmentLogCountsSql,
  segmentRecords,
  segmentStatements,
  segmentValues,
  segmentView,
} from "./segments";
import { countedOnStorySql } from "./segment-write";
import { authorshipOf } from "../shared/authorship";
import { branchEvent, writtenEvents } from "../events/inbox-events";
import { newBranchMessages, newBranchRecipients, outboxStatements } from "../events/webhook-events";
import { type WriteTarget, closedError, takesWrites } from "../shared/writable";

export type BranchSort = "activity" | "created_at" | "vote_score";

const activityExpr = sql<number>`(0.5 * ${branches.voteScore} + 0.3 * ${branches.segmentsCount} + 0.2 * ${branches.activeBotsCount})`;

export const activityScore = (b: Pick<BranchRow, "voteScore" | "segmentsCount" | "activeBotsCount">) =>
  round3(0.5 * b.voteScore + 0.3 * b.segmentsCount + 0.2 * b.activeBotsCount);

export function branchView(b: BranchRow) {
  return {
    id: b.id,
    story_id: b.storyId,
    title: b.title,
    description: b.description,
    parent_branch_id: b.parentBranchId,
    fork_at_segment_id: b.forkAtSegmentId,
    is_main: b.isMain,
    creator_bot_id: b.creatorType === "bot" ? b.creatorId : null,
    creator_id: b.creatorId,
    creator_type: b.creatorType,
    status: b.status,
    segments_count: b.segmentsCount,
    active_bots_count: b.activeBotsCount,
    vote_score: b.voteScore,
    activity_score: activityScore(b),
    ...authorshipOf(b.botSegmentsCount, b.segmentsCount),
    hidden: b.hiddenAt !== null,
    created_at: b.createdAt,
  };
}

type BranchPlace = Pick<
  BranchRow,
  "storyId" | "title" | "description" | "isMain" | "parentBranchId" | "forkAtSegmentId" | "forkSequence" | "segmentsCount" | "botSegmentsCount"
>;

/** A new branch's row: where it sits, with empty counters and no turn. */
export function newBranchRow(creator: Actor, now: string, place: BranchPlace): BranchRow {
  return {
    ...visible,
    id: idInStory(place.storyId),
    ...place,
    creatorId: creator.id,
    creatorType: writerType(creator),
    status: "active",
    activeBotsCount: 0,
    voteScore: 0,
    currentTurnBotId: null,
    turnDeadline: null,
    createdAt: now,
    updatedAt: now,
  };
}

type Link = Pick<BranchRow, "id" | "parentBranchId" | "forkSequence" | "isMain" | "forkAtSegmentId">;

/** True when segment (branch, sequence) lies on `branchId`'s reading path: ancestors up to each fork point. */
function onReadingPath(links: Map<string, Link>, branchId: string, seg: { branchId: string; sequenceOrder: number }) {
  let cap = Number.POSITIVE_INFINITY;
  for (let b = links.get(branchId); b; b = b.parentBranchId ? links.get(b.parentBranchId) : undefined) {
    if (b.id === seg.branchId) return seg.sequenceOrder <= cap;
    cap = Math.min(cap, b.forkSequence);
  }
  return false;
}

export interface NewBranch {
  title: string;
  description?: string | null;
  fork_at_segment_id?: string;
  parent_branch_id?: string;
  initial_segment?: string;
}

async function readForkContext(db: Db, actor: Actor, storyId: string, input: NewBranch) {
  const forkId = isUuid(input.fork_at_segment_id) ? input.fork_at_segment_id.toLowerCase() : "";
  const parentId = isUuid(input.parent_branch_id) ? input.parent_branch_id.toLowerCase() : null;
  const parentExpr = parentId ? sql`${parentId}` : sql`(SELECT id FROM branches WHERE story_id = ${storyId} AND is_main = 1)`;
  const [[story], links, [forkSeg], [head], recipients] = await db.batch([
    db.select().from(stories).where(eq(stories.id, storyId)).limit(1),
    db
      .select({
        id: branches.id,
        parentBranchId: branches.parentBranchId,
        forkSequence: branches.forkSequence,
        isMain: branches.isMain,
        forkAtSegmentId: branches.forkAtSegmentId,
      })
      .from(branches)
      .where(eq(branches.storyId, storyId)),
    db
      .select({ id: segments.id, branchId: segments.branchId, storyId: segments.storyId, sequenceOrder: segments.sequenceOrder })
      .from(segments)
      .where(eq(segments.id, forkId))
      .limit(1),
    branchHeadQuery(db, parentExpr),
    newBranchRecipients(db, storyId, actor.id),
  ]);
  return { story, links, forkSeg, head, recipients };
}

/**
 * Where the new branch forks: validated against the story, defaulting to the parent's (or main line's) head; with
 * what the fork may not be written from when hidden (`takesWrites`): the parent's line, and a segment it names.
 */
function resolveFork(ctx: ForkContext, storyId: string, input: NewBranch) {
  const links = new Map(ctx.links.map((l) => [l.id, l]));
  const fork = forkPoint(ctx, links, storyId, input);
  const segmentId = input.fork_at_segment_id === undefined ? null : fork.forkAt;
  const from: WriteTarget = { storyId, branchId: fork.parentId, withAncestors: true, segmentId };
  return { ...fork, from };
}

type ForkContext = Awaited<ReturnType<typeof readForkContext>>;

function forkPoint(ctx: ForkContext, links: Map<string, Link>, storyId: string, input: NewBranch) {
  const main = ctx.links.find((l) => l.isMain);
  if (input.parent_branch_id !== undefined && !links.has(input.parent_branch_id.toLowerCase())) {
    throw validationError([{ field: "parent_branch_id", issue: "is not a branch of this story" }]);
  }
  if (input.fork_at_segment_id !== undefined) {
    const seg = ctx.forkSeg;
    if (!seg || seg.storyId !== storyId) {
      throw validationError([{ field: "fork_at_segment_id", issue: "is not a segment of this story" }]);
    }
    const parentId = input.parent_branch_id?.toLowerCase() ?? seg.branchId;
    if (!onReadingPath(links, parentId, seg)) {
      throw validationError([{ field: "fork_at_segment_id", issue: "is not on the reading path of parent_branch_id" }]);
    }
    return { parentId, forkAt: seg.id, forkSequence: seg.sequenceOrder };
  }
  const parent = links.get(input.parent_branch_id?.toLowerCase() ?? main!.id)!;
  if (ctx.head) return { parentId: parent.id, forkAt: ctx.head.id, forkSequence: ctx.head.sequenceOrder };
  return { parentId: parent.id, forkAt: parent.forkAtSegmentId, forkSequence: parent.forkSequence };
}

export async function createBranch(db: Db, actor: Actor, storyId: string, input: NewBranch, idem?: IdempotentRequest) {
  const ctx = await readForkContext(db, actor, storyId, input);
  if (!ctx.story) throw notFound("Story");
  if (ctx.story.status !== "active") throw storyArchived();
  const fork = resolveFork(ctx, storyId, input);
  const story = ctx.story;
  const length = input.initial_segment === undefined ? 0 : checkLength(input.initial_segment, story, { field: "initial_segment" });
  const now = nowIso();
  const branch = newBranchRow(actor, now, {
    storyId,
    title: input.title,
    description: input.description ?? null,
    isMain: false,
    parentBranchId: fork.parentId,
    forkAtSegmentId: fork.forkAt,
    forkSequence: fork.forkSequence,
    segmentsCount: input.initial_segment === undefined ? 0 : 1,
    botSegmentsCount: input.initial_segment !== undefined && actor.type === "bot" ? 1 : 0,
  });
  const seg: NewSegment | null =
    input.initial_segment === undefined
      ? null
      : {
          id: idInStory(storyId),
          branchId: branch.id,
          storyId,
          author: actor,
          content: input.initial_segment,
          contentLength: length,
          sequenceOrder: fork.forkSequence + 1,
          createdAt: now,
          parentSegmentId: fork.forkAt,
          kind: "fork",
        };
  const view = branchView(branch);
  const created = { ...view, branch: view, ...(seg ? { segment: segmentView(rowOf(seg)) } : {}) };
  const announcements = newBranchMessages(view, story.title, actor, ctx.recipients);
  // Written only while nothing it forks from is hidden (forking hidden content is 404); the rest of the batch only with it.
  const written = sql`EXISTS (SELECT 1 FROM branches WHERE id = ${branch.id})`;
  const event = branchEvent(db, { id: branch.id, storyId, creatorId: actor.id, forkAt: fork.forkAt, createdAt: now }, written);
  const statements: BatchItem<"sqlite">[] = [
    db.insert(branches).select(rowWhere(branches, branch, takesWrites(fork.from))),
    ...(seg
      ? [
          ...segmentStatements(db, seg, sql`WHERE ${written}`),
          ...segmentLogCountsSql(seg).map((q) => rawRun(db, q)),
          rawRun(db, countedOnStorySql(segmentValues(seg))),
        ]
      : []),
    ...outboxStatements(db, announcements, sql`AND ${written}`),
    event.statement,
    ...recordStatements(db, idem, { status: 201, data: created }, sql`AND ${written}`),
  ];
  const results = await commit(() => db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]));
  if ((results[0] as D1Result).meta.changes !== 1) throw (await closedError(db, fork.from)) ?? storyArchived();
  return { branch: created, announcements, events: writtenEvents(statements, results, [event]) };
}

const SORTS: Record<BranchSort, SQL[]> = {
  activity: [desc(activityExpr), asc(branches.createdAt)],
  created_at: [asc(branches.createdAt)],
  vote_score: [desc(branches.voteScore), asc(branches.createdAt)],
};

/** The story, unless it is hidden from the viewer (a query for a batch: no row means 404). */
export const shownStoryQuery = (db: Db, storyId: string, viewer: Viewer) =>
  db
    .select({ id: stories.id })
    .from(stories)
    .where(and(eq(stories.id, storyId), storyShown('"stories"', viewer)))
    .limit(1);

/** The main line first whatever the sort; hidden branches unlisted; page and total in one round trip. */
export const listBranches = (db: Db, storyId: string, opts: BranchListOptions, viewer: Viewer = null) => runRead(db, branchListRead(db, storyId, opts, viewer));

export interface BranchListOptions {
  sort: BranchSort;
  includeAll: boolean;
  limit: number;
  offset: number;
}

/** `listBranches` as a read that can share a round trip (`oneTrip`). */
export function branchListRead(db: Db, storyId: string, opts: BranchListOptions, viewer: Viewer = null) {
  const listed = isNull(branches.hiddenAt);
  const where = opts.includeAll ? and(eq(branches.storyId, storyId), listed) : and(eq(branches.storyId, storyId), eq(branches.status, "active"), listed);
  return readOf(
    [
      shownStoryQuery(db, storyId, viewer),
      db
        .select()
        .from(branches)
        .where(where)
        .orderBy(desc(branches.isMain), ...SORTS[opts.sort], asc(branches.id))
        .limit(opts.limit)
        .offset(opts.offset),
      db.select({ total: count() }).from(branches).where(where),
    ],
    ([story, rows, [{ total }]]) => {
      if (!story.length) throw notFound("Story");
      return { branches: rows.map(branchView), pagination: pagination(opts.limit, opts.offset, total) };
    },
  );
}

export interface TreeNode {
  id: string;
  title: string;
  parent_branch_id: string | null;
  fork_at_segment_id: string | null;
  segments_count: number;
  /** Child nodes of the same shape (typed loosely so the response type is not recursive). */
  children: unknown[];
}

/** The tree without hidden branches (and what forks from them: their reading paths pass through hidden text). */
export const branchTree = (db: Db, storyId: string, viewer: Viewer = null) => runRead(db, branchTreeRead(db, storyId, viewer));

/** `branchTree` as a read that can share a round trip (`oneTrip`). */
export function branchTreeRead(db: Db, storyId: string, viewer: Viewer = null) {
  return readOf(
    [
      shownStoryQuery(db, storyId, viewer),
      db
        .select()
        .from(branches)
        .where(and(eq(branches.storyId, storyId), isNull(branches.hiddenAt)))
        .orderBy(desc(branches.isMain), asc(branches.createdAt)),
    ],
    ([story, rows]) => {
      if (!story.length) throw notFound("Story");
      return { tree: treeOf(rows) };
    },
  );
}

/** Branches (parents before their children, as the tree's query orders them) as a forest. */
function treeOf(rows: BranchRow[]): TreeNode[] {
  const nodes = new Map<string, TreeNode>(
    rows.map((b) => [
      b.id,
      { id: b.id, title: b.title, parent_branch_id: b.parentBranchId, fork_at_segment_id: b.forkAtSegmentId, segments_count: b.segmentsCount, children: [] },
    ]),
  );
  const roots: TreeNode[] = [];
  for (const node of nodes.values()) {
    if (!node.parent_branch_id) roots.push(node);
    else nodes.get(node.parent_branch_id)?.children.push(node);
  }
  return roots;
}

const branchRow = new WholeRow(branches, "b");

/** The branch's row when the viewer may see it (none otherwise): usable inside `db.batch()`; read it with `shownBranch`. */
export const shownBranchQuery = (db: Db, id: string, viewer: Viewer) =>
  branchRow.query(db, sql`FROM branches b WHERE b.id = ${id} AND ${branchShown("b", viewer)} LIMIT 1`);

/** The titles of a story's branches (`storyOf`: a SQL expression that selects the story) that the viewer may see. */
export const shownBranchTitlesQuery = (db: Db, storyOf: SQL, viewer: Viewer) =>
  db
    .select({ id: branches.id, title: branches.title })
    .from(branches)
    .where(and(sql`${branches.storyId} = ${storyOf}`, branchShown('"branches"', viewer)));

/** The result of a `shownBranchQuery`: the branch, or undefined. */
export const shownBranch = (rows: Record<string, unknown>[]): BranchRow | undefined => (rows[0] ? branchRow.decode(rows[0]) : undefined);

export const BRANCH_DETAIL_SEGMENTS = 50;

/** The branch (404 when hidden from the viewer), its followers, first segments and turn queue (as D1 holds it): one round trip. */
export async function getBranchDetail(db: Db, id: string, viewer: Viewer = null) {
  const [found, segs, members, [followed]] = await db.batch([
    shownBranchQuery(db, id, viewer),
    segmentRecords(db, viewer, sql`WHERE s.branch_id = ${id} ORDER BY s.sequence_order LIMIT ${BRANCH_DETAIL_SEGMENTS}`),
    queueQuery(db, id),
    followStateQuery(db, "branch", id, null),
  ]);
  const branch = shownBranch(found);
  if (!branch) throw notFound("Branch");
  const queue = queueView(turnStateOf(branch, members), Date.now());
  return { ...branchView(branch), followers_count: followed.followers, segments: asSegments(segs), queue };
}
