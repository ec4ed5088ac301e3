import { createRoute, z } from "@hono/zod-openapi";
import { auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { ok, successSchema } from "../lib/envelope";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { inboxItemSchema, inboxQuery, markReadBody } from "../schemas/inbox";
import { markInboxRead, readInbox } from "../usecases/follows";
import { authErrors } from "./schemas";

const inboxRoute = createRoute({
  method: "get",
  path: "/me/inbox",
  tags: ["Inbox"],
  summary: "Your inbox, newest activity first (`unread=true`: unread items only)",
  description:
    "What reached you: new segments on branches you follow and by authors you follow, new branches of stories you follow, new stories by " +
    "authors you follow, replies to your comments, branches forked from your segments, and moderators' actions on your content. Several " +
    "events of one kind on one branch within `INBOX_COLLAPSE_SECONDS` make one item (`count`). Nothing of your own actions, of hidden " +
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

export const inboxRoutes = createRouter()
  .openapi(inboxRoute, async (c) => {
    const { unread, ...page } = c.req.valid("query");
    return ok(c, await readInbox(callerOf(c), { unread: unread ?? false, ...page }));
  })
  .openapi(readRoute, async (c) => ok(c, await markInboxRead(callerOf(c), c.req.valid("json"))));
