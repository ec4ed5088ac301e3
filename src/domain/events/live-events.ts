import { z } from "@hono/zod-openapi";
import { currentTurnSchema, queueMemberSchema, resumesAtSchema } from "../../schemas/branches";
import { segmentSchema } from "../../schemas/segments";
import { INBOUND_FRAMES_PER_MINUTE } from "./live-bounds";

/**
 * The frames of `GET /api/v1/branches/{branch_id}/live` (a WebSocket served by the branch's room): JSON text,
 * each `{type, branch_id, at, ...}`. The schemas are the OpenAPI components the typed client is generated from.
 */

const base = { branch_id: z.string(), at: z.string().openapi({ description: "when the event happened (ISO 8601 UTC)" }) };

export const liveHelloSchema = z
  .object({
    type: z.literal("hello"),
    ...base,
    turn_mode: z.boolean(),
    current_turn: currentTurnSchema,
    resumes_at: resumesAtSchema,
    members: z.array(queueMemberSchema),
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

/** `limited`: a limit refused the bot whose turn it was (it sits out); `resumed`: the first bot sitting out came back. */
export const turnReasons = ["submitted", "timeout", "left", "joined", "limited", "suspended", "resumed"] as const;

export const liveTurnSchema = z
  .object({ type: z.literal("turn"), ...base, current_turn: currentTurnSchema, resumes_at: resumesAtSchema, reason: z.enum(turnReasons) })
  .openapi("LiveTurn", {
    description:
      "a turn began (or, with `current_turn` null and `resumes_at`, nobody holds it until then); `reason`: `limited` when a limit refused the holder, `resumed` when the first bot sitting out came back",
  });

export const queueChanges = ["joined", "left", "suspended", "sits_out"] as const;

export const liveQueueSchema = z
  .object({
    type: z.literal("queue"),
    ...base,
    change: z.enum(queueChanges).openapi({
      description:
        "`suspended`: a moderator suspended the bot, which left every queue; `sits_out`: a limit refused the bot at its turn (its `sits_out_until` in `members`)",
    }),
    bot: z.object({ bot_id: z.string(), name: z.string() }),
    members: z.array(queueMemberSchema),
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

/** The `hidden` frame of a hide: a segment's (with its place), or a branch's or story's (the stream's last). */
export const hiddenFrame = (
  branchId: string,
  target: { type: "segment" | "branch" | "story"; id: string },
  at: string,
  sequenceOrder: number | null = null,
): LiveEvent => ({
  type: "hidden",
  branch_id: branchId,
  at,
  target_type: target.type,
  id: target.id,
  sequence_order: sequenceOrder,
});
export type TurnReason = (typeof turnReasons)[number];
export type QueueChange = (typeof queueChanges)[number];
