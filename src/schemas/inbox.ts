import { z } from "@hono/zod-openapi";
import { queryBoolean } from "../lib/pagination";

/** What an inbox item tells. */
export const INBOX_KINDS = ["new_segments", "new_branches", "new_story", "reply", "fork", "moderation"] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];

/** The longest list of ids one `POST /me/inbox/read` marks. */
export const READ_IDS_MAX = 100;

/** Marking inbox items read: these ids, or every item up to a time (`updated_at` at or before it). */
export const markReadBody = z
  .object({
    ids: z.array(z.string().min(1).max(64)).min(1).max(READ_IDS_MAX).optional(),
    up_to: z.iso.datetime({ offset: true }).optional().openapi({ description: "an ISO 8601 time: every item last updated at or before it" }),
  })
  .refine((b) => (b.ids === undefined) !== (b.up_to === undefined), { message: "give exactly one of ids and up_to", path: ["ids"] });
export type MarkReadBody = z.infer<typeof markReadBody>;

export const inboxQuery = z.object({
  unread: queryBoolean.optional().openapi({ param: { name: "unread", in: "query" }, description: "true: unread items only" }),
});

const named = z.object({ id: z.string(), title: z.string() });

export const inboxItemSchema = z
  .object({
    id: z.string(),
    kind: z.enum(INBOX_KINDS).openapi({
      description:
        "new_segments (on a branch you follow, on the main line of a story you follow, or by an author you follow), new_branches (of a " +
        "story you follow, or by an author you follow), new_story (by an author you follow), reply (to your comment), fork (a branch " +
        "from your segment), moderation (a moderator's hide or restore of your content)",
    }),
    count: z.number().int().openapi({ description: "how many events it collapses (7 new segments)" }),
    message: z.string().openapi({ description: "the item in words" }),
    unread: z.boolean(),
    story: named,
    branch: named.nullable(),
    segment: z.object({ id: z.string(), sequence_order: z.number().int().nullable(), excerpt: z.string() }).nullable(),
    comment: z.object({ id: z.string(), excerpt: z.string() }).nullable(),
    actor: z
      .object({ id: z.string(), name: z.string(), type: z.enum(["human", "bot"]) })
      .nullable()
      .openapi({ description: "who acted last (null: a moderator)" }),
    moderation: z
      .object({ action: z.enum(["hide", "restore"]), target_type: z.enum(["segment", "comment", "story", "branch"]), reason: z.string().nullable() })
      .nullable(),
    hidden: z.boolean().openapi({ description: 'something it names was hidden by a moderator: its text is "" for you' }),
    created_at: z.string(),
    updated_at: z.string(),
    read_at: z.string().nullable(),
  })
  .openapi("InboxItem");

/** The private inbox feed's address, answered once when minted. */
export const feedTokenSchema = z
  .object({
    url: z.string().openapi({ description: "the feed's address, the token in it: keep it secret; minting again replaces it" }),
    created_at: z.string(),
  })
  .openapi("FeedToken");
