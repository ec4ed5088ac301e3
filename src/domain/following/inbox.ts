import { type SQL, sql } from "drizzle-orm";
import { type Db, nowIso, rawAll, rawRun, readOf } from "../../db/client";
import { pagination } from "../../lib/pagination";
import type { InboxKind, MarkReadBody } from "../../schemas/inbox";
import type { Actor } from "../shared/actor";
import { type Viewer, branchShown, seesHidden, storyShown } from "../shared/visibility";

/**
 * Reading an inbox: the account's items, newest activity first, each naming what it is about as its
 * reader may see it now. The text goes through the hidden rules in the read's own query (src/domain/shared/visibility.ts),
 * so a hide after the event takes the item's titles and excerpt at once ("" and `hidden: true`), with no inbox
 * row rewritten.
 */

/** How much of a segment or comment an item quotes (characters). */
export const EXCERPT_CHARS = 200;

/** The account's unread items, counted: a query for any batch (the inbox, `GET /auth/me`, a signed-in page's header). */
export const unreadCountSql = (accountId: string): SQL => sql`SELECT count(*) AS unread FROM inbox_items WHERE account_id = ${accountId} AND read_at IS NULL`;

export const unreadCountQuery = (db: Db, accountId: string) => rawAll<{ unread: number }>(db, unreadCountSql(accountId));

interface ItemSqlRow {
  id: string;
  kind: InboxKind;
  count: number;
  story_id: string;
  story_title: string;
  branch_id: string | null;
  branch_title: string | null;
  segment_id: string | null;
  sequence_order: number | null;
  segment_excerpt: string | null;
  comment_id: string | null;
  comment_excerpt: string | null;
  actor_id: string;
  actor_name: string | null;
  actor_type: "human" | "bot";
  data: string | null;
  hidden: number;
  started_at: string;
  updated_at: string;
  read_at: string | null;
}

/** SQL: text of `t` (an alias with `hidden_at` and an author column) as the viewer may read it, on a branch they may see. */
const quoted = (t: string, author: string, viewer: Viewer) =>
  sql`CASE WHEN ${sql.raw(`${t}.id`)} IS NULL THEN NULL WHEN ${branchShown("b", viewer)} AND (${sql.raw(`${t}.hidden_at`)} IS NULL OR ${seesHidden(viewer, sql.raw(`${t}.${author}`))})
    THEN substr(${sql.raw(`${t}.content`)}, 1, ${EXCERPT_CHARS}) ELSE '' END`;

/** Items of the account (`rest` follows `FROM inbox_items i` and its joins), their text as the account may read it now. */
function itemRecords(db: Db, viewer: Viewer, rest: SQL) {
  const storyOk = storyShown("st", viewer);
  const branchOk = branchShown("b", viewer);
  const segment = quoted("s", "author_id", viewer);
  const comment = quoted("c", "author_id", viewer);
  return rawAll<ItemSqlRow>(
    db,
    sql`SELECT i.id, i.kind, i.count, i.story_id, CASE WHEN ${storyOk} THEN st.title ELSE '' END AS story_title,
        i.branch_id, CASE WHEN b.id IS NULL THEN NULL WHEN ${branchOk} THEN b.title ELSE '' END AS branch_title,
        i.segment_id, s.sequence_order, ${segment} AS segment_excerpt, i.comment_id, ${comment} AS comment_excerpt,
        i.actor_id, coalesce(u.username, bt.name) AS actor_name, CASE WHEN bt.id IS NULL THEN 'human' ELSE 'bot' END AS actor_type, i.data,
        NOT (${storyOk}) OR (b.id IS NOT NULL AND NOT (${branchOk})) OR ${segment} = '' OR ${comment} = '' AS hidden,
        i.started_at, i.updated_at, i.read_at
      FROM inbox_items i JOIN stories st ON st.id = i.story_id LEFT JOIN branches b ON b.id = i.branch_id
        LEFT JOIN segments s ON s.id = i.segment_id LEFT JOIN comments c ON c.id = i.comment_id
        LEFT JOIN users u ON u.id = i.actor_id LEFT JOIN bots bt ON bt.id = i.actor_id
      ${rest}`,
  );
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const titled = (title: string | null, what: string) => (title ? `“${title}”` : `a hidden ${what}`);

/** The item in words ("7 new segments on “main line” of “The Tide”"). */
function messageOf(r: ItemSqlRow, moderation: Moderation | null): string {
  const story = titled(r.story_title, "story");
  const branch = r.branch_title === null ? story : `${titled(r.branch_title, "branch")} of ${story}`;
  const who = r.actor_name ?? "someone";
  switch (r.kind) {
    case "new_segments":
      return `${plural(r.count, "new segment")} on ${branch}${r.count === 1 ? ` by ${who}` : `, the latest by ${who}`}`;
    case "new_branches":
      return `${plural(r.count, "new branch", "new branches")} of ${story}${r.count === 1 ? ` by ${who}` : ""}`;
    case "new_story":
      return `${who} started a new story: ${story}`;
    case "reply":
      return `${r.count === 1 ? `${who} replied` : `${plural(r.count, "reply", "replies")}`} to your comment on ${branch}`;
    case "fork":
      return `${r.count === 1 ? `${who} forked a branch` : plural(r.count, "new branch", "new branches")} from your segment on ${story}`;
    case "moderation": {
      const m = moderation!;
      const done = m.action === "hide" ? "hid" : "restored";
      return `A moderator ${done} your ${m.target_type} on ${story}${m.reason ? `: ${m.reason}` : ""}`;
    }
  }
}

interface Moderation {
  action: "hide" | "restore";
  target_type: "segment" | "comment" | "story" | "branch";
  reason: string | null;
}

/** An item as the API shows it (moderators are not named to the author they acted on). */
export function itemView(r: ItemSqlRow) {
  const data = r.data ? (JSON.parse(r.data) as Record<string, unknown>) : null;
  const moderation =
    r.kind === "moderation" && data ? ({ action: data.action, target_type: data.target_type, reason: data.reason ?? null } as Moderation) : null;
  return {
    id: r.id,
    kind: r.kind,
    count: r.count,
    message: messageOf(r, moderation),
    unread: r.read_at === null,
    story: { id: r.story_id, title: r.story_title },
    branch: r.branch_id === null ? null : { id: r.branch_id, title: r.branch_title ?? "" },
    segment: r.segment_id === null ? null : { id: r.segment_id, sequence_order: r.sequence_order, excerpt: r.segment_excerpt ?? "" },
    comment: r.comment_id === null ? null : { id: r.comment_id, excerpt: r.comment_excerpt ?? "" },
    actor: moderation || r.actor_name === null ? null : { id: r.actor_id, name: r.actor_name, type: r.actor_type },
    moderation,
    hidden: r.hidden === 1,
    created_at: r.started_at,
    updated_at: r.updated_at,
    read_at: r.read_at,
  };
}

export type InboxItem = ReturnType<typeof itemView>;

/** The reader of an inbox: its account, as the hidden rules see a viewer. */
const readerOf = (actor: Pick<Actor, "id" | "type">): Viewer => ({ id: actor.id, type: actor.type });

/**
 * A page of the account's inbox (unread items only with `unread`), newest activity first, with the total and the
 * unread count: one round trip (a read, to share one with a page's other statements).
 */
export function inboxRead(db: Db, actor: Pick<Actor, "id" | "type">, opts: { unread: boolean; limit: number; offset: number }) {
  const only = opts.unread ? sql` AND i.read_at IS NULL` : sql``;
  return readOf(
    [
      itemRecords(db, readerOf(actor), sql`WHERE i.account_id = ${actor.id}${only} ORDER BY i.seq DESC LIMIT ${opts.limit} OFFSET ${opts.offset}`),
      rawAll<{ total: number }>(db, sql`SELECT count(*) AS total FROM inbox_items i WHERE i.account_id = ${actor.id}${only}`),
      unreadCountQuery(db, actor.id),
    ],
    ([rows, [{ total }], [{ unread }]]) => ({ items: rows.map(itemView), unread_count: unread, pagination: pagination(opts.limit, opts.offset, total) }),
  );
}

/**
 * The newest `limit` items of an account (`account`: its id, or SQL selecting it) as `viewer` may read them: a query
 * for a batch, its rows shaped by `itemView` (the private inbox feed, src/domain/following/feed-tokens.ts).
 */
export const latestItemsQuery = (db: Db, account: string | SQL, viewer: Viewer, limit: number) =>
  itemRecords(db, viewer, sql`WHERE i.account_id = ${account} ORDER BY i.seq DESC LIMIT ${limit}`);

/** What the inbox page's script polls: the unread count and when the newest activity was (null: none). */
export async function inboxStatus(db: Db, accountId: string) {
  const [[{ unread }], [latest]] = await db.batch([
    unreadCountQuery(db, accountId),
    rawAll<{ updated_at: string }>(db, sql`SELECT updated_at FROM inbox_items WHERE account_id = ${accountId} ORDER BY seq DESC LIMIT 1`),
  ]);
  return { unread_count: unread, latest: latest?.updated_at ?? null };
}

/**
 * Marks the account's items read: the ones named (others' ids and unknown ones match nothing), or every item last
 * updated at or before `up_to`. A read item takes no further events: the next one starts a new item. One batch,
 * with the unread count after it.
 */
export async function markRead(db: Db, accountId: string, body: MarkReadBody) {
  const which = body.ids
    ? sql`id IN (${sql.join(
        body.ids.map((id) => sql`${id.toLowerCase()}`),
        sql`, `,
      )})`
    : sql`updated_at <= ${new Date(body.up_to!).toISOString()}`;
  const [marked, [{ unread }]] = await db.batch([
    rawRun(db, sql`UPDATE inbox_items SET read_at = ${nowIso()} WHERE account_id = ${accountId} AND read_at IS NULL AND ${which}`),
    unreadCountQuery(db, accountId),
  ]);
  return { marked: (marked as unknown as D1Result).meta.changes, unread_count: unread };
}
