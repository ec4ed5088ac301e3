import { type SQL, and, asc, count, eq, getTableColumns, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type Db, rawRun } from "../../db/client";
import { nowIso } from "../../db/client";
import { branches, comments, stories, type CommentRow, visible } from "../../db/schema";
import { type Actor, requireOwnerOrAdmin, writerType } from "../shared/actor";
import { type Viewer, branchShown, shownText } from "../shared/visibility";
import { notFound, storyArchived, validationError } from "../../lib/errors";
import { idInStory, isUuid } from "../../lib/ids";
import { pagination } from "../../lib/pagination";
import { type IdempotentRequest, commit, recordStatements } from "../shared/idempotency";
import { replyEvent, writtenEvents } from "../events/inbox-events";
import { closedError, takesWrites } from "../shared/writable";

export function commentView(c: CommentRow) {
  return {
    id: c.id,
    branch_id: c.branchId,
    author_id: c.authorId,
    author_type: c.authorType,
    author_name: c.authorName,
    content: c.content,
    parent_comment_id: c.parentCommentId,
    hidden: c.hiddenAt !== null,
    created_at: c.createdAt,
  };
}

/** A branch's comments, oldest first, their text as the viewer may read it (a query for a batch; `commentView` each row). */
export const commentsQuery = (db: Db, branchId: string, viewer: Viewer) =>
  db
    .select({
      ...getTableColumns(comments),
      content: sql<string>`${shownText(sql`${comments.hiddenAt}`, sql`${comments.content}`, sql`${comments.authorId}`, viewer)}`.as("content"),
    })
    .from(comments)
    .where(eq(comments.branchId, branchId))
    .orderBy(asc(comments.createdAt), asc(comments.id));

export async function listComments(db: Db, branchId: string, limit: number, offset: number, viewer: Viewer = null) {
  const [branch, rows, [{ total }]] = await db.batch([
    db
      .select({ id: branches.id })
      .from(branches)
      .where(and(eq(branches.id, branchId), branchShown('"branches"', viewer)))
      .limit(1),
    commentsQuery(db, branchId, viewer).limit(limit).offset(offset),
    db.select({ total: count() }).from(comments).where(eq(comments.branchId, branchId)),
  ]);
  if (!branch.length) throw notFound("Branch");
  return { comments: rows.map(commentView), pagination: pagination(limit, offset, total) };
}

/** A comment or a reply; a reply's inbox event (its parent's author hears of it) is in `events` when written. */
export async function addComment(db: Db, actor: Actor, branchId: string, input: { content: string; parent_comment_id?: string }, idem?: IdempotentRequest) {
  const parentId = input.parent_comment_id?.toLowerCase();
  const [[branch], [parent]] = await db.batch([
    db
      .select({ id: branches.id, storyId: branches.storyId, status: stories.status })
      .from(branches)
      .innerJoin(stories, eq(stories.id, branches.storyId))
      .where(eq(branches.id, branchId))
      .limit(1),
    db
      .select({ branchId: comments.branchId })
      .from(comments)
      .where(eq(comments.id, isUuid(parentId) ? parentId : ""))
      .limit(1),
  ]);
  if (!branch) throw notFound("Branch");
  if (branch.status !== "active") throw storyArchived();
  if (parentId !== undefined && parent?.branchId !== branchId) {
    throw validationError([{ field: "parent_comment_id", issue: "is not a comment on this branch" }]);
  }
  const row: CommentRow = {
    ...visible,
    id: idInStory(branch.storyId),
    branchId,
    authorId: actor.id,
    authorType: writerType(actor),
    authorName: actor.name,
    content: input.content,
    parentCommentId: parentId ?? null,
    createdAt: nowIso(),
  };
  const view = commentView(row);
  // Nested again as `comment`, as older clients read it (the way a segment is nested as `segment`).
  const created = { ...view, comment: view };
  const exists = sql`EXISTS (SELECT 1 FROM comments WHERE id = ${row.id})`;
  const target = { storyId: branch.storyId, branchId };
  const event = row.parentCommentId
    ? replyEvent(
        db,
        { id: row.id, storyId: branch.storyId, branchId, authorId: row.authorId, parentCommentId: row.parentCommentId, createdAt: row.createdAt },
        exists,
      )
    : null;
  const statements: BatchItem<"sqlite">[] = [
    insertComment(db, row, takesWrites(target)),
    ...(event ? [event.statement] : []),
    ...recordStatements(db, idem, { status: 201, data: created }, sql`AND ${exists}`),
  ];
  const results = await commit(() => db.batch(statements as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]));
  if ((results[0] as D1Result).meta.changes === 1) return { created, events: event ? writtenEvents(statements, results, [event]) : [] };
  // The branch was hidden (or the story archived) since our read, or the parent was deleted: a reply never outlives it.
  throw (await closedError(db, target)) ?? validationError([{ field: "parent_comment_id", issue: "is not a comment on this branch" }]);
}

/** Inserts a comment while its branch takes writes (`open`); a reply only while its parent exists on the same branch. */
function insertComment(db: Db, c: CommentRow, open: SQL) {
  const parentExists = c.parentCommentId ? sql` AND EXISTS (SELECT 1 FROM comments WHERE id = ${c.parentCommentId} AND branch_id = ${c.branchId})` : sql``;
  return rawRun(
    db,
    sql`INSERT INTO comments (id, branch_id, author_id, author_type, author_name, content, parent_comment_id, created_at)
    SELECT ${c.id}, ${c.branchId}, ${c.authorId}, ${c.authorType}, ${c.authorName}, ${c.content}, ${c.parentCommentId}, ${c.createdAt}
    WHERE ${open}${parentExists}`,
  );
}

/** The author or an admin deletes a comment; its replies go with it. */
export async function deleteComment(db: Db, actor: Actor, id: string) {
  const [comment] = await db.select({ authorId: comments.authorId }).from(comments).where(eq(comments.id, id)).limit(1);
  if (!comment) throw notFound("Comment");
  requireOwnerOrAdmin(actor, comment.authorId, "Only the comment's author or an admin may delete it");
  await db.run(sql`WITH RECURSIVE thread(id) AS (
      SELECT ${id} UNION ALL SELECT c.id FROM comments c JOIN thread t ON c.parent_comment_id = t.id)
    DELETE FROM comments WHERE id IN (SELECT id FROM thread)`);
  return { id, deleted: true as const };
}
