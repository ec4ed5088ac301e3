import { type SQL, sql } from "drizzle-orm";
import { type Db, rawAll, rawRun } from "../../db/client";
import type { InboxEventRow } from "../../db/schema";
import type { FollowTarget } from "../../schemas/follows";
import type { Actor } from "../shared/actor";
import { handOver } from "./webhook-events";

/**
 * Producing inbox events. A change that followers hear of (a segment, a branch, a story, a reply, a
 * moderator's action) writes one `inbox_events` row in its own batch, only when someone may hear of it (someone
 * follows what it names, or it has a recipient), so a change nobody follows costs one conditional INSERT and no
 * queue send. The request then hands the event to the `inbox-fanout` queue; its consumer (src/queue/fanout.ts, a step of
 * src/domain/following/fanout.ts at a time) writes the inboxes, never the request. A lost hand-over is the sweeper's (src/queue/sweeper.ts).
 * Why, and what was weighed: docs/decisions.md, "Follows, the inbox and feeds".
 */

export type InboxEventKind = InboxEventRow["kind"];

/** What travels on the fan-out queue: an event whose next page of followers is due. */
export interface FanoutMessage {
  eventId: string;
}

/**
 * SQL: someone other than `actor` follows this target. The actor is never told of their own change, so an owner
 * writing on the story they follow (every owner follows their stories) writes no event nobody will read.
 */
export const followedSql = (type: FollowTarget, id: SQL | string, actor: SQL | string): SQL =>
  sql`EXISTS (SELECT 1 FROM follows WHERE target_type = ${type} AND target_id = ${id} AND follower_id != ${actor})`;

/** SQL: the branch is its story's main line (whose segments the story's followers hear of). */
export const mainLineSql = (branchId: SQL | string): SQL => sql`EXISTS (SELECT 1 FROM branches WHERE id = ${branchId} AND is_main = 1)`;

interface NewEvent {
  /** The change's own id (its segment, story, branch, comment), or a new one (a moderator's action). */
  id: string;
  kind: InboxEventKind;
  actorId: string;
  storyId: string;
  branchId?: string | null;
  segmentId?: string | null;
  commentId?: string | null;
  /** SQL selecting who hears of it directly (none: nobody), e.g. a reply's parent's author when not the replier. */
  recipient?: SQL | null;
  data?: Record<string, unknown> | null;
  createdAt: string;
}

/** An event's statement in its change's batch, and its id (to hand over once the batch says it was written). */
export interface EventWrite {
  id: string;
  statement: ReturnType<typeof rawAll<{ id: string }>>;
}

/**
 * An event's INSERT for the change's own batch, written only `when` (the change's row is there) and someone may
 * hear of it: a follower of one of `followed`, or its recipient.
 */
function eventStatement(db: Db, e: NewEvent, when: SQL, followed: [FollowTarget, string][]): EventWrite {
  const recipient = e.recipient ?? sql`NULL`;
  const audience = [...followed.map(([type, id]) => followedSql(type, id, e.actorId)), ...(e.recipient ? [sql`${recipient} IS NOT NULL`] : [])];
  const statement = rawAll<{ id: string }>(
    db,
    sql`INSERT INTO inbox_events (id, kind, actor_id, story_id, branch_id, segment_id, comment_id, recipient_id, data, merge_key, created_at, due_at)
      SELECT ${e.id}, ${e.kind}, ${e.actorId}, ${e.storyId}, ${e.branchId ?? null}, ${e.segmentId ?? null}, ${e.commentId ?? null}, ${recipient},
        ${e.data ? JSON.stringify(e.data) : null}, ${e.id}, ${e.createdAt}, ${e.createdAt}
      WHERE ${when} AND (${sql.join(audience, sql` OR `)}) RETURNING id`,
  );
  return { id: e.id, statement };
}

/**
 * A segment, in its room's batch: the followers of its branch and of its writer hear of it, once it was written,
 * and on the main line the story's followers too (but its owner, told in the same batch). Segments of one writer on one branch
 * share a merge key: waiting together, they are fanned out in one pass. Plain SQL of its values (a prepared
 * statement, src/domain/stories/segment-write.ts).
 */
export const segmentEventSql = (v: { id: string; authorId: string; storyId: string; branchId: string; createdAt: string }): SQL =>
  sql`INSERT INTO inbox_events (id, kind, actor_id, story_id, branch_id, segment_id, merge_key, created_at, due_at)
    SELECT ${v.id}, 'segment', ${v.authorId}, ${v.storyId}, ${v.branchId}, ${v.id}, 'segment ' || ${v.branchId} || ' ' || ${v.authorId}, ${v.createdAt}, ${v.createdAt}
    WHERE EXISTS (SELECT 1 FROM segments WHERE id = ${v.id}) AND (${followedSql("branch", v.branchId, v.authorId)} OR ${followedSql("author", v.authorId, v.authorId)}
      OR (${storyFollowedByOthersSql(v.storyId, v.authorId)} AND ${mainLineSql(v.branchId)}))
    RETURNING id`;

/**
 * SQL: someone other than `actor` and the story's owner follows the story (its owner hears of a main-line segment
 * from the segment's own batch: src/domain/stories/segment-write.ts).
 */
const storyFollowedByOthersSql = (storyId: SQL | string, actor: SQL | string): SQL =>
  sql`EXISTS (SELECT 1 FROM follows WHERE target_type = 'story' AND target_id = ${storyId} AND follower_id != ${actor}
    AND follower_id != (SELECT owner_id FROM stories WHERE id = ${storyId}))`;

/** A new story: its owner's followers hear of it. */
export const storyEvent = (db: Db, story: { id: string; ownerId: string; createdAt: string }) =>
  eventStatement(db, { id: story.id, kind: "story", actorId: story.ownerId, storyId: story.id, createdAt: story.createdAt }, sql`1`, [
    ["author", story.ownerId],
  ]);

/**
 * A new branch: its story's followers and its creator's hear of it, and the author of the segment it forks from
 * (when someone else) hears that their segment was forked. `written` (SQL) holds once the branch is.
 */
export const branchEvent = (db: Db, branch: { id: string; storyId: string; creatorId: string; forkAt: string | null; createdAt: string }, written: SQL) =>
  eventStatement(
    db,
    {
      id: branch.id,
      kind: "branch",
      actorId: branch.creatorId,
      storyId: branch.storyId,
      branchId: branch.id,
      segmentId: branch.forkAt,
      recipient: sql`(SELECT author_id FROM segments WHERE id = ${branch.forkAt ?? ""} AND author_id != ${branch.creatorId})`,
      createdAt: branch.createdAt,
    },
    written,
    [
      ["story", branch.storyId],
      ["author", branch.creatorId],
    ],
  );

/** A reply: the parent comment's author hears of it (not when replying to oneself). `written` holds once it is. */
export const replyEvent = (
  db: Db,
  reply: { id: string; storyId: string; branchId: string; authorId: string; parentCommentId: string; createdAt: string },
  written: SQL,
) =>
  eventStatement(
    db,
    {
      id: reply.id,
      kind: "reply",
      actorId: reply.authorId,
      storyId: reply.storyId,
      branchId: reply.branchId,
      commentId: reply.id,
      recipient: sql`(SELECT author_id FROM comments WHERE id = ${reply.parentCommentId} AND author_id != ${reply.authorId})`,
      data: { parent_comment_id: reply.parentCommentId },
      createdAt: reply.createdAt,
    },
    written,
    [],
  );

export interface ModeratedContent {
  action: "hide" | "restore";
  targetType: "segment" | "comment" | "story" | "branch";
  targetId: string;
  authorId: string;
  storyId: string;
  branchId: string | null;
  reason: string | null;
}

/** A moderator hid or restored someone's content: its author hears of it. `done` holds once the change is made. */
export const moderationEvent = (db: Db, by: Pick<Actor, "id">, m: ModeratedContent, at: string, done: SQL) =>
  eventStatement(
    db,
    {
      id: crypto.randomUUID(),
      kind: "moderation",
      actorId: by.id,
      storyId: m.storyId,
      branchId: m.branchId,
      segmentId: m.targetType === "segment" ? m.targetId : null,
      commentId: m.targetType === "comment" ? m.targetId : null,
      recipient: sql`(SELECT ${m.authorId} WHERE ${m.authorId} != ${by.id})`,
      data: { action: m.action, target_type: m.targetType, target_id: m.targetId, reason: m.reason },
      createdAt: at,
    },
    done,
    [],
  );

/**
 * The ids of the events a batch wrote: each event statement's own rows (`RETURNING id`) say whether it inserted.
 * Not `meta.changes`: D1 counts it as a difference of total changes, and a search index row earlier in the batch
 * (FTS5 writes its shadow tables late) lands in the next statement's count.
 */
export const writtenEvents = (statements: unknown[], results: unknown[], events: EventWrite[]) =>
  events.filter((e) => ((results[statements.indexOf(e.statement)] as unknown[] | undefined)?.length ?? 0) > 0).map((e) => e.id);

/** Hands committed events to the fan-out queue (after the answer); a failed send is recorded on them for the sweeper. */
export async function publishInboxEvents(queue: Queue, db: Db, ids: string[]): Promise<void> {
  const messages: FanoutMessage[] = ids.map((eventId) => ({ eventId }));
  const list = sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );
  await handOver(queue, messages, "inbox event", (error) => rawRun(db, sql`UPDATE inbox_events SET last_error = ${error} WHERE id IN (${list})`));
}
