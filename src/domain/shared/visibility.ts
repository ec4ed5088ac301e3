import { type SQL, sql } from "drizzle-orm";
import { preparedByShape } from "../../db/compile";
import type { Actor } from "./actor";

/**
 * Hidden content: what a viewer may see of an item a moderator hid. Every read that shows text takes
 * its text through `shownText`, in the read's own query (no extra statement), so one rule decides everywhere: the
 * item keeps its place and its fields, gains `hidden: true`, and its text is "" for everyone but its author (its
 * owner, for a story; its creator, for a branch), admins and moderators.
 * Why, and what was weighed: docs/decisions.md, "Moderation: hidden content".
 */

/** Who reads: a verified caller, or null (anonymous; also the live stream, webhooks and summaries). */
export type Viewer = Pick<Actor, "id" | "type"> | null;

/** A caller as a viewer (null stays null). */
export const viewerOf = (actor: Pick<Actor, "id" | "type"> | null | undefined): Viewer => (actor ? { id: actor.id, type: actor.type } : null);

/**
 * `prepared` for a statement that shows text as a viewer may read it: compiled once per kind of viewer (anonymous,
 * admin, anyone else), the only thing the SQL of `seesHidden` depends on; the viewer's id is one of its values.
 */
export function preparedForViewer<V extends Record<string, unknown>>(build: (values: V, viewer: Viewer) => SQL) {
  type Kind = "anonymous" | "admin" | "member";
  const statement = preparedByShape(
    (kind: Kind) => kind,
    (v: V & { viewerId: string }, kind) => build(v, kind === "anonymous" ? null : { id: v.viewerId, type: kind === "admin" ? "admin" : "human" }),
  );
  return (values: V, viewer: Viewer): SQL =>
    statement({ ...values, viewerId: viewer?.id ?? "" }, viewer === null ? "anonymous" : viewer.type === "admin" ? "admin" : "member");
}

/**
 * SQL: true when the viewer may see a hidden item whose author (owner, creator) is `author`: the author, an admin,
 * a moderator (their role read in the same query; only evaluated for a hidden item, see `shownText`).
 */
export function seesHidden(viewer: Viewer, author: SQL): SQL {
  if (!viewer) return sql`0`;
  if (viewer.type === "admin") return sql`1`;
  return sql`(${author} = ${viewer.id} OR EXISTS (SELECT 1 FROM users mu WHERE mu.id = ${viewer.id} AND mu.role = 'moderator'))`;
}

/** SQL: `text` as the viewer may read it: "" when the item is hidden from them (CASE: nothing more for a visible item). */
export const shownText = (hiddenAt: SQL, text: SQL, author: SQL, viewer: Viewer): SQL =>
  sql`CASE WHEN ${hiddenAt} IS NULL OR ${seesHidden(viewer, author)} THEN ${text} ELSE '' END`;

/**
 * SQL for a table alias `t` (segments, comments): its text as the viewer may read it `AS content`, and `hidden` (0/1).
 * `hiddenAt` is when it was hidden: its own `hidden_at` unless the caller knows more (a segment on a hidden
 * ancestor branch of a reading path is hidden with it, src/domain/stories/path.ts).
 */
export const shownContent = (t: string, viewer: Viewer, hiddenAt: SQL = sql.raw(`${t}.hidden_at`)): SQL =>
  sql`${shownText(hiddenAt, sql.raw(`${t}.content`), sql.raw(`${t}.author_id`), viewer)} AS content, ${hiddenAt} IS NOT NULL AS hidden`;

/** A raw row's `hidden` (SQLite's 0/1) as the boolean the API shows. */
export const withHidden = <T extends { hidden: number | boolean }>(row: T): Omit<T, "hidden"> & { hidden: boolean } => ({
  ...row,
  hidden: row.hidden === 1 || row.hidden === true,
});

/**
 * SQL: true when a vote (alias `v`) counts toward scores and reputation: not a vote on a hidden segment or branch.
 * One primary-key look-up per vote on a segment or branch.
 */
export const countedVote = (v: string): string =>
  `(NOT EXISTS (SELECT 1 FROM segments hs WHERE ${v}.target_type = 'segment' AND hs.id = ${v}.target_id AND hs.hidden_at IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM branches hb WHERE ${v}.target_type = 'branch' AND hb.id = ${v}.target_id AND hb.hidden_at IS NOT NULL))`;

/** SQL: the story (alias `t`) is shown to the viewer: not hidden, or the viewer is its owner, an admin or a moderator. */
export const storyShown = (t: string, viewer: Viewer): SQL => sql`(${sql.raw(`${t}.hidden_at`)} IS NULL OR ${seesHidden(viewer, sql.raw(`${t}.owner_id`))})`;

/**
 * SQL: the branch (alias `t`) is shown to the viewer: it is not hidden (or the viewer is its creator, an admin or a
 * moderator) and neither is its story (or the viewer is the story's owner, an admin or a moderator).
 */
export const branchShown = (t: string, viewer: Viewer): SQL =>
  sql`((${sql.raw(`${t}.hidden_at`)} IS NULL OR ${seesHidden(viewer, sql.raw(`${t}.creator_id`))})
    AND NOT EXISTS (SELECT 1 FROM stories hst WHERE hst.id = ${sql.raw(`${t}.story_id`)} AND NOT ${storyShown("hst", viewer)}))`;

/**
 * SQL: the segment (alias `s`) on its branch (alias `b`) is shown to the viewer, as a read of it by id is (its
 * rewrites, a bookmark): not hidden, or the viewer is its author, an admin or a moderator; and its branch is shown.
 */
export const segmentShown = (s: string, b: string, viewer: Viewer): SQL =>
  sql`(${sql.raw(`${s}.hidden_at`)} IS NULL OR ${seesHidden(viewer, sql.raw(`${s}.author_id`))}) AND ${branchShown(b, viewer)}`;
