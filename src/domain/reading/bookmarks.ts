import { type SQL, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll, rawRun, readOf, runRead } from "../../db/client";
import { ApiError, notFound } from "../../lib/errors";
import { pathId } from "../../lib/ids";
import { pagination } from "../../lib/pagination";
import type { z } from "@hono/zod-openapi";
import type { BookmarkBody, bookmarkSchema } from "../../schemas/bookmarks";
import type { Actor } from "../shared/actor";
import { type Viewer, branchShown, segmentShown, storyShown, viewerOf } from "../shared/visibility";
import { EXCERPT_LENGTH, excerpt } from "../moderation/reports";

/**
 * Bookmarks: any account's, on any segment it may read, with an optional note. One per account and
 * segment (a repeat answers the bookmark there is, its note replaced when one is sent); at most a cap per account,
 * counted in the INSERT itself, so concurrent bookmarks cannot pass it. A bookmark is its account's alone.
 * Why, and what was weighed: docs/decisions.md, "Bookmarks, reading progress and exports".
 */

/** A bookmark record as SQLite answers it (`hidden` 0/1). */
type BookmarkSqlRow = Omit<z.infer<typeof bookmarkSchema>, "hidden"> & { hidden: number };

/**
 * Bookmark records (`FROM bookmarks bk`, then `rest`), each with its segment as the viewer (its owner) may read it
 * now: a hidden segment's excerpt, a hidden branch's or story's title, are "" (`hidden` says so).
 */
const bookmarkRecords = (db: Db, viewer: Viewer, rest: SQL) =>
  rawAll<BookmarkSqlRow>(
    db,
    sql`SELECT bk.id, bk.segment_id, bk.note, s.story_id, CASE WHEN ${storyShown("st", viewer)} THEN st.title ELSE '' END AS story_title,
      s.branch_id, CASE WHEN ${branchShown("b", viewer)} THEN b.title ELSE '' END AS branch_title, s.sequence_order, s.author_id, s.author_name, s.author_type,
      st.language, substr(CASE WHEN ${segmentShown("s", "b", viewer)} THEN s.content ELSE '' END, 1, ${EXCERPT_LENGTH + 1}) AS excerpt,
      (s.hidden_at IS NOT NULL OR b.hidden_at IS NOT NULL OR st.hidden_at IS NOT NULL) AS hidden, bk.created_at, bk.updated_at
    FROM bookmarks bk JOIN segments s ON s.id = bk.segment_id JOIN branches b ON b.id = s.branch_id JOIN stories st ON st.id = s.story_id ${rest}`,
  );

const bookmarkView = (r: BookmarkSqlRow) => ({ ...r, excerpt: excerpt(r.excerpt) ?? "", hidden: r.hidden === 1 });
export type BookmarkView = ReturnType<typeof bookmarkView>;

/** A note as kept: trimmed, none when blank; `undefined` (not sent) keeps the one there is. */
const noteOf = (note: string | undefined) => (note === undefined ? undefined : note.trim() || null);

/**
 * Bookmarks the segment: 201 with the new bookmark, or 200 with the one there is (its note replaced when `note` is
 * sent). One batch: the INSERT (only while the segment is shown to the account, and the account under the cap or
 * already holding this bookmark), the record as the account reads it, and why nothing was written (a segment
 * unknown or hidden from it: 404, as reading it is; the cap: 409 CONFLICT).
 */
export async function bookmark(db: Db, actor: Actor, body: BookmarkBody, cap: number) {
  const segmentId = pathId(body.segment_id, "Segment");
  const viewer = viewerOf(actor);
  const id = crypto.randomUUID();
  const now = nowIso();
  const note = noteOf(body.note);
  const shown = sql`EXISTS (SELECT 1 FROM segments s JOIN branches b ON b.id = s.branch_id WHERE s.id = ${segmentId} AND ${segmentShown("s", "b", viewer)})`;
  const held = sql`(SELECT count(*) FROM bookmarks WHERE account_id = ${actor.id})`;
  const mine = sql`EXISTS (SELECT 1 FROM bookmarks WHERE account_id = ${actor.id} AND segment_id = ${segmentId})`;
  const repeat = note === undefined ? sql`DO NOTHING` : sql`DO UPDATE SET note = excluded.note, updated_at = excluded.updated_at`;
  const [, [row], [why]] = await db.batch([
    rawRun(
      db,
      sql`INSERT INTO bookmarks (id, account_id, segment_id, note, created_at, updated_at)
        SELECT ${id}, ${actor.id}, ${segmentId}, ${note ?? null}, ${now}, ${now} WHERE ${shown} AND (${held} < ${cap} OR ${mine})
        ON CONFLICT (account_id, segment_id) ${repeat}`,
    ),
    bookmarkRecords(db, viewer, sql`WHERE bk.account_id = ${actor.id} AND bk.segment_id = ${segmentId} AND ${segmentShown("s", "b", viewer)}`),
    rawAll<{ shown: number; held: number }>(db, sql`SELECT ${shown} AS shown, ${held} AS held`),
  ]);
  if (row) return { created: row.id === id, bookmark: bookmarkView(row) };
  if (!why.shown) throw notFound("Segment");
  throw new ApiError("CONFLICT", `You have ${why.held} bookmarks already, the most an account may keep: remove one first`, { limit: cap, bookmarks: why.held });
}

/** Removes one of the account's bookmarks; anyone else's (or none) is 404: a bookmark is its account's alone. */
export async function removeBookmark(db: Db, actor: Actor, bookmarkId: string) {
  const id = pathId(bookmarkId, "Bookmark");
  const deleted = await db.run(sql`DELETE FROM bookmarks WHERE id = ${id} AND account_id = ${actor.id}`);
  if (deleted.meta.changes !== 1) throw notFound("Bookmark");
  return { id, deleted: true as const };
}

/** The account's bookmarks, newest first, each with its segment as the account may read it now: a page and the total. */
const bookmarksRead = (db: Db, actor: Actor, limit: number, offset: number) =>
  readOf(
    [
      bookmarkRecords(db, viewerOf(actor), sql`WHERE bk.account_id = ${actor.id} ORDER BY bk.created_at DESC, bk.id DESC LIMIT ${limit} OFFSET ${offset}`),
      rawAll<{ total: number }>(db, sql`SELECT count(*) AS total FROM bookmarks WHERE account_id = ${actor.id}`),
    ],
    ([rows, [{ total }]]) => ({ bookmarks: rows.map(bookmarkView), pagination: pagination(limit, offset, total) }),
  );

/** `bookmarksRead` alone: one round trip. */
export const listBookmarks = (db: Db, actor: Actor, limit: number, offset: number) => runRead(db, bookmarksRead(db, actor, limit, offset));
