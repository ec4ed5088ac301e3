import { createRoute, z } from "@hono/zod-openapi";
import { auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { ok, successSchema } from "../lib/envelope";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { feedTokenSchema, inboxItemSchema, inboxQuery, markReadBody } from "../schemas/inbox";
import { mintFeedToken, revokeFeedToken } from "../usecases/following";
import { markInboxRead, readInbox } from "../usecases/following";
import { authErrors } from "./schemas";

const inboxRoute = createRoute({
  method: "get",
  path: "/me/inbox",
  tags: ["Inbox"],
  summary: "Your inbox, newest activity first (`unread=true`: unread items only)",
  description:
    "What reached you: new segments on branches you follow, on the main line of stories you follow (your own stories included: their " +
    "owner follows them from creation) and by authors you follow; new branches of stories you follow; new stories and branches by " +
    "authors you follow; replies to your comments, branches forked from your segments, and moderators' actions on your content. Several " +
    "events of one kind on one branch within `INBOX_COLLAPSE_SECONDS` make one item (`count`), however many of your follows brought " +
    "them. Nothing of your own actions, of hidden " +
    'content or by suspended accounts; something hidden after it reached you keeps its item, its text "" (`hidden: true`).',
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { query: pageQuery(20).extend(inboxQuery.shape) },
  responses: {
    200: jsonContent(
      successSchema(z.object({ items: z.array(inboxItemSchema), unread_count: z.number().int(), pagination: paginationSchema })),
      "A page of your inbox",
    ),
    ...errorResponses(...authErrors),
  },
});

const readRoute = createRoute({
  method: "post",
  path: "/me/inbox/read",
  tags: ["Inbox"],
  summary: "Mark inbox items read: `{ids}` (at most 100) or `{up_to}` (every item last updated at or before that time)",
  description: "A read item takes no more events: the next one of its kind starts a new item. Unknown ids (and others' items) are skipped.",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { body: jsonBody(markReadBody) },
  responses: {
    200: jsonContent(successSchema(z.object({ marked: z.number().int(), unread_count: z.number().int() })), "Marked"),
    ...errorResponses(...authErrors),
  },
});

const mintFeedRoute = createRoute({
  method: "post",
  path: "/me/feed-token",
  tags: ["Inbox"],
  summary: "A private Atom feed of your inbox: its address, with a new token in it (any earlier address stops at once)",
  description:
    "For a feed reader, which sends no credential: the address itself is the secret, answered only here and only once (kept hashed). " +
    "The feed has your newest 50 items, their text as anonymous readers may read it; it answers 401 once the token is revoked or " +
    "replaced, 403 ACCOUNT_SUSPENDED while your account is suspended.",
  security: bearerSecurity,
  middleware: [auth()] as const,
  responses: { 201: jsonContent(successSchema(feedTokenSchema), "The feed's address, shown this once"), ...errorResponses(...authErrors) },
});

const revokeFeedRoute = createRoute({
  method: "delete",
  path: "/me/feed-token",
  tags: ["Inbox"],
  summary: "Revoke your inbox feed's token: its address answers 401 from now on",
  description: "`revoked` is false when there was none (revoking twice is no error).",
  security: bearerSecurity,
  middleware: [auth()] as const,
  responses: { 200: jsonContent(successSchema(z.object({ revoked: z.boolean() })), "Revoked"), ...errorResponses(...authErrors) },
});

export const inboxRoutes = createRouter()
  .openapi(inboxRoute, async (c) => {
    const { unread, ...page } = c.req.valid("query");
    return ok(c, await readInbox(callerOf(c), { unread: unread ?? false, ...page }));
  })
  .openapi(readRoute, async (c) => ok(c, await markInboxRead(callerOf(c), c.req.valid("json"))))
  .openapi(mintFeedRoute, async (c) => ok(c, await mintFeedToken(callerOf(c)), 201))
  .openapi(revokeFeedRoute, async (c) => ok(c, await revokeFeedToken(callerOf(c))));
