import { type SQL, sql } from "drizzle-orm";
import { storyChangedStatement } from "../discovery/search-move";
import type { BatchItem } from "drizzle-orm/batch";
import { type Db, nowIso, rawAll, rawRun } from "../../db/client";
import { ApiError, notFound } from "../../lib/errors";
import type { Actor } from "../shared/actor";
import { auditStatement } from "./audit";
import { type EventWrite, moderationEvent } from "../events/inbox-events";
import { forgetGeneratedSummaries } from "../community/summaries";
import { branchScoreStatement } from "../community/votes";

/** What a moderator can hide. */
export const HIDEABLE = ["segment", "comment", "story", "branch"] as const;
export type HideableType = (typeof HIDEABLE)[number];

export interface HideTarget {
  type: HideableType;
  id: string;
}

const TABLE: Record<HideableType, string> = { segment: "segments", comment: "comments", story: "stories", branch: "branches" };
const NAME: Record<HideableType, string> = { segment: "Segment", comment: "Comment", story: "Story", branch: "Branch" };

/**
 * Nobody moderates their own case: their own account, their own content, or a report about either,
 * admins included: 403 PERMISSION_DENIED (another moderator decides). `what` completes "You cannot …".
 */
export function refuseOwnCase(actor: Pick<Actor, "id">, accountId: string | null, what: string): void {
  if (accountId !== null && accountId === actor.id) throw new ApiError("PERMISSION_DENIED", `You cannot ${what}: another moderator decides`);
}

/** Where a target sits: its branch and story (the room to tell, the scores and summaries to redo), its place, its author. */
interface Place {
  id: string;
  /** Who wrote it (the story's owner, the branch's creator). */
  author_id: string;
  branch_id: string | null;
  story_id: string;
  sequence_order: number | null;
  hidden_at: string | null;
  hidden_by: string | null;
  hidden_reason: string | null;
}

const placeQuery: Record<HideableType, (id: string) => SQL> = {
  segment: (id) => sql`SELECT id, author_id, branch_id, story_id, sequence_order, hidden_at, hidden_by, hidden_reason FROM segments WHERE id = ${id}`,
  comment: (id) =>
    sql`SELECT c.id, c.author_id, c.branch_id, b.story_id, NULL AS sequence_order, c.hidden_at, c.hidden_by, c.hidden_reason
      FROM comments c JOIN branches b ON b.id = c.branch_id WHERE c.id = ${id}`,
  branch: (id) =>
    sql`SELECT id, creator_id AS author_id, id AS branch_id, story_id, NULL AS sequence_order, hidden_at, hidden_by, hidden_reason FROM branches WHERE id = ${id}`,
  story: (id) =>
    sql`SELECT id, owner_id AS author_id, NULL AS branch_id, id AS story_id, NULL AS sequence_order, hidden_at, hidden_by, hidden_reason FROM stories WHERE id = ${id}`,
};

/** The target, or 404 NOT_FOUND. */
export async function placeOf(db: Db, target: HideTarget): Promise<Place> {
  const [place] = await rawAll<Place>(db, placeQuery[target.type](target.id));
  if (!place) throw notFound(NAME[target.type]);
  return place;
}

/** The moderation record of a target, as the admin routes answer it. */
export const hidingView = (target: HideTarget, p: Pick<Place, "hidden_at" | "hidden_by" | "hidden_reason">, changed: boolean) => ({
  target_type: target.type,
  id: target.id,
  hidden: p.hidden_at !== null,
  hidden_at: p.hidden_at,
  hidden_by: p.hidden_by,
  hidden_reason: p.hidden_reason,
  changed,
});

/**
 * The statements of a hide (or a restore, `hide` false) for one D1 batch: the item's hiding columns (set only when
 * they change, so a repeat writes nothing), its audit row, the inbox event that tells its author, the
 * branch's stored vote score when a segment's votes stop (or start again) counting, and the generated summaries
 * that may quote a hidden segment or branch, and its story's search version. `extra` rides along.
 */
export function hidingStatements(
  db: Db,
  by: Pick<Actor, "id" | "name">,
  target: HideTarget,
  place: Place,
  change: { hide: boolean; reason: string | null },
  at = nowIso(),
): { statements: BatchItem<"sqlite">[]; event: EventWrite } {
  const table = sql.raw(TABLE[target.type]);
  const set = change.hide
    ? sql`hidden_at = ${at}, hidden_by = ${by.id}, hidden_reason = ${change.reason} WHERE id = ${target.id} AND hidden_at IS NULL`
    : sql`hidden_at = NULL, hidden_by = NULL, hidden_reason = NULL WHERE id = ${target.id} AND hidden_at IS NOT NULL`;
  const made = change.hide ? sql`hidden_at = ${at} AND hidden_by = ${by.id}` : sql`hidden_at IS NULL`;
  const moderated = { action: change.hide ? "hide" : "restore", targetType: target.type, targetId: target.id, reason: change.reason } as const;
  const event = moderationEvent(
    db,
    by,
    { ...moderated, authorId: place.author_id, storyId: place.story_id, branchId: place.branch_id },
    at,
    sql`EXISTS (SELECT 1 FROM ${table} WHERE id = ${target.id} AND ${made})`,
  );
  const statements: BatchItem<"sqlite">[] = [
    rawRun(db, sql`UPDATE ${table} SET ${set}`),
    auditStatement(db, by, { action: moderated.action, targetType: target.type, targetId: target.id, reason: change.reason }, at),
    event.statement,
    // What search shows changed: the story's shard copy is behind until its sync (the hide's own request runs it).
    storyChangedStatement(db, place.story_id, at),
  ];
  if (target.type === "segment" && place.branch_id) statements.push(branchScoreStatement(db, place.branch_id));
  // A branch's forks made before its hide quote it in theirs too.
  if (change.hide && (target.type === "segment" || target.type === "branch")) statements.push(forgetGeneratedSummaries(db, place.story_id));
  return { statements, event };
}

/** The ids of a story's branches (whose live streams a hidden story closes). */
export const storyBranchIdsQuery = (db: Db, storyId: string) => rawAll<{ id: string }>(db, sql`SELECT id FROM branches WHERE story_id = ${storyId}`);
