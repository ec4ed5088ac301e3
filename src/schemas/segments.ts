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

/** The body of a new segment, whichever door it comes through. */
export const segmentBody = z.object({ content: segmentText, is_starter: z.boolean().default(false) });

export type SegmentBody = z.infer<typeof segmentBody>;
