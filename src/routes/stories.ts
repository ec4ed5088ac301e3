import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../context";
import * as domain from "../domain/stories";
import { actorOf, auth } from "../middleware/auth";
import { inBackground } from "../middleware/background";
import { LIMIT_ERRORS, idempotencyHeader, limitsAndIdempotency } from "../middleware/limits";
import { ok, successSchema } from "../lib/envelope";
import { plainText } from "../lib/characters";
import { pathId } from "../lib/ids";
import { bearerSecurity, createRouter, errorResponses, jsonBody, jsonContent } from "../lib/openapi";
import { pageQuery, paginationSchema } from "../lib/pagination";
import { idParam, languageSchema, storyListItemSchema, storySchema } from "./schemas";
import { publicReadCache } from "../middleware/read-cache";

export const TEXT_MAX = 100_000;
const segmentText = z.string().min(1).max(TEXT_MAX);
const initialSegments = z.array(segmentText).min(3).max(5);

const storyPack = z
  .looseObject({
    meta: z.unknown().optional(),
    evidence_pack: z.unknown().optional(),
    stance_pack: z.unknown().optional(),
    cast: z.unknown().optional(),
    plot_outline: z.unknown().optional(),
    constraints: z.unknown().optional(),
    sources: z.unknown().optional(),
    starter: segmentText.optional(),
    initial_segments: initialSegments.optional(),
  })
  .openapi({ description: "Optional pack; `starter` and `initial_segments` inside it are used when the top-level fields are absent" });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A new story (the web reader's story form is parsed with it too). */
export const createStoryBody = z
  .object({
    title: plainText(z.string().trim().min(1).max(100)),
    background: plainText(z.string().min(10).max(5000)),
    starter: segmentText.optional(),
    initial_segments: initialSegments.optional(),
    style_rules: plainText(z.string().max(5000)).nullish(),
    language: languageSchema.default("zh"),
    min_length: z.number().int().min(1).max(100_000).default(150),
    max_length: z.number().int().min(1).max(100_000).default(500),
    story_pack: storyPack.nullish(),
  })
  // Runs even when other fields failed, so one 400 names every missing field.
  .superRefine(
    (body, ctx) => {
      const pack: Record<string, unknown> = isObject(body.story_pack) ? body.story_pack : {};
      for (const field of ["starter", "initial_segments"] as const) {
        if (body[field] === undefined && pack[field] === undefined) {
          ctx.addIssue({ code: "custom", path: [field], message: "is required (top level or in story_pack)" });
        }
      }
    },
    { when: (payload) => isObject(payload.value) },
  )
  .refine((b) => b.min_length <= b.max_length, { path: ["min_length"], message: "must not exceed max_length" });

const createRouteDef = createRoute({
  method: "post",
  path: "/stories",
  tags: ["Stories"],
  summary: "Create a story with its starter and 3 to 5 initial segments on the main line",
  security: bearerSecurity,
  middleware: [auth(), limitsAndIdempotency("story")] as const,
  request: { headers: idempotencyHeader, body: jsonBody(createStoryBody) },
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
  summary: "List stories, newest first",
  request: {
    query: pageQuery(20).extend({
      status: z
        .enum(["active", "archived"])
        .default("active")
        .openapi({ param: { name: "status", in: "query" } }),
    }),
  },
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
  summary: "Archive or restore a story, or edit its text (owner or admin)",
  security: bearerSecurity,
  middleware: [auth()] as const,
  request: {
    params: idParam("story_id"),
    body: jsonBody(
      z
        .object({
          status: z.enum(["active", "archived"]).optional(),
          title: plainText(z.string().trim().min(1).max(100)).optional(),
          background: plainText(z.string().min(10).max(5000)).optional(),
          style_rules: plainText(z.string().max(5000)).nullish(),
        })
        .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "name at least one field to change" }),
    ),
  },
  responses: {
    200: jsonContent(successSchema(storySchema), "The updated story"),
    ...errorResponses("UNAUTHORIZED", "AUTH_INVALID_TOKEN", "AUTH_EXPIRED_TOKEN", "PERMISSION_DENIED", "NOT_FOUND"),
  },
});

/** Creates the story: its starter and initial segments from the top level, else from the pack (validated present). */
export function createStory(c: Context<AppEnv>, body: z.infer<typeof createStoryBody>) {
  const pack = body.story_pack;
  const input = { ...body, starter: (body.starter ?? pack?.starter)!, initial_segments: (body.initial_segments ?? pack?.initial_segments)! };
  return domain.createStory(c.get("db"), actorOf(c), input, c.get("idempotency"));
}

export const storyRoutes = createRouter()
  .openapi(createRouteDef, async (c) => ok(c, await createStory(c, c.req.valid("json")), 201))
  .openapi(listRoute, async (c) => {
    const { status, limit, offset } = c.req.valid("query");
    return ok(c, await domain.listStories(c.get("db"), status, limit, offset));
  })
  .openapi(getRoute, async (c) => {
    const id = pathId(c.req.valid("param").story_id, "Story");
    return ok(c, await domain.getStory(c.get("db"), id));
  })
  .openapi(patchRoute, async (c) => {
    const id = pathId(c.req.valid("param").story_id, "Story");
    const patch = c.req.valid("json");
    const story = await domain.updateStory(c.get("db"), actorOf(c), id, patch);
    if (patch.status === "archived") {
      const tell = domain.storyBranchIds(c.get("db"), id).then((ids) => Promise.all(ids.map((branchId) => c.get("rooms").archived(branchId))));
      await inBackground(c, tell);
    }
    return ok(c, story);
  });
