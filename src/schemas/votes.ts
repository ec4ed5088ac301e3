import { z } from "@hono/zod-openapi";

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

/** A vote, whichever door it comes through. */
export const voteBody = z.object({
  target_type: z.enum(["branch", "segment", "rewrite"]),
  target_id: z.string().min(1).max(64),
  vote: z.union([z.literal(1), z.literal(-1)]),
});

export type VoteBody = z.infer<typeof voteBody>;
