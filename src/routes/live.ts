import { createRoute, z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../context";
import { getDb } from "../db/client";
import { branches } from "../db/schema";
import { liveEventSchema } from "../domain/live-events";
import { ApiError, notFound } from "../lib/errors";
import { pathId } from "../lib/ids";
import { errorResponses } from "../lib/openapi";
import { idParam } from "./schemas";

/** The live stream's place in the OpenAPI document (the route itself is served by `openLiveStream`). */
export const liveRoute = createRoute({
  method: "get",
  path: "/branches/{branch_id}/live",
  tags: ["Live"],
  summary: "A WebSocket of the branch's events (hello, segment, turn, queue, archived); public",
  description:
    "Send `Upgrade: websocket`. Frames are JSON text (`LiveEvent`). `?after=<sequence_order>` replays the branch's segments after " +
    "that number (at most 100, oldest first, `replay: true`) right after `hello`, so a client that reconnects with the last " +
    "number it saw misses nothing. Send `ping` to get `pong`; any other frame is answered with an `error` frame. At most 500 " +
    "sockets per branch and 8 per client address.",
  security: [],
  request: {
    params: idParam("branch_id"),
    query: z.object({
      after: z.coerce
        .number()
        .int()
        .min(0)
        .optional()
        .openapi({ param: { name: "after", in: "query" } }),
    }),
  },
  responses: {
    101: { description: "Switching protocols: the stream. Every frame is a `LiveEvent`", content: { "application/json": { schema: liveEventSchema } } },
    ...errorResponses("NOT_FOUND", "UPGRADE_REQUIRED", "RATE_LIMIT_EXCEEDED"),
  },
});

/**
 * `GET /api/v1/branches/{branch_id}/live`: handed to the branch's room, which accepts the WebSocket. Served
 * before the API's middleware, which would rewrite the 101 response. An unknown branch is 404 before any room
 * is asked, so none is created for it.
 */
export async function openLiveStream(c: Context<AppEnv>) {
  const id = pathId(c.req.param("branch_id") ?? "", "Branch");
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError("UPGRADE_REQUIRED", "This is a WebSocket: send Upgrade: websocket");
  }
  const [branch] = await getDb(c.env.DB).select({ id: branches.id }).from(branches).where(eq(branches.id, id)).limit(1);
  if (!branch) throw notFound("Branch");
  const url = new URL(c.req.url);
  url.searchParams.set("branch_id", id);
  return c.env.BRANCH_ROOM.get(c.env.BRANCH_ROOM.idFromName(id)).fetch(new Request(url, c.req.raw));
}
