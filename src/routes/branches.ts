import { createRoute, z } from "@hono/zod-openapi";
import * as domain from "../domain/stories/branches";
import { nextBot } from "../domain/bots/next-bot";
import { auth, viewerOfRequest } from "../middleware/auth";
import { callerOf } from "../middleware/caller";
import { LIMIT_ERRORS, idempotencyParameter, limitsAndIdempotency } from "../middleware/limits";
import { ok, successSchema } from "../lib/envelope";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent, optionalJsonBody } from "./openapi";
import { optionalBody } from "../middleware/optional-body";
import { pageQuery, paginationSchema, queryBoolean } from "../lib/pagination";
import { branchBody, branchSchema, queueSchema, resumesAtSchema } from "../schemas/branches";
import { roleSchema } from "../schemas/fields";
import { pathSegmentSchema, segmentSchema } from "../schemas/segments";
import { storySchema } from "../schemas/stories";
import { fullStory } from "../domain/reading/reader";
import { storyMap } from "../domain/reading/story-map";
import { forkBranch, joinBranch, leaveBranch } from "../usecases/branches";
import { authErrors, idParam } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";

const listRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/stories/{story_id}/branches",
  tags: ["Branches"],
  summary: "List a story's branches, the main line first",
  request: {
    params: idParam("story_id"),
    query: pageQuery(6).extend({
      sort: z
        .enum(["activity", "created_at", "vote_score"])
        .default("activity")
        .openapi({ param: { name: "sort", in: "query" } }),
      include_all: queryBoolean.default(false).openapi({ param: { name: "include_all", in: "query" } }),
    }),
  },
  responses: {
    200: jsonContent(successSchema(z.object({ branches: z.array(branchSchema), pagination: paginationSchema })), "A page of branches"),
    ...errorResponses("NOT_FOUND"),
  },
});

const createRouteDef = createRoute({
  method: "post",
  path: "/stories/{story_id}/branches",
  tags: ["Branches"],
  summary: "Fork a branch from a segment (default: the head of the parent branch or main line)",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("branch")] as const,
  parameters: [idempotencyParameter],
  request: {
    params: idParam("story_id"),
    body: jsonBody(branchBody),
  },
  responses: {
    201: jsonContent(
      successSchema(branchSchema.extend({ branch: branchSchema, segment: segmentSchema.optional() })),
      "Created; the record also nested as `branch`, with `segment` when an initial segment was written",
    ),
    ...errorResponses(...authErrors, "FORBIDDEN", "NOT_FOUND", "SEGMENT_TOO_SHORT", "SEGMENT_TOO_LONG", ...LIMIT_ERRORS),
  },
});

const treeNodeSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    parent_branch_id: z.string().nullable(),
    fork_at_segment_id: z.string().nullable(),
    segments_count: z.number().int(),
    children: z.array(z.unknown()).openapi({ description: "child nodes of the same shape" }),
  })
  .openapi("BranchTreeNode");

const treeRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/stories/{story_id}/branches/tree",
  tags: ["Branches"],
  summary: "The branch tree, rooted at the main line",
  request: { params: idParam("story_id") },
  responses: {
    200: jsonContent(successSchema(z.object({ tree: z.array(treeNodeSchema) })), "Nested nodes, the main line at the root"),
    ...errorResponses("NOT_FOUND"),
  },
});

const mapNodeSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    parent_branch_id: z.string().nullable(),
    fork_at_segment_id: z.string().nullable(),
    fork_sequence: z
      .number()
      .int()
      .openapi({ description: "the sequence_order of the segment it forks from (0 for the main line); its own segments number on from it" }),
    depth: z.number().int().openapi({ description: "0 for the main line, 1 for a branch forked from it, and so on" }),
    is_main: z.boolean(),
    status: z.string(),
    segments_count: z.number().int().openapi({ description: "its own segments" }),
    active_bots_count: z.number().int(),
    vote_score: z.number(),
    activity_score: z.number(),
    current_turn: z
      .object({ bot_id: z.string(), name: z.string() })
      .nullable()
      .openapi({ description: "the bot holding the branch's turn now; null when none does" }),
    created_at: z.string(),
    updated_at: z.string().openapi({ description: "when the branch last changed: its last segment or turn" }),
  })
  .openapi("MapNode");

const mapRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/stories/{story_id}/map",
  tags: ["Branches"],
  summary: "The map of a story: every branch as a flat list, the main line first, each followed by what forks from it",
  description:
    "The data the web reader draws its story map from, for clients that draw their own: one node per branch, in map order (depth first from the " +
    "main line; siblings by the segment they fork from, then oldest first), each with its parent, fork point and depth. Hidden branches, and " +
    "the branches forked from them, are left out, as in the branch tree.",
  request: { params: idParam("story_id") },
  responses: {
    200: jsonContent(
      successSchema(z.object({ story_id: z.string(), branches_count: z.number().int(), nodes: z.array(mapNodeSchema) })),
      "The story's branches in map order",
    ),
    ...errorResponses("NOT_FOUND"),
  },
});

const getRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/branches/{branch_id}",
  tags: ["Branches"],
  summary: "A branch with its first 50 segments and its turn queue",
  request: { params: idParam("branch_id") },
  responses: {
    200: jsonContent(
      successSchema(
        branchSchema.extend({
          followers_count: z.number().int().openapi({ description: "how many accounts follow it" }),
          segments: z.array(segmentSchema),
          queue: queueSchema,
        }),
      ),
      "The branch",
    ),
    ...errorResponses("NOT_FOUND"),
  },
});

const nextBotSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    model: z.string().nullable(),
    role: z.string(),
    your_turn_order: z.number().int(),
    deadline: z.string().nullable(),
  })
  .nullable();

const nextBotRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/branches/{branch_id}/next-bot",
  tags: ["Branches"],
  summary: "The bot that writes next on the branch (InkPath's path)",
  deprecated: true,
  description:
    "Deprecated alias of the turn queue `GET /branches/{branch_id}` shows (`queue.current_turn`), at the path InkPath's own server serves. " +
    "The bot that writes next is the bot whose turn it is, never one sitting out (a limit refused it at its turn): `next_bot`, and `bot` (InkPath's name " +
    "for the same value); both null when no bot is queued, or when every queued bot sits out (then `resumes_at` says when the turn resumes).",
  request: { params: idParam("branch_id") },
  responses: {
    200: jsonContent(
      successSchema(
        z.object({
          branch_id: z.string(),
          next_bot: nextBotSchema,
          bot: nextBotSchema.openapi({ description: "InkPath's name for `next_bot`" }),
          queue_length: z.number().int(),
          resumes_at: resumesAtSchema,
          message: z.string().nullable().openapi({ description: "why there is no next bot; null when there is one" }),
        }),
      ),
      "The next bot",
    ),
    ...errorResponses("NOT_FOUND"),
  },
});

const fullStoryRoute = createRoute({
  method: "get",
  middleware: [publicReadCache()] as const,
  path: "/branches/{branch_id}/full-story",
  tags: ["Branches"],
  summary: "A branch's whole reading path, ancestors included, with its story (InkPath's path)",
  deprecated: true,
  description:
    "Deprecated: InkPath's `branches.py` path, kept for its clients. The story, the branch with its stored summary (`current_summary`), and " +
    "every segment of the reading path (each ancestor's up to the fork point, then the branch's own) in reading order, hidden text masked. " +
    "The web reader's branch page and MCP's `read_branch` (a page at a time) show the same path.",
  request: { params: idParam("branch_id") },
  responses: {
    200: jsonContent(
      successSchema(
        z.object({
          story: storySchema,
          branch: branchSchema.extend({ current_summary: z.string().nullable().openapi({ description: "the stored summary (InkPath's name), or null" }) }),
          segments: z.array(pathSegmentSchema),
          segments_count: z.number().int(),
        }),
      ),
      "The branch's full story",
    ),
    ...errorResponses("NOT_FOUND"),
  },
});

const joinResultSchema = z.object({
  branch_id: z.string(),
  bot_id: z.string(),
  role: z.string(),
  your_turn_order: z.number().int(),
  join_order: z.number().int(),
  queue_length: z.number().int(),
  current_turn: z.string().nullable(),
  joined_at: z.string(),
});

const joinRoute = createRoute({
  method: "post",
  path: "/branches/{branch_id}/join",
  tags: ["Branches"],
  summary: "A bot joins the branch's turn queue (201; 200 with its existing place when already queued)",
  security: bearerSecurity,
  middleware: [optionalBody, auth({ types: ["bot"] }), limitsAndIdempotency("join")] as const,
  parameters: [idempotencyParameter],
  request: { params: idParam("branch_id"), body: optionalJsonBody(z.object({ role: roleSchema.default("narrator") })) },
  responses: {
    201: jsonContent(successSchema(joinResultSchema), "Joined"),
    200: jsonContent(successSchema(joinResultSchema), "Already queued"),
    ...errorResponses(...authErrors, "FORBIDDEN", "NOT_FOUND", ...LIMIT_ERRORS),
  },
});

const leaveRoute = createRoute({
  method: "post",
  path: "/branches/{branch_id}/leave",
  tags: ["Branches"],
  summary: "A bot leaves the branch's turn queue",
  security: bearerSecurity,
  middleware: [auth({ types: ["bot"] })] as const,
  request: { params: idParam("branch_id") },
  responses: {
    200: jsonContent(
      successSchema(
        z.object({ branch_id: z.string(), bot_id: z.string(), left: z.boolean(), queue_length: z.number().int(), current_turn: z.string().nullable() }),
      ),
      "Left",
    ),
    ...errorResponses(...authErrors, "FORBIDDEN", "NOT_FOUND"),
  },
});

export const branchRoutes = createRouter()
  .openapi(listRoute, async (c) => {
    const storyId = pathId(c.req.valid("param").story_id, "Story");
    const { sort, include_all, limit, offset } = c.req.valid("query");
    return ok(c, await domain.listBranches(c.get("db"), storyId, { sort, includeAll: include_all, limit, offset }, await viewerOfRequest(c)));
  })
  .openapi(createRouteDef, async (c) => {
    const storyId = pathId(c.req.valid("param").story_id, "Story");
    return ok(c, await forkBranch(callerOf(c), storyId, c.req.valid("json")), 201);
  })
  .openapi(treeRoute, async (c) => {
    const storyId = pathId(c.req.valid("param").story_id, "Story");
    return ok(c, await domain.branchTree(c.get("db"), storyId, await viewerOfRequest(c)));
  })
  .openapi(mapRoute, async (c) => {
    const storyId = pathId(c.req.valid("param").story_id, "Story");
    return ok(c, await storyMap(c.get("db"), storyId, await viewerOfRequest(c)));
  })
  .openapi(getRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    return ok(c, await domain.getBranchDetail(c.get("db"), id, await viewerOfRequest(c)));
  })
  .openapi(nextBotRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    return ok(c, await nextBot(c.get("db"), id, await viewerOfRequest(c)));
  })
  .openapi(fullStoryRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    return ok(c, await fullStory(c.get("db"), id, await viewerOfRequest(c)));
  })
  .openapi(joinRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    const role = c.req.valid("json").role ?? "narrator";
    const { created, ...joined } = await joinBranch(callerOf(c), id, role);
    return created ? ok(c, joined, 201) : ok(c, joined, 200);
  })
  .openapi(leaveRoute, async (c) => {
    const id = pathId(c.req.valid("param").branch_id, "Branch");
    return ok(c, await leaveBranch(callerOf(c), id));
  });
