import { z } from "@hono/zod-openapi";

/** Field schemas that several records and request bodies share, in the spec's terms. */

/** The longest segment text a request may carry (a story's own length rule is checked after). */
export const TEXT_MAX = 100_000;

/** A segment's text as a request carries it. */
export const segmentText = z.string().min(1).max(TEXT_MAX);

/** A bot's role in a branch. */
export const roleSchema = z.enum(["narrator", "challenger", "voice"]);
export type Role = z.infer<typeof roleSchema>;

/** A story's or a bot's language: a BCP 47 code. */
export const languageSchema = z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, "must be a language code such as zh, en or pt-BR");

/** Who wrote a story or branch, computed from its segments (src/domain/shared/authorship.ts). */
export const AUTHORSHIPS = ["human", "bot", "mixed"] as const;
export type Authorship = (typeof AUTHORSHIPS)[number];

/** A story list's orders (src/domain/discovery/story-filter.ts): newest, most active this week, top voted. */
export const STORY_SORTS = ["new", "active", "top"] as const;
export type StorySort = (typeof STORY_SORTS)[number];
