import { idInStory } from "../../lib/ids";
import type { z } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../../db/client";
import { nowIso, rawAll, rawRun, readOf, runRead } from "../../db/client";
import { preparedByShape } from "../../db/compile";
import { jsonRows } from "../../db/json-rows";
import { JsonText } from "../../lib/json-text";
import { branches, stories, type StoryRow, visible } from "../../db/schema";
import type { ContentWarning, Rating } from "../../config";
import type { Tag } from "../../lib/tag-rule";
import type { storyListItemSchema } from "../../schemas/stories";
import { authorshipOf } from "../shared/authorship";
import { newBranchRow } from "./branches";
import { followersCount, ownerFollowStatements } from "../following/follows";
import { activePinsQuery, pinView } from "./pins";
import { type Actor, ownedBy, writerType } from "../shared/actor";
import { type Viewer, storyShown } from "../shared/visibility";
import { ApiError, notFound } from "../../lib/errors";
import { pagination } from "../../lib/pagination";
import { type IdempotentRequest, commit, recordStatements } from "../shared/idempotency";
import { storyEvent, writtenEvents } from "../events/inbox-events";
import { checkLength, contentLength } from "../shared/length";
import { reindexStory } from "../discovery/search-index";
import { searchChangedSet } from "../discovery/search-move";
import { type NewSegment, logCountsSql, segmentStatements } from "./segments";
import { type FilterShape, type ReaderPreference, shapeKey } from "../discovery/story-filter";
import { type StoryListQuery, type StoryListValues, shownBranchesCount, storyListOf, storyListSql } from "./story-list";
import { storyTagStatements, storyTagsColumn, untagStatement } from "../discovery/tags";

export const MAIN_LINE_TITLE = "main line";
const LIST_BACKGROUND_CHARS = 200;

export interface NewStory {
  title: string;
  background: string;
  starter: string;
  initial_segments: string[];
  style_rules?: string | null;
  language: string;
  min_length: number;
  max_length: number;
  story_pack?: Record<string, unknown> | null;
  tags: Tag[];
  rating: Rating;
  warnings: ContentWarning[];
}

/** A story record: its row, with its tags' spellings in order (`storyTagsColumn`). */
export function storyView(s: StoryRow, tags: string[]) {
  return {
    id: s.id,
    title: s.title,
    background: s.background,
    starter: s.starter,
    style_rules: s.styleRules,
    language: s.language,
    min_length: s.minLength,
    max_length: s.maxLength,
    owner_id: s.ownerId,
    owner_type: s.ownerType,
    status: s.status,
    story_pack: (s.storyPack as Record<string, unknown> | null) ?? null,
    tags,
    rating: s.rating,
    warnings: s.warnings,
    ...authorshipOf(s.botSegmentsCount, s.segmentsCount),
    hidden: s.hiddenAt !== null,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
  };
}

/**
 * The story, its main line, the starter and the initial segments, and its owner's follow of it: one atomic batch,
 * all or nothing; with its inbox event when someone follows its owner (`events`, to hand to the fan-out queue).
 */
export async function createStory(db: Db, actor: Actor, input: NewStory, idem?: IdempotentRequest) {
  const rules = { language: input.language, minLength: input.min_length, maxLength: input.max_length };
  const lengths = input.initial_segments.map((content, index) => checkLength(content, rules, { field: "initial_segments", index }));
  const now = nowIso();
  const written = 1 + input.initial_segments.length;
  const byBots = actor.type === "bot" ? written : 0;
  const story: StoryRow = {
    ...visible,
    id: crypto.randomUUID(),
    title: input.title,
    background: input.background,
    starter: input.starter,
    styleRules: input.style_rules ?? null,
    language: input.language,
    minLength: input.min_length,
    maxLength: input.max_length,
    ownerId: actor.id,
    ownerType: writerType(actor),
    status: "active",
    storyPack: input.story_pack ?? null,
    rating: input.rating,
    warnings: input.warnings,
    segmentsCount: written,
    botSegmentsCount: byBots,
    continuationsCount: 0, // its initial segments are `new` entries
    createdAt: now,
    updatedAt: now,
    // Behind in its search shard from the start (src/domain/discovery/search-move.ts): its first sync copies it.
    searchVersion: 1,
    searchSynced: 0,
    searchUpto: 0,
    searchDirtyAt: now,
  };
  const main = newBranchRow(actor, now, {
    storyId: story.id,
    title: MAIN_LINE_TITLE,
    description: null,
    isMain: true,
    parentBranchId: null,
    forkAtSegmentId: null,
    forkSequence: 0,
    segmentsCount: written,
    botSegmentsCount: byBots,
  });
  const contents = [input.starter, ...input.initial_segments];
  const segs: NewSegment[] = [];
  contents.forEach((content, i) => {
    segs.push({
      id: idInStory(story.id),
      branchId: main.id,
      storyId: story.id,
      author: actor,
      content,
      contentLength: i === 0 ? contentLength(content, input.language) : lengths[i - 1],
      sequenceOrder: i + 1,
      isStarter: i === 0,
      createdAt: now,
      parentSegmentId: i === 0 ? null : segs[i - 1].id,
      kind: "new",
    });
  });
  const created = {
    ...storyView(
      story,
      input.tags.map((t) => t.name),
    ),
    main_branch_id: main.id,
  };
  const event = storyEvent(db, story);
  const statements: BatchItem<"sqlite">[] = [
    db.insert(stories).values(story),
    ...storyTagStatements(db, story.id, input.tags, now),
    db.insert(branches).values(main),
    ...segs.flatMap((s) => segmentStatements(db, s)),
    // The log's counters over all time, once for the story's initial entries.
    ...logCountsSql(sql`story_id = ${story.id}`).map((q) => rawRun(db, q)),
    ...ownerFollowStatements(db, story),
    event.statement,
    ...recordStatements(db, idem, { status: 201, data: created }),
  ];
  const results = await commit(() => db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]));
  return { created, events: writtenEvents(statements, results, [event]) };
}

/** A row of `GET /stories` as SQLite's JSON, its keys in the answer's order. */
const storyListJson = jsonRows<StoryListItem>({
  id: "value",
  title: "value",
  background: "value",
  language: "value",
  owner_type: "value",
  status: "value",
  branches_count: "value",
  bots_count: "value",
  created_at: "value",
  tags: "json",
  rating: "value",
  warnings: "json",
  authorship: "value",
  bot_share: "value",
});

/** What a row of `GET /stories` selects on `stories s` (its labels and sort are the list's: `storyListSql`). */
const storyListColumns = sql`s.id, s.title, substr(s.background, 1, ${LIST_BACKGROUND_CHARS}) AS background, s.language, s.owner_type, s.status,
  ${shownBranchesCount} AS branches_count, (SELECT count(DISTINCT m.bot_id) FROM branch_members m WHERE m.story_id = s.id) AS bots_count, s.created_at`;

/** `listStories`' one statement: the total, and the page as JSON; its text is one per filter shape (`shapeKey`). */
const storiesPage = preparedByShape(shapeKey, (v: StoryListValues, shape: FilterShape) => {
  const list = storyListSql(v, shape, storyListColumns);
  return sql`SELECT (${list.total}) AS total, ${storyListJson(list.page, list.order("r"))} AS stories`;
});

/**
 * Stories by a filter (src/domain/stories/story-list.ts; hidden ones unlisted), in the sort's order, a page and the total in
 * one statement, SQLite writing the page as JSON (`jsonRows`). Its size is bounded (100 rows of a title of 100, a
 * background cut to 200 characters and at most 10 tags of 50: under 300 KB as JSON).
 */
export async function listStories(db: Db, q: StoryListQuery, preference: ReaderPreference = null) {
  const { values, shape } = storyListOf(q, preference);
  const [{ total, stories }] = await rawAll<{ total: number; stories: string }>(db, storiesPage(values, shape));
  return { stories: new JsonText<StoryListItem[]>(stories), count: total, pagination: pagination(q.limit, q.offset, total) };
}

/** A row of `GET /stories`. */
type StoryListItem = z.infer<typeof storyListItemSchema>;

/** The story (404 when hidden from the viewer) with its main line's id, its active pins and its followers: one round trip. */
export const getStory = (db: Db, id: string, viewer: Viewer = null) => runRead(db, storyRead(db, id, viewer));

/** `getStory` as a read that can share a round trip (`oneTrip`). */
export function storyRead(db: Db, id: string, viewer: Viewer = null) {
  return readOf(
    [
      // A subquery, not a join: D1 batch results are keyed by column name, and both tables have an `id`.
      db
        .select({
          story: stories,
          tags: storyTagsColumn,
          mainBranchId: sql<string | null>`(SELECT b.id FROM branches b WHERE b.story_id = "stories"."id" AND b.is_main = 1)`,
          followers: sql<number>`${followersCount(sql`'story'`, sql`"stories"."id"`)}`,
        })
        .from(stories)
        .where(and(eq(stories.id, id), storyShown('"stories"', viewer)))
        .limit(1),
      activePinsQuery(db, id),
    ],
    ([[story], activePins]) => {
      if (!story) throw notFound("Story");
      return { ...storyView(story.story, story.tags), main_branch_id: story.mainBranchId, pins: activePins.map(pinView), followers_count: story.followers };
    },
  );
}

export interface StoryPatch {
  status?: "active" | "archived";
  title?: string;
  background?: string;
  style_rules?: string | null;
  /** The story's tags, all of them (the old ones replaced). */
  tags?: Tag[];
  rating?: Rating;
  warnings?: ContentWarning[];
}

/** The ids of a story's branches (to tell their live streams about the story). */
export async function storyBranchIds(db: Db, storyId: string): Promise<string[]> {
  const rows = await db.select({ id: branches.id }).from(branches).where(eq(branches.storyId, storyId));
  return rows.map((r) => r.id);
}

/**
 * Owner or admin only: one batch of the conditional UPDATE, the tags' replacement and the search index's row under the
 * same condition, and the story's tags as they then are; a read only to tell 404 from 403 when it matched nothing.
 */
export async function updateStory(db: Db, actor: Actor, id: string, patch: StoryPatch) {
  const now = nowIso();
  const set: Partial<StoryRow> = { updatedAt: now };
  if (patch.status !== undefined) set.status = patch.status;
  if (patch.title !== undefined) set.title = patch.title;
  if (patch.background !== undefined) set.background = patch.background;
  if (patch.style_rules !== undefined) set.styleRules = patch.style_rules;
  if (patch.rating !== undefined) set.rating = patch.rating;
  if (patch.warnings !== undefined) set.warnings = patch.warnings;
  const mine = and(eq(stories.id, id), ownedBy(actor, stories.ownerId));
  const changeable = sql`EXISTS (SELECT 1 FROM stories WHERE ${mine})`;
  const retag = patch.tags ? [untagStatement(db, id, changeable), ...storyTagStatements(db, id, patch.tags, now, changeable)] : [];
  const [[row], ...rest] = await db.batch([
    db
      .update(stories)
      .set({ ...set, ...searchChangedSet(now) })
      .where(mine)
      .returning(),
    ...retag,
    ...reindexStory(db, id, patch, changeable),
    db.select({ tags: storyTagsColumn }).from(stories).where(eq(stories.id, id)),
  ]);
  const [current] = rest.at(-1) as { tags: string[] }[];
  if (row) return storyView(row, current.tags);
  if (!current) throw notFound("Story");
  throw new ApiError("PERMISSION_DENIED", "Only the story's owner or an admin may change it");
}
