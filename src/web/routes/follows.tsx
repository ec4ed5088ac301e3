import { type Context, Hono } from "hono";
import type { AppEnv } from "../../context";
import { inboxStatus } from "../../domain/following/inbox";
import { readerUser } from "../../domain/reading/reader";
import { accountId } from "../../lib/ids";
import { callerOf } from "../../middleware/caller";
import { emptyReadCacheAfterWrites, publicReadCache } from "../../middleware/read-cache";
import { followBody } from "../../schemas/follows";
import { markReadBody } from "../../schemas/inbox";
import { mintFeedToken, readInboxPage, revokeFeedToken } from "../../usecases/following";
import { follow, listFollows, markInboxRead, unfollow } from "../../usecases/following";
import { fieldsOf, optional, parseWith } from "../support/form-errors";
import { FollowsPage } from "../pages/follows";
import { InboxPage } from "../pages/inbox";
import { UserPage } from "../pages/user";
import { absolute, page } from "../support/render";
import { safeNext } from "../support/safe-next";
import { formPost, pageViewer, requireSession, viewerOf } from "../support/session";

/**
 * Follows and the inbox on the web reader: the Follow and Unfollow forms of the story, branch, bot and
 * writer pages (Origin-checked, a session, the API's use cases, a 303 back to the page), a writer's page, what one
 * follows, and the inbox with its read forms and the status its script polls. An error shows as the site's error
 * page, in words (following past the cap: 409).
 */
export const followRoutes = new Hono<AppEnv>();

/** Inbox items per page, and follows per page of "what you follow". */
const INBOX_PAGE = 50;
const FOLLOWS_PAGE = 100;
/** Pages past this one are not served (an offset is a scan). */
const MAX_PAGE = 100;

const see = (c: Context<AppEnv>, path: string) => c.redirect(path, 303);

function pageNumber(c: Context<AppEnv>): number {
  const n = Number(c.req.query("page"));
  return Number.isInteger(n) && n >= 1 ? Math.min(n, MAX_PAGE) : 1;
}

/** A form of these pages: Origin check, a session (else log in first, then the inbox), and a write that empties the micro-cache. */
const form = [formPost, requireSession(() => "/inbox"), emptyReadCacheAfterWrites] as const;

followRoutes.post("/follows", ...form, async (c) => {
  const fields = await fieldsOf(c);
  await follow(callerOf(c), parseWith(followBody, { target_type: fields.target_type, target_id: fields.target_id }));
  return see(c, safeNext(fields.next));
});

followRoutes.post("/follows/:follow_id/delete", ...form, async (c) => {
  const fields = await fieldsOf(c);
  await unfollow(callerOf(c), c.req.param("follow_id"));
  return see(c, safeNext(fields.next));
});

followRoutes.post("/inbox/read", ...form, async (c) => {
  const fields = await fieldsOf(c);
  const ids = optional(fields.ids);
  await markInboxRead(callerOf(c), parseWith(markReadBody, ids ? { ids: [ids] } : { up_to: optional(fields.up_to) }));
  return see(c, safeNext(fields.next ?? "/inbox"));
});

/**
 * The inbox page, with its feed's state; `shown`: the feed's new address, on the answer to the form that made it (the
 * only time it is shown: `no-store`, as a bot's new key is).
 */
async function inboxPage(c: Context<AppEnv>, shown: string | null = null) {
  const unreadOnly = c.req.query("unread") === "true";
  const n = pageNumber(c);
  const { inbox, feedSince } = await readInboxPage(callerOf(c), { unread: unreadOnly, limit: INBOX_PAGE, offset: (n - 1) * INBOX_PAGE });
  // The forms on the answer to the feed's form come back to the inbox itself.
  const here = shown ? "/inbox" : `/inbox${new URL(c.req.url).search}`;
  const feed = { since: feedSince, url: shown };
  const res = await page(
    c,
    <InboxPage data={inbox} feed={feed} page={n} unreadOnly={unreadOnly} canonical={absolute(c, "/inbox")} here={here} viewer={pageViewer(c)!} />,
  );
  if (shown) res.headers.set("Cache-Control", "no-store");
  return res;
}

followRoutes.get(
  "/inbox",
  requireSession(() => "/inbox"),
  (c) => inboxPage(c),
);

// The inbox's private feed: a new address (the old one stops), shown on this answer only; or revoked.
followRoutes.post("/inbox/feed", ...form, async (c) => inboxPage(c, (await mintFeedToken(callerOf(c))).url));

followRoutes.post("/inbox/feed/revoke", ...form, async (c) => {
  await revokeFeedToken(callerOf(c));
  return see(c, "/inbox");
});

/** What the inbox page's script polls: the unread count and the newest activity's time, as JSON (401 signed out). */
followRoutes.get("/inbox/status", async (c) => {
  const viewer = viewerOf(c);
  if (!viewer) return c.json({ unread_count: null, latest: null }, 401);
  return c.json(await inboxStatus(c.get("db"), viewer.id));
});

followRoutes.get(
  "/follows",
  requireSession(() => "/follows"),
  async (c) => {
    const n = pageNumber(c);
    const data = await listFollows(callerOf(c), { limit: FOLLOWS_PAGE, offset: (n - 1) * FOLLOWS_PAGE });
    return page(c, <FollowsPage data={data} canonical={absolute(c, "/follows")} viewer={pageViewer(c)!} />);
  },
);

/** Pages shown to a signed-in human are theirs (their follow button): never served from or stored in the shared cache. */
followRoutes.get("/users/:id", publicReadCache({ unless: (c) => viewerOf(c) !== null }), async (c) => {
  const id = accountId(c.req.param("id"));
  const data = await readerUser(c.get("db"), id, viewerOf(c));
  return page(c, <UserPage data={data} canonical={absolute(c, `/users/${id}`)} viewer={pageViewer(c)} />);
});
