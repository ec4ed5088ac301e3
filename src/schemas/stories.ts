import { z } from "@hono/zod-openapi";
import { AUTHORSHIPS, STORY_SORTS, languageSchema, segmentText } from "./fields";
import { pinSchema } from "./pins";
import { plainText } from "../lib/characters";
import { CONTENT_WARNINGS, RATINGS } from "../config";
import { HIDDEN_TAGS_PER_READER, TAGS_PER_STORY, tagField, tagKey, tagsField } from "../lib/tag-rule";
import { pageQuery, queryList } from "../lib/pagination";

export const ratingSchema = z.enum(RATINGS).openapi({ description: "the story's content rating: general (default), teen or mature" });

/** Content warnings from the fixed list, deduplicated, in the list's order. */
export const warningsField = z
  .array(z.enum(CONTENT_WARNINGS))
  .max(CONTENT_WARNINGS.length)
  .transform((given) => CONTENT_WARNINGS.filter((w) => given.includes(w)))
  .openapi({ description: `content warnings, from the fixed list (${CONTENT_WARNINGS.join(", ")})` });

/** A story's tags as given: 1–50 characters each, at most 10 once deduplicated by their key (NFKC, case-folded, trimmed). */
export const storyTagsField = tagsField(TAGS_PER_STORY).openapi({
  description: "free-text tags, 1–50 characters each, at most 10: the same tag in another case, width or spacing is one tag (the first spelling kept)",
});

/** What a story is, as every record and list item shows it: computed `authorship` and `bot_share`, never declared. */
const labels = {
  tags: z.array(z.string()).openapi({ description: "its tags' spellings, in the owner's order" }),
  rating: z.enum(RATINGS),
  warnings: z.array(z.enum(CONTENT_WARNINGS)),
  authorship: z.enum(AUTHORSHIPS).openapi({
    description: "who wrote it, computed from its segments: human (no bot wrote one), bot (bots wrote every one) or mixed",
  }),
  bot_share: z.number().openapi({ description: "the share of its segments written by bots, 0 to 1 (3 decimals)" }),
};

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
    ...labels,
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
    ...labels,
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
    tags: storyTagsField.default([]),
    rating: ratingSchema.default("general"),
    warnings: warningsField.default([]),
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

/** A change to a story (owner or admin), whichever door it comes through: at least one field. */
export const storyPatchBody = z
  .object({
    status: z.enum(["active", "archived"]).optional(),
    title: plainText(z.string().trim().min(1).max(100)).optional(),
    background: plainText(z.string().min(10).max(5000)).optional(),
    style_rules: plainText(z.string().max(5000)).nullish(),
    tags: storyTagsField.optional().openapi({ description: "the story's tags, replacing all of them ([] takes them off)" }),
    rating: ratingSchema.optional(),
    warnings: warningsField.optional().openapi({ description: "the story's content warnings, replacing all of them" }),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: "name at least one field to change" });

const listParam = (name: string, description: string) => ({ param: { name, in: "query" as const, style: "form" as const, explode: true }, description });

/** `GET /stories`' query: a page, a status, a sort, and filters that may each repeat. */
export const storyListQuery = pageQuery(20).extend({
  status: z
    .enum(["active", "archived"])
    .default("active")
    .openapi({ param: { name: "status", in: "query" } }),
  sort: z
    .enum(STORY_SORTS)
    .default("new")
    .openapi({
      param: { name: "sort", in: "query" },
      description: "new (newest first), active (most segments written in the last 7 days first) or top (highest vote score first)",
    }),
  tag: queryList(tagField, TAGS_PER_STORY).openapi(listParam("tag", "stories carrying every one of these tags (repeat it: ?tag=a&tag=b)")),
  exclude_tag: queryList(tagField, HIDDEN_TAGS_PER_READER).openapi(listParam("exclude_tag", "stories carrying none of these tags")),
  rating: queryList(z.enum(RATINGS), RATINGS.length).openapi(listParam("rating", "stories of any of these ratings")),
  authorship: queryList(z.enum(AUTHORSHIPS), AUTHORSHIPS.length).openapi(listParam("authorship", "stories of any of these authorships")),
});

/** The list a query (or `list_stories`' arguments, named alike) asks for: its tags as keys (src/lib/tag-rule.ts). */
export const storyListOf = (q: Omit<z.output<typeof storyListQuery>, "limit" | "offset"> & { limit: number; offset: number }) => ({
  status: q.status,
  sort: q.sort,
  limit: q.limit,
  offset: q.offset,
  tags: [...new Set(q.tag.map(tagKey))],
  excludeTags: [...new Set(q.exclude_tag.map(tagKey))],
  ratings: q.rating,
  authorships: q.authorship,
});
