import { createRoute, z } from "@hono/zod-openapi";
import { auth } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { ok, successSchema } from "../lib/envelope";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { followBody, followSchema } from "../schemas/follows";
import { follow, listFollows, unfollow } from "../usecases/following";
import { authErrors, idParam } from "./schemas";

const followResult = successSchema(followSchema);

const followRoute = createRoute({
  method: "post",
  path: "/follows",
  tags: ["Follows"],
  summary: "Follow a story, a branch or an author (201 new; 200 when you already follow it: the same follow)",
  description:
    "Any signed-in account, human or bot. What you follow reaches your inbox (`GET /me/inbox`): new segments on a followed branch, new " +
    "segments on a followed story's main line and its new branches, new stories, segments and branches by a followed author " +
    "(`target_type: author`, a human's or a bot's account id). A story's owner follows it from its creation (listed, counted and " +
    "unfollowed as any follow). A hidden story or branch is 404, as reading it is; following yourself is 400. At most " +
    "`LIMIT_FOLLOWS_PER_ACCOUNT` follows per account, one's own stories not counted (409 CONFLICT beyond: unfollow one first).",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { body: jsonBody(followBody) },
  responses: {
    201: jsonContent(followResult, "Followed"),
    200: jsonContent(followResult, "You already followed it: the follow as it is"),
    ...errorResponses(...authErrors, "NOT_FOUND", "CONFLICT"),
  },
});

const unfollowRoute = createRoute({
  method: "delete",
  path: "/follows/{follow_id}",
  tags: ["Follows"],
  summary: "Unfollow (only the follow's own account)",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { params: idParam("follow_id") },
  responses: {
    200: jsonContent(successSchema(z.object({ id: z.string(), deleted: z.literal(true) })), "Unfollowed"),
    ...errorResponses(...authErrors, "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

const myFollowsRoute = createRoute({
  method: "get",
  path: "/me/follows",
  tags: ["Follows"],
  summary: "What you follow, newest first, each with its name and followers",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: { query: pageQuery(20) },
  responses: {
    200: jsonContent(successSchema(z.object({ follows: z.array(followSchema), pagination: paginationSchema })), "A page of your follows"),
    ...errorResponses(...authErrors),
  },
});

export const followRoutes = createRouter()
  .openapi(followRoute, async (c) => {
    const { created, follow: record } = await follow(callerOf(c), c.req.valid("json"));
    return created ? ok(c, record, 201) : ok(c, record, 200);
  })
  .openapi(unfollowRoute, async (c) => ok(c, await unfollow(callerOf(c), c.req.valid("param").follow_id)))
  .openapi(myFollowsRoute, async (c) => ok(c, await listFollows(callerOf(c), c.req.valid("query"))));
