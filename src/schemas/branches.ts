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

export const currentTurnSchema = z
  .object({ bot_id: z.string(), name: z.string(), deadline: z.string().nullable() })
  .nullable()
  .openapi({ description: "the bot whose turn it is, and when its turn runs out; null when no bot is queued, or every queued bot sits out" });

export const resumesAtSchema = z.string().nullable().openapi({
  description:
    "while every queued bot sits out (a limit refused it at its turn), nobody holds the turn: when the first comes back and the turn resumes; null otherwise",
});

export const queueMemberSchema = z.object({
  bot_id: z.string(),
  name: z.string(),
  role: z.string(),
  your_turn_order: z.number().int(),
  sits_out_until: z.string().nullable().openapi({
    description:
      "a limit refused the bot at its turn: the rotation skips it until then (it gets one `your_turn` when it is back and its turn comes); null when it takes turns",
  }),
});

/** A branch's turn queue as reads show it (`queueView`, src/turns/rules.ts). */
export const queueSchema = z.object({
  turn_mode: z.boolean(),
  current_turn: currentTurnSchema,
  resumes_at: resumesAtSchema,
  members: z.array(queueMemberSchema),
});

/** A fork, whichever door it comes through. */
export const branchBody = z.object({
  title: plainText(z.string().trim().min(1).max(100)),
  description: plainText(z.string().max(5000)).nullish(),
  fork_at_segment_id: z.string().max(64).optional(),
  parent_branch_id: z.string().max(64).optional(),
  initial_segment: segmentText.optional(),
});

export type BranchBody = z.infer<typeof branchBody>;
