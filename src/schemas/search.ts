import { z } from "@hono/zod-openapi";
import { CONTENT_WARNINGS, RATINGS } from "../config";
import { paginationSchema } from "../lib/pagination";
import { QUERY_MAX_LENGTH, hasSearchWords } from "../lib/search-text";
import { AUTHORSHIPS } from "./fields";
import { storyListOf, storyListQuery } from "./stories";

/** What a search looks through: stories (title, background, tags), segments (their text), or both. */
export const SEARCH_TYPES = ["all", "story", "segment"] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** The words searched for, whichever door they come through: trimmed, 1–200 characters, at least one word. */
export const searchWords = z
  .string()
  .trim()
  .min(1, { error: "must not be empty", abort: true })
  .max(QUERY_MAX_LENGTH, { abort: true })
  .refine(hasSearchWords, { error: "has no word to search for (only punctuation)" });

export const searchTypeField = z.enum(SEARCH_TYPES).default("all");

const TYPE_WORDS = "story (stories by title, background and tags), segment (segments by their text) or all (default: stories first, then segments)";

/** `GET /search`'s query: the words, what to search, a page, and `GET /stories`' filters, each applying to the story. */
export const searchQuery = storyListQuery.omit({ sort: true }).extend({
  q: searchWords.openapi({
    param: { name: "q", in: "query" },
    description:
      "the words to find, all of them (1–200 characters): English and other spaced languages match whole words (case and accents " +
      "ignored; `bell*` asks for words starting with bell), Chinese, Japanese and Korean match anywhere in the text (one character too). " +
      "Every character is searched for as text: quotes, `-`, `:`, `AND`, `NEAR(…)` are words, never query syntax",
    example: "lighthouse",
  }),
  type: searchTypeField.openapi({ param: { name: "type", in: "query" }, description: TYPE_WORDS }),
});

/** A search as the domain takes it: the words, the type, a page, and the stories' filter (their tags as keys). */
export const searchOf = (q: Omit<z.output<typeof searchQuery>, "limit" | "offset"> & { limit: number; offset: number }) => {
  const { sort: _, ...list } = storyListOf({ ...q, sort: "new" });
  return { ...list, q: q.q, type: q.type };
};

const hitStory = z.object({
  id: z.string(),
  title: z.string(),
  language: z.string(),
  tags: z.array(z.string()),
  rating: z.enum(RATINGS),
  warnings: z.array(z.enum(CONTENT_WARNINGS)),
  authorship: z.enum(AUTHORSHIPS),
  bot_share: z.number(),
});

export const searchHitSchema = z
  .object({
    type: z.enum(["story", "segment"]),
    story: hitStory.openapi({ description: "the story found, or the story of the segment found" }),
    branch: z
      .object({ id: z.string(), title: z.string(), is_main: z.boolean() })
      .nullable()
      .openapi({ description: "the segment's branch (null for a story)" }),
    segment: z
      .object({
        id: z.string(),
        sequence_order: z.number().int(),
        author_id: z.string(),
        author_type: z.enum(["human", "bot"]),
        author_name: z.string(),
        created_at: z.string(),
      })
      .nullable()
      .openapi({ description: "the segment found (null for a story)" }),
    snippet: z.string().openapi({
      description: "the text around the match, plain text (… where it was cut): a segment's, or the story's title, background or tags, whichever matched best",
    }),
    highlights: z
      .array(z.tuple([z.number().int(), z.number().int()]))
      .openapi({ description: "the matched spans of `snippet`, each [start, end) in characters (Unicode code points)" }),
  })
  .openapi("SearchHit");

export const searchResultSchema = z.object({
  results: z.array(searchHitSchema).openapi({ description: "the hits, best first (with type=all, the stories' before the segments')" }),
  count: z.number().int().openapi({ description: "how many hits in all" }),
  counts: z
    .object({ stories: z.number().int().nullable(), segments: z.number().int().nullable() })
    .openapi({ description: "hits of each type (null for a type not searched)" }),
  pagination: paginationSchema,
});
