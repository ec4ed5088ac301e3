import { type SQL, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll, rawRun } from "../../db/client";
import { prepared, preparedByShape } from "../../db/compile";
import type { ActorType } from "../shared/actor";
import { type LimitValues, type SegmentLimits, type SegmentUsage, limitValues, underLimits, usageSql } from "./segment-quota";
import { legacyIndexSql } from "../discovery/search-index";
import { searchChanged } from "../discovery/search-move";
import { type NewSegment, type SegmentValues, insertLog, insertSegment, segmentLogCountsSql, segmentValues } from "./segments";
import { SEGMENTS_ITEM, itemWrites, ownerHearsAtWriteSql } from "../following/fanout";
import { segmentEventSql } from "../events/inbox-events";
import { type Subject, inGoodStanding } from "../standing/rule";
import { takesWrites } from "../shared/writable";

/** The writer's limits for one write: whether the per-branch one applies, and the write's time. */
export interface Quota {
  limits: SegmentLimits;
  perBranch: boolean;
  now: number;
}

/** What decides the text of a room's segment INSERT: the writer's type, and which limits it counts (none: an admin). */
interface Shape {
  type: ActorType;
  limits: "none" | "all" | "branch";
}

/** The inbox's numbers a write's own item for the story's owner follows (the fan-out's, src/config.ts). */
export interface InboxBounds {
  collapseMs: number;
  itemsPerAccount: number;
}

type WriteValues = SegmentValues &
  LimitValues & { subjectId: string; jti: string; issuedAt: string; now: string; itemKey: string; windowStart: string; itemsPerAccount: number };

/** SQL (`AND …`): the segment `id` was written by this batch; the later statements of a write depend on it. */
export const written = (id: string): SQL => sql`AND EXISTS (SELECT 1 FROM segments WHERE id = ${id})`;

/**
 * The segment's INSERT as its room writes it: only while its story is active and neither it nor the branch is
 * hidden, its writer in good standing (the session not revoked) and under every limit that applies, so a refused
 * write inserts nothing (no statement of its own for any check).
 */
export function guardedSegmentSql(v: WriteValues, s: Shape): SQL {
  const standing = inGoodStanding({ id: v.subjectId, type: s.type, jti: v.jti, issuedAt: v.issuedAt }, { claimed: s.type, composed: true }, v.now);
  const limits = s.limits === "none" ? sql`` : sql` AND ${underLimits(v, s.limits === "branch")}`;
  return insertSegment(v, sql`WHERE ${takesWrites({ storyId: v.storyId, branchId: v.branchId })} AND ${standing}${limits}`);
}

/** The branch's segment counters (all, and by bots: its authorship), bumped only if the segment was written. */
export const countedOnBranchSql = (v: SegmentValues): SQL =>
  sql`UPDATE branches SET segments_count = segments_count + 1, bot_segments_count = bot_segments_count + (${v.authorType} = 'bot'),
    updated_at = ${v.createdAt} WHERE id = ${v.branchId} ${written(v.id)}`;

/**
 * The story's segment counters (its authorship, src/domain/shared/authorship.ts; its continuations, the dashboard's
 * most continued story, which the pruned logs no longer count) and its search version (the shard learns of the
 * segment: src/domain/discovery/search-move.ts), bumped only if the segment was written.
 */
export const countedOnStorySql = (v: SegmentValues): SQL =>
  sql`UPDATE stories SET segments_count = segments_count + 1, bot_segments_count = bot_segments_count + (${v.authorType} = 'bot'),
    continuations_count = continuations_count + (${v.kind} = 'continuation'),
    ${searchChanged(v.createdAt)} WHERE id = ${v.storyId} ${written(v.id)}`;

const guardedSegment = preparedByShape((s: Shape) => `${s.type} ${s.limits}`, guardedSegmentSql);
const loggedSegment = prepared(insertLog);
const countedOnBranch = prepared(countedOnBranchSql);
const countedOnStory = prepared(countedOnStorySql);
const indexedSegment = prepared(legacyIndexSql);
const logCounts = [0, 1].map((i) => prepared((v: SegmentValues) => segmentLogCountsSql(v)[i]));
const usage = prepared(usageSql);
const segmentEvent = prepared(segmentEventSql);

/** The story's owner, when another account writes on its main line and they follow it (as they do from its creation). */
const ownerToTell = (v: WriteValues): SQL =>
  sql`SELECT s.owner_id AS id FROM stories s WHERE s.id = ${v.storyId} AND s.owner_id != ${v.authorId} AND ${ownerHearsAtWriteSql(sql`s.owner_id`, v.storyId, v.branchId)}`;

/**
 * The owner's inbox item, written in the segment's own batch (only if the segment was): a story's owner hears of
 * every other account's main-line segment, so a fan-out step through the queue for them alone would cost each such
 * write a queue message and two more batches (the fan-out leaves them out: src/domain/following/fanout.ts).
 */
export const ownerItemSql = (v: WriteValues): [SQL, SQL, SQL] =>
  itemWrites(
    {
      kindOf: () => sql`${SEGMENTS_ITEM.kind}`,
      keyOf: () => sql`${v.itemKey}`,
      storyId: v.storyId,
      branchId: v.branchId,
      segmentId: v.id,
      commentId: null,
      actorId: v.authorId,
      data: null,
      eventId: v.id,
      weight: 1,
      at: v.createdAt,
      windowStart: v.windowStart,
      itemsPerAccount: v.itemsPerAccount,
    },
    ownerToTell(v),
    sql`EXISTS (SELECT 1 FROM segments WHERE id = ${v.id})`,
  );

const ownerItem = [0, 1, 2].map((i) => prepared((v: WriteValues) => ownerItemSql(v)[i]));

/** Limit values for a write that counts none (an admin's): its statements never read them. */
const NO_LIMITS: SegmentLimits = { perHour: 0, perDay: 0, perBranchPerHour: null };

/** What a room's write binds, and its shape. */
export function writeValues(seg: NewSegment, subject: Subject, quota: Quota | null, inbox: InboxBounds): { values: WriteValues; shape: Shape } {
  const segment = segmentValues(seg);
  const values: WriteValues = {
    ...segment,
    ...limitValues(seg.author.id, seg.branchId, quota?.limits ?? NO_LIMITS, quota?.now ?? 0),
    subjectId: subject.id,
    // `revoked` tests `jti ?? ""` (and the key's replacement `issuedAt ?? ""`): bound as the statement built with the value would bind it.
    jti: subject.jti ?? "",
    issuedAt: subject.issuedAt ?? "",
    now: nowIso(),
    itemKey: `${SEGMENTS_ITEM.keyPrefix}${segment.branchId}`,
    windowStart: new Date(Date.parse(segment.createdAt) - inbox.collapseMs).toISOString(),
    itemsPerAccount: inbox.itemsPerAccount,
  };
  return { values, shape: { type: subject.type, limits: quota ? (quota.perBranch ? "branch" : "all") : "none" } };
}

/**
 * A segment written by its branch's room, as prepared statements (compiled once per shape, src/db/compile.ts: a
 * write's SQL was most of its Drizzle time and garbage): the guarded segment, its log entry and the log's counters
 * over all time (`segmentLogCountsSql`: two statements, the logs being pruned), the branch's and the
 * story's counters and search version, its row in D1's index (a legacy story's only), its story owner's inbox item (`ownerItemSql`) and its inbox event (`event`:
 * only when someone else follows the branch, the writer or, on the main line, the story), each later one only if the
 * segment was written; and, with limits, the read of the writer's usage that ends the batch (`usage`).
 */
export function segmentWrite(db: Db, { values: v, shape }: ReturnType<typeof writeValues>) {
  const event = rawAll<{ id: string }>(db, segmentEvent(v));
  return {
    statements: [
      rawRun(db, guardedSegment(v, shape)),
      rawRun(db, loggedSegment(v)),
      ...logCounts.map((statement) => rawRun(db, statement(v))),
      rawRun(db, countedOnBranch(v)),
      rawRun(db, countedOnStory(v)),
      rawRun(db, indexedSegment(v)),
      ...ownerItem.map((statement) => rawRun(db, statement(v))),
      event,
    ] as const,
    event,
    usage: shape.limits === "none" ? null : rawAll<SegmentUsage>(db, usage(v)),
  };
}
