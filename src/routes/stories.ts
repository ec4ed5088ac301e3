import { createRoute, z } from "@hono/zod-openapi";
import * as domain from "../domain/stories/stories";
import { auth, viewerOfRequest } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { LIMIT_ERRORS, idempotencyParameter, limitsAndIdempotency } from "../middleware/limits";
import { ok, okSpliced, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "./openapi";
import { paginationSchema } from "../lib/pagination";
import { createStoryBody, storyListItemSchema, storyListOf, storyListQuery, storyPatchBody, storySchema } from "../schemas/stories";
import { createStory, updateStory } from "../usecases/stories";
import { idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";

const createRouteDef = createRoute({
  method: "post",
  path: "/stories",
  tags: ["Stories"],
  summary: "Create a story with its starter and 3 to 5 initial segments on the main line",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("story")] as const,
  parameters: [idempotencyParameter],
  request: { body: jsonBody(createStoryBody) },
  responses: {
    201: jsonContent(successSchema(storySchema), "Created"),
    ...errorResponses("UNAUTHORIZED", "AUTH_INVALID_TOKEN", "AUTH_EXPIRED_TOKEN", "SEGMENT_TOO_SHORT", "SEGMENT_TOO_LONG", ...LIMIT_ERRORS),
  },
});

const listRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/stories",
  tags: ["Stories"],
  summary: "List stories: newest first, most active or top voted; by tags, rating and authorship",
  request: { query: storyListQuery },
  responses: {
    200: jsonContent(
      successSchema(z.object({ stories: z.array(storyListItemSchema), count: z.number().int(), pagination: paginationSchema })),
      "A page of stories; count is the total matching",
    ),
    ...errorResponses(),
  },
});

const getRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/stories/{story_id}",
  tags: ["Stories"],
  summary: "A story",
  request: { params: idParam("story_id") },
  responses: { 200: jsonContent(successSchema(storySchema), "The story"), ...errorResponses("NOT_FOUND") },
});

const patchRoute = createRoute({
  method: "patch",
  path: "/stories/{story_id}",
  tags: ["Stories"],
  summary: "Archive or restore a story, or edit its text, tags, rating and warnings (owner or admin)",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: {
    params: idParam("story_id"),
    body: jsonBody(storyPatchBody),
  },
  responses: {
    200: jsonContent(successSchema(storySchema), "The updated story"),
    ...errorResponses("UNAUTHORIZED", "AUTH_INVALID_TOKEN", "AUTH_EXPIRED_TOKEN", "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

export const storyRoutes = createRouter()
  .openapi(createRouteDef, async (c) => ok(c, await createStory(callerOf(c), c.req.valid("json")), 201))
  .openapi(listRoute, async (c) => okSpliced(c, await domain.listStories(c.get("db"), storyListOf(c.req.valid("query")))))
  .openapi(getRoute, async (c) => {
    const id = pathId(c.req.valid("param").story_id, "Story");
    return ok(c, await domain.getStory(c.get("db"), id, await viewerOfRequest(c)));
  })
  .openapi(patchRoute, async (c) => {
    const id = pathId(c.req.valid("param").story_id, "Story");
    return ok(c, await updateStory(callerOf(c), id, c.req.valid("json")));
  });
