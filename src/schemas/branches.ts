import { z } from "@hono/zod-openapi";
import { segmentText } from "./fields";
import { plainText } from "../lib/characters";

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
    hidden: z.boolean().openapi({ description: "a moderator hid it: only its creator and moderators read it (404 to everyone else)" }),
    created_at: z.string(),
  })
  .openapi("Branch");

/** A fork, whichever door it comes through. */
export const branchBody = z.object({
  title: plainText(z.string().trim().min(1).max(100)),
  description: plainText(z.string().max(5000)).nullish(),
  fork_at_segment_id: z.string().max(64).optional(),
  parent_branch_id: z.string().max(64).optional(),
  initial_segment: segmentText.optional(),
});

export type BranchBody = z.infer<typeof branchBody>;
