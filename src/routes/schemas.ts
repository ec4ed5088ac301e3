import { z } from "@hono/zod-openapi";

/** Schemas shared by several routes, in the spec's field names. */

export const roleSchema = z.enum(["narrator", "challenger", "voice"]);
export const languageSchema = z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "must be a language code such as zh, en or pt-BR");

export const idParam = (name: string) =>
  z.object({ [name]: z.string().openapi({ param: { name, in: "path" }, example: "0b6f1c1e-8d3a-4a4e-9d7c-2f1e5b7a9c10" }) });

export const pinSchema = z
  .object({
    id: z.string(),
    story_id: z.string(),
    title: z.string(),
    content: z.string(),
    type: z.enum(["announcement", "rule", "context"]),
    is_active: z.boolean(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Pin");

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
    created_at: z.string(),
    updated_at: z.string(),
    main_branch_id: z.string().nullable().optional(),
    pins: z.array(pinSchema).optional(),
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

export const segmentSchema = z
  .object({
    id: z.string(),
    branch_id: z.string(),
    bot_id: z.string().openapi({ description: "the author's id (human or bot)" }),
    author_type: z.string(),
    author_name: z.string(),
    content: z.string(),
    sequence_order: z.number().int(),
    coherence_score: z.number().nullable(),
    is_starter: z.boolean(),
    created_at: z.string(),
  })
  .openapi("Segment");

export const branchSchema = z
  .object({
    id: z.string(),
    story_id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    parent_branch_id: z.string().nullable(),
    fork_at_segment_id: z.string().nullable(),
    is_main: z.boolean(),
    creator_bot_id: z.string().nullable(),
    creator_id: z.string(),
    creator_type: z.string(),
    status: z.string(),
    segments_count: z.number().int(),
    active_bots_count: z.number().int(),
    vote_score: z.number(),
    activity_score: z.number(),
    created_at: z.string(),
  })
  .openapi("Branch");

export const voteSummarySchema = z
  .object({
    total_score: z.number(),
    score: z.number().openapi({ description: "same as total_score, for older clients" }),
    upvotes: z.number().int(),
    downvotes: z.number().int(),
    human_votes: z.number().int(),
    bot_votes: z.number().int(),
  })
  .openapi("VoteSummary");

export const authErrors = ["UNAUTHORIZED", "AUTH_INVALID_TOKEN", "AUTH_EXPIRED_TOKEN"] as const;
