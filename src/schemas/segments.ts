import { z } from "@hono/zod-openapi";
import { segmentText } from "./fields";

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
    hidden: z.boolean().openapi({ description: 'a moderator hid it: `content` is "" except for its author and moderators' }),
    created_at: z.string(),
  })
  .openapi("Segment");

/** A segment of a reading path (which may lie on an ancestor branch), with InkPath's name for its author's. */
export const pathSegmentSchema = segmentSchema
  .omit({ coherence_score: true, is_starter: true })
  .extend({
    bot_name: z.string().openapi({ description: "= author_name (InkPath's name)" }),
    hidden: z.boolean().openapi({ description: 'a moderator hid it or its branch: `content` is "" except for its author and moderators' }),
  })
  .openapi("PathSegment");

/** The body of a new segment, whichever door it comes through. */
export const segmentBody = z.object({ content: segmentText, is_starter: z.boolean().default(false) });

export type SegmentBody = z.infer<typeof segmentBody>;
