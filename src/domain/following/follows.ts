import { type SQL, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll, rawRun } from "../../db/client";
import { ApiError, notFound, validationError } from "../../lib/errors";
import { accountId, pathId } from "../../lib/ids";
import { pagination } from "../../lib/pagination";
import type { FollowBody, FollowTarget } from "../../schemas/follows";
import { type Actor, writerType } from "../shared/actor";
import { type Viewer, branchShown, storyShown } from "../shared/visibility";

/**
 * Follows: an account follows a story, a branch or an author. Following is idempotent (one row per
 * follower and target, a repeat answers the row there is); an account follows at most `followsPerAccount` things,
 * counted in the INSERT itself, so concurrent follows cannot pass the cap. `follow_counts` keeps each target's
 * number of followers in the same batches. A story's owner follows it from its creation (`ownerFollowStatements`),
 * so they hear when someone continues it; they may unfollow it as any follow.
 * Why, and what was weighed: docs/decisions.md, "Follows, the inbox and feeds".
 */

const NAME: Record<FollowTarget, string> = { story: "Story", branch: "Branch", author: "Author" };

/** A target's id as a request names it: a malformed one names nothing (404), as in a path. */
const targetIdOf = (body: FollowBody) => (body.target_type === "author" ? accountId(body.target_id) : pathId(body.target_id, NAME[body.target_type]));

/** SQL: the target exists and the viewer may see it (a hidden story or branch is 404 to whoever may not read it). */
function targetShown(type: FollowTarget, id: string, viewer: Viewer): SQL {
  if (type === "story") return sql`EXISTS (SELECT 1 FROM stories s WHERE s.id = ${id} AND ${storyShown("s", viewer)})`;
  if (type === "branch") return sql`EXISTS (SELECT 1 FROM branches b WHERE b.id = ${id} AND ${branchShown("b", viewer)})`;
  return sql`(EXISTS (SELECT 1 FROM users WHERE id = ${id}) OR EXISTS (SELECT 1 FROM bots WHERE id = ${id}))`;
}

/** SQL: how many follow the target (type and id are SQL: a column or a value). */
export const followersCount = (type: SQL, id: SQL): SQL =>
  sql`coalesce((SELECT fc.followers FROM follow_counts fc WHERE fc.target_type = ${type} AND fc.target_id = ${id}), 0)`;

/** A target's followers and the viewer's own follow of it (its id, or null): a query for a page's batch. */
export const followStateQuery = (db: Db, type: FollowTarget, id: string, viewer: Viewer) =>
  rawAll<{ followers: number; mine: string | null }>(
    db,
    sql`SELECT ${followersCount(sql`${type}`, sql`${id}`)} AS followers,
      (SELECT f.id FROM follows f WHERE f.follower_id = ${viewer?.id ?? ""} AND f.target_type = ${type} AND f.target_id = ${id}) AS mine`,
  );

interface FollowSqlRow {
  id: string;
  target_type: FollowTarget;
  target_id: string;
  target_name: string | null;
  author_type: "human" | "bot" | null;
  story_id: string | null;
  hidden: number;
  followers_count: number;
  created_at: string;
}

/**
 * Follow records (`FROM follows f` then `rest`), each target named as the viewer (the follower) may read it: a
 * hidden story's or branch's title is "" (`hidden`), a gone author's name null.
 */
const followRecords = (db: Db, viewer: Viewer, rest: SQL) => {
  const story = sql`(SELECT s.title FROM stories s WHERE s.id = f.target_id AND ${storyShown("s", viewer)})`;
  const branch = sql`(SELECT b.title FROM branches b WHERE b.id = f.target_id AND ${branchShown("b", viewer)})`;
  const author = sql`coalesce((SELECT u.username FROM users u WHERE u.id = f.target_id), (SELECT bt.name FROM bots bt WHERE bt.id = f.target_id))`;
  return rawAll<FollowSqlRow>(
    db,
    sql`SELECT f.id, f.target_type, f.target_id,
      CASE f.target_type WHEN 'story' THEN coalesce(${story}, '') WHEN 'branch' THEN coalesce(${branch}, '') ELSE ${author} END AS target_name,
      CASE WHEN f.target_type != 'author' THEN NULL WHEN EXISTS (SELECT 1 FROM bots bt WHERE bt.id = f.target_id) THEN 'bot' ELSE 'human' END AS author_type,
      CASE f.target_type WHEN 'story' THEN f.target_id WHEN 'branch' THEN (SELECT b.story_id FROM branches b WHERE b.id = f.target_id) END AS story_id,
      CASE f.target_type WHEN 'story' THEN ${story} IS NULL WHEN 'branch' THEN ${branch} IS NULL ELSE 0 END AS hidden,
      ${followersCount(sql`f.target_type`, sql`f.target_id`)} AS followers_count, f.created_at
    FROM follows f ${rest}`,
  );
};

const followView = (r: FollowSqlRow) => ({ ...r, hidden: r.hidden === 1 });

/**
 * SQL: how many things the account follows as the cap counts them: its follows of its own stories are left out.
 * Those are made for it with each story (not chosen), and a prolific writer must not be kept from following others
 * by the stories they started; story creation has limits of its own that bound them.
 */
const followingCount = (accountId: string): SQL =>
  sql`(SELECT count(*) FROM follows f WHERE f.follower_id = ${accountId}
    AND NOT (f.target_type = 'story' AND EXISTS (SELECT 1 FROM stories s WHERE s.id = f.target_id AND s.owner_id = f.follower_id)))`;

/**
 * The owner's follow of their new story and its counter, for the story's creation batch (after its INSERT): made
 * whatever the cap (it does not count toward it), an ordinary follow otherwise (listed, counted, unfollowed).
 */
export const ownerFollowStatements = (db: Db, story: { id: string; ownerId: string; ownerType: "human" | "bot"; createdAt: string }) => [
  rawRun(
    db,
    sql`INSERT INTO follows (id, follower_id, follower_type, target_type, target_id, created_at)
      VALUES (${crypto.randomUUID()}, ${story.ownerId}, ${story.ownerType}, 'story', ${story.id}, ${story.createdAt})`,
  ),
  rawRun(
    db,
    sql`INSERT INTO follow_counts (target_type, target_id, followers) VALUES ('story', ${story.id}, 1)
      ON CONFLICT (target_type, target_id) DO UPDATE SET followers = followers + 1`,
  ),
];

/**
 * Follows the target: 201 with the new follow, or 200 with the one there is. One batch: the INSERT (only while the
 * target is shown to the follower and the follower is under the cap), the target's counter (only if it inserted),
 * the record, and why nothing was inserted (the target unknown or hidden: 404; the cap: 409 CONFLICT).
 */
export async function follow(db: Db, actor: Actor, body: FollowBody, cap: number) {
  const type = body.target_type;
  const targetId = targetIdOf(body);
  if (type === "author" && targetId === actor.id) throw validationError([{ field: "target_id", issue: "is you: an account cannot follow itself" }]);
  const id = crypto.randomUUID();
  const viewer = { id: actor.id, type: actor.type };
  const following = followingCount(actor.id);
  const [, , [row], [why]] = await db.batch([
    rawRun(
      db,
      sql`INSERT INTO follows (id, follower_id, follower_type, target_type, target_id, created_at)
        SELECT ${id}, ${actor.id}, ${writerType(actor)}, ${type}, ${targetId}, ${nowIso()} WHERE ${targetShown(type, targetId, viewer)} AND ${following} < ${cap}
        ON CONFLICT (follower_id, target_type, target_id) DO NOTHING`,
    ),
    rawRun(
      db,
      sql`INSERT INTO follow_counts (target_type, target_id, followers) SELECT ${type}, ${targetId}, 1 WHERE EXISTS (SELECT 1 FROM follows WHERE id = ${id})
        ON CONFLICT (target_type, target_id) DO UPDATE SET followers = followers + 1`,
    ),
    followRecords(db, viewer, sql`WHERE f.follower_id = ${actor.id} AND f.target_type = ${type} AND f.target_id = ${targetId}`),
    rawAll<{ shown: number; following: number }>(db, sql`SELECT ${targetShown(type, targetId, viewer)} AS shown, ${following} AS following`),
  ]);
  if (row) return { created: row.id === id, follow: followView(row) };
  if (!why.shown) throw notFound(NAME[type]);
  throw new ApiError("CONFLICT", `You follow ${why.following} things already, the most an account may: unfollow one first`, {
    limit: cap,
    following: why.following,
  });
}

/**
 * Unfollows: only the follower (403 PERMISSION_DENIED for anyone else, admins too: a follow is its follower's own),
 * 404 for an unknown follow. The counter goes down in the same batch, only if this DELETE finds the row.
 */
export async function unfollow(db: Db, actor: Actor, followId: string) {
  const id = pathId(followId, "Follow");
  const mine = sql`SELECT target_type, target_id FROM follows WHERE id = ${id} AND follower_id = ${actor.id}`;
  const [, deleted, [left]] = await db.batch([
    rawRun(db, sql`UPDATE follow_counts SET followers = followers - 1 WHERE (target_type, target_id) = (${mine})`),
    rawRun(db, sql`DELETE FROM follows WHERE id = ${id} AND follower_id = ${actor.id}`),
    rawAll<{ id: string }>(db, sql`SELECT id FROM follows WHERE id = ${id}`),
  ]);
  if ((deleted as unknown as D1Result).meta.changes === 1) return { id, deleted: true as const };
  if (left) throw new ApiError("PERMISSION_DENIED", "Only its follower may remove a follow");
  throw notFound("Follow");
}

/** The caller's follows, newest first, with each target's name and followers: a page and the total, one round trip. */
export async function listFollows(db: Db, actor: Actor, limit: number, offset: number) {
  const viewer = { id: actor.id, type: actor.type };
  const [rows, [{ total }]] = await db.batch([
    followRecords(db, viewer, sql`WHERE f.follower_id = ${actor.id} ORDER BY f.created_at DESC, f.id DESC LIMIT ${limit} OFFSET ${offset}`),
    rawAll<{ total: number }>(db, sql`SELECT count(*) AS total FROM follows WHERE follower_id = ${actor.id}`),
  ]);
  return { follows: rows.map(followView), pagination: pagination(limit, offset, total) };
}
