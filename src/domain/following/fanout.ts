import { type SQL, sql } from "drizzle-orm";
import { type Db, rawAll, rawRun } from "../../db/client";
import type { InboxEventRow } from "../../db/schema";
import type { FollowTarget } from "../../schemas/follows";
import type { InboxKind } from "../../schemas/inbox";
import { branchShown, storyShown } from "../shared/visibility";
import { accountNotSuspendedSql } from "../standing/rule";

/**
 * The inbox's fan-out: one step writes one page of an event's audience into their inboxes, in one D1
 * batch, so no consumer invocation does unbounded work (a story with 100,000 followers is 200 steps of 500, each a
 * queue message of its own: src/queue/fanout.ts).
 *
 * - The audience is the event's followers (of its branch, story or author) and its recipient, in follower id
 *   order from the event's `cursor` (keyset): one `UNION` of index range scans, each account once, however many
 *   of the event's targets it follows. The actor is never told of their own action. A segment on a story's main
 *   line reaches the story's followers too, in the same item as the branch's followers get (one key per branch),
 *   so whoever follows both the story and its main line hears of a run of segments once.
 * - Exclusions are in the same SQL, checked at every page: nothing about hidden content (as anonymous readers see
 *   it), nothing by an account suspended now (the event then settles with no inbox written).
 * - Collapse: an unread item of the same key whose window (from its first event) covers the event takes it
 *   (count + weight, latest segment, moved to the top); else a new item. A read item never collapses further.
 * - Exactly once: the page's writes are conditional on the event's cursor being where this step read it, and the
 *   cursor moves in the same batch, so a redelivered message or a concurrent step writes nothing twice.
 * - Merging: the first step of an event claims every event still waiting with its merge key (a writer's segments
 *   on one branch) and carries them as one, weighted: a burst of segments is one pass over the followers.
 * - Bounded history: each page prunes its accounts' items beyond `itemsPerAccount` (the oldest activity first), and
 *   the sweeper those whose last activity is older than INBOX_KEEP_DAYS (src/queue/sweeper.ts).
 */

export interface FanoutOptions {
  pageSize: number;
  collapseMs: number;
  itemsPerAccount: number;
}

/** An event as a step reads it: the row, how many events it carries, and the latest of them. */
type StepEvent = Pick<
  InboxEventRow,
  "id" | "kind" | "storyId" | "branchId" | "segmentId" | "commentId" | "recipientId" | "cursor" | "leaderId" | "settledAt" | "createdAt"
> & { actorId: string; data: string | null; weight: number; latestSegmentId: string | null; latestAt: string; onMain: number; ownerId: string | null };

/** What an event makes in an inbox: the item's kind and collapse key. */
interface Item {
  kind: InboxKind;
  key: string;
}

/** Who hears of an event: the followers of these targets (`item`), and its recipient (`direct`), if it has one. */
interface Audience {
  followed: [FollowTarget, string][];
  item?: Item;
  direct?: Item;
}

function audienceOf(e: StepEvent): Audience {
  switch (e.kind) {
    case "segment": {
      const followed: [FollowTarget, string][] = [
        ["branch", e.branchId!],
        ["author", e.actorId],
      ];
      // The main line's segments are its story's news: its followers get the branch's item (the same key).
      if (e.onMain) followed.push(["story", e.storyId]);
      return { followed, item: { kind: SEGMENTS_ITEM.kind, key: `${SEGMENTS_ITEM.keyPrefix}${e.branchId}` } };
    }
    case "branch":
      return {
        followed: [
          ["story", e.storyId],
          ["author", e.actorId],
        ],
        item: { kind: "new_branches", key: `branches ${e.storyId}` },
        direct: { kind: "fork", key: `fork ${e.segmentId}` },
      };
    case "story":
      return { followed: [["author", e.actorId]], item: { kind: "new_story", key: `story ${e.storyId}` } };
    case "reply":
      return { followed: [], direct: { kind: "reply", key: `reply ${(JSON.parse(e.data ?? "{}") as { parent_comment_id?: string }).parent_comment_id}` } };
    case "moderation":
      return { followed: [], direct: { kind: "moderation", key: `moderation ${e.id}` } };
  }
}

/** SQL: what the event names is visible to anonymous readers (a moderator's notice to an author names their own content). */
function visibleSql(e: StepEvent): SQL {
  switch (e.kind) {
    case "segment":
      return sql`EXISTS (SELECT 1 FROM segments s JOIN branches b ON b.id = s.branch_id
        WHERE s.id = ${e.latestSegmentId ?? e.segmentId} AND s.hidden_at IS NULL AND ${branchShown("b", null)})`;
    case "branch":
      return sql`EXISTS (SELECT 1 FROM branches b WHERE b.id = ${e.branchId} AND ${branchShown("b", null)})`;
    case "story":
      return sql`EXISTS (SELECT 1 FROM stories s WHERE s.id = ${e.storyId} AND ${storyShown("s", null)})`;
    case "reply":
      return sql`EXISTS (SELECT 1 FROM comments c JOIN branches b ON b.id = c.branch_id WHERE c.id = ${e.commentId} AND c.hidden_at IS NULL AND ${branchShown("b", null)})`;
    case "moderation":
      return sql`1`;
  }
}

/** SQL: the event may still reach inboxes: what it names is visible and its actor is not suspended now (nor a bot's owner). */
const eligibleSql = (e: StepEvent, now: string): SQL => sql`(${visibleSql(e)} AND ${accountNotSuspendedSql(sql`${e.actorId}`, now)})`;

/** SQL: this step's page of the audience, actor included: the next `n` account ids after the cursor, in order. */
function pageSql(a: Audience, e: StepEvent, n: number): SQL {
  const parts = a.followed.map(
    ([type, id]) =>
      sql`SELECT * FROM (SELECT follower_id AS id FROM follows WHERE target_type = ${type} AND target_id = ${id} AND follower_id > ${e.cursor} ORDER BY follower_id LIMIT ${n})`,
  );
  if (a.direct && e.recipientId) parts.push(sql`SELECT ${e.recipientId} AS id WHERE ${e.recipientId} > ${e.cursor}`);
  if (!parts.length) return sql`SELECT NULL AS id WHERE 0`;
  return sql`SELECT id FROM (${sql.join(parts, sql` UNION `)}) ORDER BY id LIMIT ${n}`;
}

/** SQL: a new UUID v4 for each row (the service's ids are v4 UUIDs). */
const NEW_UUID = sql.raw(
  `lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6)))`,
);

/**
 * The first statement of a step: an event no step has begun leads itself and every event still waiting with its
 * merge key (those are settled: it carries them); then the event as the step reads it.
 */
function readStep(db: Db, eventId: string, now: string) {
  return [
    rawRun(
      db,
      sql`UPDATE inbox_events SET leader_id = ${eventId}, settled_at = CASE WHEN id = ${eventId} THEN NULL ELSE ${now} END
        WHERE leader_id IS NULL AND settled_at IS NULL
          AND merge_key = (SELECT merge_key FROM inbox_events WHERE id = ${eventId} AND leader_id IS NULL AND settled_at IS NULL)`,
    ),
    rawAll<StepEvent>(
      db,
      sql`SELECT e.id, e.kind, e.actor_id AS actorId, e.story_id AS storyId, e.branch_id AS branchId, e.segment_id AS segmentId,
          e.comment_id AS commentId, e.recipient_id AS recipientId, e.data, e.cursor, e.leader_id AS leaderId, e.settled_at AS settledAt,
          e.created_at AS createdAt, (SELECT count(*) FROM inbox_events x WHERE x.leader_id = e.id) AS weight,
          (SELECT x.segment_id FROM inbox_events x WHERE x.leader_id = e.id ORDER BY x.created_at DESC, x.id DESC LIMIT 1) AS latestSegmentId,
          coalesce((SELECT max(x.created_at) FROM inbox_events x WHERE x.leader_id = e.id), e.created_at) AS latestAt,
          coalesce((SELECT b.is_main FROM branches b WHERE b.id = e.branch_id), 0) AS onMain,
          (SELECT s.owner_id FROM stories s WHERE s.id = e.story_id) AS ownerId
        FROM inbox_events e WHERE e.id = ${eventId}`,
    ),
  ] as const;
}

/**
 * What one change writes into the inboxes of some accounts: its item's kind and collapse key (per account: a fork's
 * author gets another item than its followers), what it names, how many changes it carries (`weight`) and when the
 * latest was (`at`; an unread item of the key begun since `windowStart` takes it). Values may be SQL or placeholders
 * (a prepared statement, src/domain/stories/segment-write.ts).
 */
export interface ItemWrite {
  kindOf: (account: SQL) => SQL;
  keyOf: (account: SQL) => SQL;
  storyId: unknown;
  branchId: unknown;
  segmentId: unknown;
  commentId: unknown;
  actorId: unknown;
  data: unknown;
  eventId: unknown;
  weight: unknown;
  at: unknown;
  windowStart: unknown;
  itemsPerAccount: unknown;
}

/**
 * The inbox writes of one change for `accounts` (SQL selecting `id`), each only while `guard` holds: collapse into
 * an unread item of the same key whose window covers it (count + weight, its latest, moved to the top), else a new
 * item; then each account's items beyond `itemsPerAccount` pruned, the oldest activity first. The one place an
 * inbox item is written: the fan-out's pages and a segment's own batch (its story's owner) both use it.
 */
export function itemWrites(w: ItemWrite, accounts: SQL, guard: SQL): [SQL, SQL, SQL] {
  const at = w.at;
  const window = sql`BETWEEN ${w.windowStart} AND ${at}`;
  const latest = (column: string, value: unknown) => sql`${sql.raw(column)} = CASE WHEN ${at} >= updated_at THEN ${value} ELSE ${sql.raw(column)} END`;
  return [
    sql`UPDATE inbox_items SET count = count + ${w.weight}, seq = (SELECT max(j.seq) FROM inbox_items j WHERE j.account_id = inbox_items.account_id) + 1,
          ${latest("branch_id", w.branchId)}, ${latest("segment_id", w.segmentId)}, ${latest("comment_id", w.commentId)}, ${latest("actor_id", w.actorId)},
          ${latest("data", w.data)}, ${latest("event_id", w.eventId)}, updated_at = max(updated_at, ${at})
        WHERE account_id IN (${accounts}) AND read_at IS NULL AND collapse_key = ${w.keyOf(sql`inbox_items.account_id`)} AND started_at ${window} AND ${guard}`,
    sql`INSERT INTO inbox_items (id, account_id, kind, collapse_key, story_id, branch_id, segment_id, comment_id, actor_id, data, event_id, count, seq, started_at, updated_at)
        SELECT ${NEW_UUID}, p.id, ${w.kindOf(sql`p.id`)}, ${w.keyOf(sql`p.id`)}, ${w.storyId}, ${w.branchId}, ${w.segmentId}, ${w.commentId}, ${w.actorId},
          ${w.data}, ${w.eventId}, ${w.weight}, coalesce((SELECT max(j.seq) FROM inbox_items j WHERE j.account_id = p.id), 0) + 1, ${at}, ${at}
        FROM (${accounts}) p
        WHERE ${guard} AND NOT EXISTS (SELECT 1 FROM inbox_items i WHERE i.account_id = p.id AND i.read_at IS NULL AND i.collapse_key = ${w.keyOf(sql`p.id`)} AND i.started_at ${window})`,
    sql`DELETE FROM inbox_items WHERE id IN (SELECT i.id FROM (${accounts}) p JOIN inbox_items i ON i.account_id = p.id
        AND i.seq <= (SELECT max(j.seq) FROM inbox_items j WHERE j.account_id = p.id) - ${w.itemsPerAccount})`,
  ];
}

/** A segment's item: its branch's run of new segments (the main line's too, for its story's followers). */
export const SEGMENTS_ITEM = { kind: "new_segments", keyPrefix: "segments " } as const;

/**
 * SQL: the story's owner hears of this main-line segment from its own batch (src/domain/stories/segment-write.ts), not
 * from the fan-out: they follow the story, and the segment is on its main line. The fan-out leaves them out.
 */
export const ownerHearsAtWriteSql = (owner: SQL | string, storyId: unknown, branchId: unknown): SQL =>
  sql`(EXISTS (SELECT 1 FROM branches WHERE id = ${branchId} AND is_main = 1)
    AND EXISTS (SELECT 1 FROM follows WHERE follower_id = ${owner} AND target_type = 'story' AND target_id = ${storyId}))`;

/** The statements of one page, for one batch (see the module's comment), ending with the event's state after it. */
function pageStatements(db: Db, e: StepEvent, options: FanoutOptions, now: string) {
  const a = audienceOf(e);
  const n = options.pageSize;
  const page = pageSql(a, e, n);
  // A main-line segment's story owner heard of it from its own batch already.
  const ownerHeard = e.kind === "segment" ? sql` AND NOT (id = ${e.ownerId ?? ""} AND ${ownerHearsAtWriteSql(e.ownerId ?? "", e.storyId, e.branchId)})` : sql``;
  const accounts = sql`SELECT id FROM (${page}) WHERE id != ${e.actorId}${ownerHeard}`;
  const items = a.item && a.direct ? [a.item, a.direct] : [(a.item ?? a.direct)!];
  const per = (account: SQL, pick: (i: Item) => string) =>
    items.length === 2 ? sql`CASE WHEN ${account} = ${e.recipientId} THEN ${pick(items[1])} ELSE ${pick(items[0])} END` : sql`${pick(items[0])}`;
  const eligible = eligibleSql(e, now);
  const mine = sql`id = ${e.id} AND cursor = ${e.cursor} AND settled_at IS NULL AND leader_id = ${e.id}`;
  const guard = sql`EXISTS (SELECT 1 FROM inbox_events WHERE ${mine}) AND ${eligible}`;
  const writes = itemWrites(
    {
      kindOf: (account) => per(account, (i) => i.kind),
      keyOf: (account) => per(account, (i) => i.key),
      storyId: e.storyId,
      branchId: e.branchId,
      segmentId: e.latestSegmentId ?? e.segmentId,
      commentId: e.commentId,
      actorId: e.actorId,
      data: e.data,
      eventId: e.id,
      weight: e.weight,
      at: e.latestAt,
      windowStart: new Date(Date.parse(e.latestAt) - options.collapseMs).toISOString(),
      itemsPerAccount: options.itemsPerAccount,
    },
    accounts,
    guard,
  );
  const [collapse, insert, prune] = writes;
  return [
    rawRun(db, collapse),
    rawRun(db, insert),
    rawRun(db, prune),
    rawRun(
      db,
      sql`UPDATE inbox_events SET cursor = coalesce((SELECT max(id) FROM (${page})), cursor), due_at = ${now},
          settled_at = CASE WHEN NOT ${eligible} OR (SELECT count(*) FROM (${page})) < ${n} THEN ${now} END
        WHERE ${mine}`,
    ),
    rawAll<{ cursor: string; settled: number }>(db, sql`SELECT cursor, settled_at IS NOT NULL AS settled FROM inbox_events WHERE id = ${e.id}`),
  ] as const;
}

/**
 * One step of an event's fan-out: its next page of followers into their inboxes. "more" when this step wrote a
 * page and more may follow (the caller queues the next step); "done" when the event is settled, carried by another
 * event, unknown, or another step moved its cursor first (that step goes on: no second message).
 */
export async function fanOutStep(db: Db, eventId: string, options: FanoutOptions, now: string): Promise<"more" | "done"> {
  const [, [e]] = await db.batch(readStep(db, eventId, now));
  if (!e || e.settledAt !== null || e.leaderId !== e.id) return "done";
  const results = await db.batch(pageStatements(db, e, options, now));
  const moved = (results[3] as unknown as D1Result).meta.changes === 1;
  const [after] = results[4] as { cursor: string; settled: number }[];
  return moved && !after.settled ? "more" : "done";
}
