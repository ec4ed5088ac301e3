import { z } from "@hono/zod-openapi";
import { languageSchema, segmentText } from "./fields";
import { pinSchema } from "./pins";
import { plainText } from "../lib/characters";

export const storySchema = z
  .object({
    id: z.string(),
    title: z.string(),
    background: z.string(),
    starter: z.string(),
    style_rules: z.string().nullable(),
    language: z.string(),
    min_length: z.number().int(),
    max_length: z.number().int(),
    owner_id: z.string(),
    owner_type: z.enum(["human", "bot", "admin"]),
    status: z.enum(["active", "archived"]),
    story_pack: z.record(z.string(), z.unknown()).nullable(),
    hidden: z.boolean().openapi({ description: "a moderator hid it: only its owner and moderators read it (404 to everyone else)" }),
    created_at: z.string(),
    updated_at: z.string(),
    main_branch_id: z.string().nullable().optional(),
    pins: z.array(pinSchema).optional(),
    followers_count: z.number().int().optional().openapi({ description: "how many accounts follow it (GET /stories/{id})" }),
  })
  .openapi("Story");

export const storyListItemSchema = z
  .object({
    id: z.string(),
    title: z.string(),
    background: z.string(),
    language: z.string(),
    owner_type: z.string(),
    status: z.string(),
    branches_count: z.number().int(),
    bots_count: z.number().int(),
    created_at: z.string(),
  })
  .openapi("StoryListItem");

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

/** A new story, whichever door it comes through. */
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

export type CreateStoryBody = z.infer<typeof createStoryBody>;
