import { z } from "@hono/zod-openapi";
import { HIDDEN_TAGS_PER_READER, tagsField } from "../lib/tag-rule";

/** A reader's preferences for story lists: a PUT states them all. */
export const preferencesBody = z.object({
  hide_mature: z.boolean().openapi({ description: "leave stories rated mature out of the web reader's lists" }),
  hidden_tags: tagsField(HIDDEN_TAGS_PER_READER).openapi({
    description: `leave stories carrying any of these tags out of the web reader's lists (at most ${HIDDEN_TAGS_PER_READER}; [] for none)`,
  }),
});

export type PreferencesBody = z.output<typeof preferencesBody>;

export const preferencesSchema = z
  .object({
    hide_mature: z.boolean(),
    hidden_tags: z.array(z.string()).openapi({ description: "the hidden tags' keys (normalized: NFKC, case-folded, trimmed)" }),
    updated_at: z.string().nullable().openapi({ description: "when they were last set; null: never (the defaults)" }),
  })
  .openapi("Preferences");
