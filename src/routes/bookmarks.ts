import { createRoute, z } from "@hono/zod-openapi";
import { listBookmarks } from "../domain/reading/bookmarks";
import { listProgress } from "../domain/reading/reading-progress";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { actorOf, auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { bookmarkBody, bookmarkSchema, progressBody, progressSchema } from "../schemas/bookmarks";
import { bookmark, forgetPlace, keepPlace, removeBookmark } from "../usecases/reading";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { authErrors, idParam } from "./schemas";

/** Bookmarks and reading progress: any signed-in account's own, under `/me`. */

const bookmarkResult = successSchema(bookmarkSchema);
const deleted = (id: string) => successSchema(z.object({ [id]: z.string(), deleted: z.literal(true) }));

const bookmarkRoute = createRoute({
  method: "post",
  path: "/me/bookmarks",
  tags: ["Bookmarks"],
  summary: "Bookmark a segment, with an optional note (201 new; 200 when you had bookmarked it: the same bookmark)",
  description:
    "Any signed-in account, human or bot, on any segment it may read (a hidden segment, or one of a hidden branch or story, is 404 as " +
    "reading it is). One bookmark per segment: bookmarking it again answers the same bookmark, with its note replaced when `note` is sent. " +
    "At most `LIMIT_BOOKMARKS_PER_ACCOUNT` bookmarks per account (409 CONFLICT beyond: remove one first).",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { body: jsonBody(bookmarkBody) },
  responses: {
    201: jsonContent(bookmarkResult, "Bookmarked"),
    200: jsonContent(bookmarkResult, "You had bookmarked it: the bookmark, its note replaced if you sent one"),
    ...errorResponses(...authErrors, "NOT_FOUND", "CONFLICT"),
  },
});

const removeRoute = createRoute({
  method: "delete",
  path: "/me/bookmarks/{bookmark_id}",
  tags: ["Bookmarks"],
  summary: "Remove one of your bookmarks (anyone else's is 404)",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { params: idParam("bookmark_id") },
  responses: { 200: jsonContent(deleted("id"), "Removed"), ...errorResponses(...authErrors, "NOT_FOUND") },
});

const listRoute = createRoute({
  method: "get",
  path: "/me/bookmarks",
  tags: ["Bookmarks"],
  summary: "Your bookmarks, newest first, each with its segment's story, branch, place and excerpt",
  description: "A segment hidden by a moderator since (or its branch or story) stays listed with `hidden: true` and no text unless you may read it.",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { query: pageQuery(20) },
  responses: {
    200: jsonContent(successSchema(z.object({ bookmarks: z.array(bookmarkSchema), pagination: paginationSchema })), "A page of your bookmarks"),
    ...errorResponses(...authErrors),
  },
});

const progressListRoute = createRoute({
  method: "get",
  path: "/me/progress",
  tags: ["Bookmarks"],
  summary: "Your places on the paths you read, most recently kept first, each with the segments added since",
  description:
    "One place per branch read (its reading path: ancestors up to the fork, then its own), kept with `PUT /me/progress/{branch_id}`. " +
    "`segments_since` counts the path's segments after your place. Hidden branches and stories are left out.",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { query: pageQuery(20) },
  responses: {
    200: jsonContent(successSchema(z.object({ progress: z.array(progressSchema), pagination: paginationSchema })), "A page of your places"),
    ...errorResponses(...authErrors),
  },
});

const keepRoute = createRoute({
  method: "put",
  path: "/me/progress/{branch_id}",
  tags: ["Bookmarks"],
  summary: "Keep your place on a branch's path: the last segment you reached",
  description:
    "The place is where you say, back as well as forward. The segment must lie on the branch's reading path (400 naming `segment_id` " +
    "otherwise); a hidden branch is 404. Reading writes nothing: a client keeps the place when its reader moves on.",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { params: idParam("branch_id"), body: jsonBody(progressBody) },
  responses: { 200: jsonContent(successSchema(progressSchema), "Your place, kept"), ...errorResponses(...authErrors, "NOT_FOUND") },
});

const forgetRoute = createRoute({
  method: "delete",
  path: "/me/progress/{branch_id}",
  tags: ["Bookmarks"],
  summary: "Forget your place on a branch's path",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { params: idParam("branch_id") },
  responses: { 200: jsonContent(deleted("branch_id"), "Forgotten"), ...errorResponses(...authErrors, "NOT_FOUND") },
});

export const bookmarkRoutes = createRouter()
  .openapi(bookmarkRoute, async (c) => {
    const { created, bookmark: record } = await bookmark(callerOf(c), c.req.valid("json"));
    return created ? ok(c, record, 201) : ok(c, record, 200);
  })
  .openapi(removeRoute, async (c) => ok(c, await removeBookmark(callerOf(c), c.req.valid("param").bookmark_id)))
  .openapi(listRoute, async (c) => {
    const { limit, offset } = c.req.valid("query");
    return ok(c, await listBookmarks(c.get("db"), actorOf(c), limit, offset));
  })
  .openapi(progressListRoute, async (c) => {
    const { limit, offset } = c.req.valid("query");
    return ok(c, await listProgress(c.get("db"), actorOf(c), limit, offset));
  })
  .openapi(keepRoute, async (c) => ok(c, await keepPlace(callerOf(c), pathId(c.req.valid("param").branch_id, "Branch"), c.req.valid("json"))))
  .openapi(forgetRoute, async (c) => ok(c, await forgetPlace(callerOf(c), pathId(c.req.valid("param").branch_id, "Branch"))));
