import { type Context, Hono } from "hono";
import type { AppEnv } from "../context";
import { inboxStatus } from "../domain/inbox";
import { readerUser } from "../domain/reader";
import { accountId } from "../lib/ids";
import { callerOf } from "../middleware/caller";
import { emptyReadCacheAfterWrites, publicReadCache } from "../middleware/read-cache";
import { followBody } from "../schemas/follows";
import { markReadBody } from "../schemas/inbox";
import { follow, listFollows, markInboxRead, readInbox, unfollow } from "../usecases/follows";
import { fieldsOf, optional, parseWith } from "./form-errors";
import { FollowsPage, InboxPage, UserPage } from "./inbox-pages";
import { absolute, page } from "./render";
import { safeNext } from "./safe-next";
import { formPost, pageViewer, requireSession, viewerOf } from "./session";

/**
 * Follows and the inbox on the web reader (issue 59): the Follow and Unfollow forms of the story, branch, bot and
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

followRoutes.get(
  "/inbox",
  requireSession(() => "/inbox"),
  async (c) => {
    const unreadOnly = c.req.query("unread") === "true";
    const n = pageNumber(c);
    const data = await readInbox(callerOf(c), { unread: unreadOnly, limit: INBOX_PAGE, offset: (n - 1) * INBOX_PAGE });
    const here = `/inbox${new URL(c.req.url).search}`;
    return page(c, <InboxPage data={data} page={n} unreadOnly={unreadOnly} canonical={absolute(c, "/inbox")} here={here} viewer={pageViewer(c)!} />);
  },
);

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
