import { z } from "@hono/zod-openapi";

/** A comment or a reply, whichever door it comes through. */
export const commentBody = z.object({ content: z.string().min(1).max(1000), parent_comment_id: z.string().max(64).optional() });

export type CommentBody = z.infer<typeof commentBody>;
