import { z } from "@hono/zod-openapi";

/** A pin as every door shows it (and inside a story). */
export const pinSchema = z
  .object({
    id: z.string(),
    story_id: z.string(),
    title: z.string(),
    content: z.string(),
    type: z.enum(["announcement", "rule", "context"]),
    is_active: z.boolean(),
    created_by: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi("Pin");
