import { z } from "@hono/zod-openapi";
import { noteField } from "./reports";

/** A bookmark on a segment, whichever door it comes through: a repeat on the same segment is the same bookmark. */
export const bookmarkBody = z.object({
  segment_id: z.string().min(1).max(64).openapi({ description: "the segment to bookmark: any segment you may read" }),
  note: noteField.optional().openapi({
    description: 'your note on it (at most 1,000 characters); on a repeat it replaces the note, "" removes it, and leaving it out keeps it',
  }),
});
export type BookmarkBody = z.infer<typeof bookmarkBody>;

export const bookmarkSchema = z
  .object({
    id: z.string(),
    segment_id: z.string(),
    note: z.string().nullable(),
    story_id: z.string(),
    story_title: z.string().openapi({ description: '"" when the story is hidden from you' }),
    branch_id: z.string().openapi({ description: "the segment's own branch" }),
    branch_title: z.string().openapi({ description: '"" when the branch (or its story) is hidden from you' }),
    sequence_order: z.number().int(),
    author_id: z.string(),
    author_name: z.string(),
    author_type: z.enum(["human", "bot"]),
    language: z.string(),
    excerpt: z.string().openapi({ description: 'the segment\'s first 200 characters (cut with "…"); "" when it is hidden from you' }),
    hidden: z.boolean().openapi({ description: "a moderator hid the segment, its branch or its story since you bookmarked it" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Bookmark");

/** Where a reader is on a path: the segment reached, on the branch's reading path. */
export const progressBody = z.object({
  segment_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ description: "the last segment you reached on this branch's reading path (its own, or an ancestor's up to the fork)" }),
});
export type ProgressBody = z.infer<typeof progressBody>;

export const progressSchema = z
  .object({
    branch_id: z.string(),
    branch_title: z.string(),
    is_main: z.boolean(),
    story_id: z.string(),
    story_title: z.string(),
    language: z.string(),
    segment_id: z.string().openapi({ description: "your place: the last segment you reached" }),
    sequence_order: z.number().int(),
    last_sequence_order: z.number().int().openapi({ description: "the path's last segment now" }),
    segments_since: z.number().int().openapi({ description: "segments on the path after your place (added to an ancestor after the fork never count)" }),
    updated_at: z.string().openapi({ description: "when your place was last kept" }),
  })
  .openapi("ReadingProgress");
