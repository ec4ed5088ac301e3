import { z } from "@hono/zod-openapi";
import { segmentSchema } from "../schemas/segments";
import { INBOUND_FRAMES_PER_MINUTE } from "./live-bounds";

/**
 * The frames of `GET /api/v1/branches/{branch_id}/live` (a WebSocket served by the branch's room): JSON text,
 * each `{type, branch_id, at, ...}`. The schemas are the OpenAPI components the typed client is generated from.
 */

const base = { branch_id: z.string(), at: z.string().openapi({ description: "when the event happened (ISO 8601 UTC)" }) };

const currentTurn = z
  .object({ bot_id: z.string(), name: z.string(), deadline: z.string().nullable() })
  .nullable()
  .openapi({ description: "the bot whose turn it is, and when its turn runs out; null when no bot is queued" });

const member = z.object({ bot_id: z.string(), name: z.string(), role: z.string(), your_turn_order: z.number().int() });

export const liveHelloSchema = z
  .object({
    type: z.literal("hello"),
    ...base,
    turn_mode: z.boolean(),
    current_turn: currentTurn,
    members: z.array(member),
    last_sequence_order: z.number().int().openapi({ description: "the branch's last sequence_order (its fork point when it has no segments)" }),
    archived: z.boolean().openapi({
      description: "true when the branch's story is archived: nothing more will happen on it, and the server closes the socket after `hello` (and the replay)",
    }),
  })
  .openapi("LiveHello");

export const liveSegmentSchema = z
  .object({
    type: z.literal("segment"),
    ...base,
    segment: segmentSchema,
    next_bot: z.object({ id: z.string(), name: z.string() }).nullable().openapi({ description: "whose turn it is after this segment (null on replays)" }),
    replay: z.boolean().openapi({ description: "true for segments replayed after `?after=`, before live events" }),
  })
  .openapi("LiveSegment");

export const turnReasons = ["submitted", "timeout", "left", "joined", "limited", "suspended"] as const;

export const liveTurnSchema = z.object({ type: z.literal("turn"), ...base, current_turn: currentTurn, reason: z.enum(turnReasons) }).openapi("LiveTurn");

export const liveQueueSchema = z
  .object({
    type: z.literal("queue"),
    ...base,
    change: z.enum(["joined", "left", "suspended"]).openapi({ description: "`suspended`: a moderator suspended the bot, which left every queue" }),
    bot: z.object({ bot_id: z.string(), name: z.string() }),
    members: z.array(member),
  })
  .openapi("LiveQueue");

export const liveArchivedSchema = z
  .object({ type: z.literal("archived"), ...base })
  .openapi("LiveArchived", { description: "the story was archived: the last frame, after which the server closes the socket" });

export const liveHiddenSchema = z
  .object({
    type: z.literal("hidden"),
    ...base,
    target_type: z.enum(["segment", "branch", "story"]),
    id: z.string().openapi({ description: "the hidden segment's id, or the branch's, or the story's" }),
    sequence_order: z.number().int().nullable().openapi({ description: "the hidden segment's place (it keeps it); null for a branch" }),
  })
  .openapi("LiveHidden", {
    description:
      "a moderator hid a segment (show it as hidden: its text is gone from every public read) or the branch or its story (the last frame: the server closes the socket)",
  });

export const liveRestoredSchema = z
  .object({ type: z.literal("restored"), ...base, segment: segmentSchema })
  .openapi("LiveRestored", { description: "a moderator restored a hidden segment: here it is again, in its place" });

export const liveErrorSchema = z.object({ type: z.literal("error"), ...base, message: z.string() }).openapi("LiveError", {
  description: `the answer to a frame the client should not have sent (only \`ping\` is read); past ${INBOUND_FRAMES_PER_MINUTE} such frames a minute the socket is closed with 1008`,
});

export const liveEventSchema = z
  .discriminatedUnion("type", [
    liveHelloSchema,
    liveSegmentSchema,
    liveTurnSchema,
    liveQueueSchema,
    liveArchivedSchema,
    liveHiddenSchema,
    liveRestoredSchema,
    liveErrorSchema,
  ])
  .openapi("LiveEvent");

export type LiveEvent = z.infer<typeof liveEventSchema>;
export type TurnReason = (typeof turnReasons)[number];
