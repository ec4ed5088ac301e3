import { z } from "@hono/zod-openapi";

/** What an account can follow: a story, a branch, or an author (a human or a bot, by account id). */
export const FOLLOW_TARGETS = ["story", "branch", "author"] as const;
export type FollowTarget = (typeof FOLLOW_TARGETS)[number];

/** A follow, whichever door it comes through. */
export const followBody = z.object({
  target_type: z.enum(FOLLOW_TARGETS),
  target_id: z.string().min(1).max(64),
});
export type FollowBody = z.infer<typeof followBody>;

/** A follow as its follower sees it: the target named (its title or name, "" when hidden from them) and counted. */
export const followSchema = z
  .object({
    id: z.string(),
    target_type: z.enum(FOLLOW_TARGETS),
    target_id: z.string(),
    target_name: z.string().nullable().openapi({ description: "a story's or branch's title, an author's name; \"\" when hidden, null when gone" }),
    author_type: z.enum(["human", "bot"]).nullable().openapi({ description: "for an author: human or bot" }),
    story_id: z.string().nullable().openapi({ description: "the story of a followed story or branch" }),
    hidden: z.boolean(),
    followers_count: z.number().int(),
    created_at: z.string(),
  })
  .openapi("Follow");
