import { createRoute, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../context";
import { getDb } from "../db/client";
import { meteredD1 } from "../db/metered";
import { branches, stories } from "../db/schema";
import { INBOUND_FRAMES_PER_MINUTE, LIVE_SOCKETS, REPLAY_LIMIT } from "../domain/events/live-bounds";
import { branchShown } from "../domain/shared/visibility";
import { liveEventSchema } from "../domain/events/live-events";
import { SOCKET_HEADER, type SocketRequest } from "../domain/events/live-socket";
import { addressKey } from "../lib/address";
import { ApiError, type ErrorCode, notFound, validationError } from "../lib/errors";
import { pathId } from "../lib/ids";
import { RequestMeter } from "../lib/meter";
import { errorResponses } from "./openapi";
import { verifiedActor } from "../middleware/auth";
import { checkOrigin } from "../middleware/origin";
import { chargeReads } from "../middleware/read-limit";
import { idParam } from "./schemas";

const { perBranch, anonymousPerBranch, anonymousPerAddress, perAccount } = LIVE_SOCKETS;

/** The live stream's place in the OpenAPI document (the route itself is served by `openLiveStream`). */
export const liveRoute = createRoute({
  method: "get",
  path: "/branches/{branch_id}/live",
  tags: ["Live"],
  summary: "A WebSocket of the branch's events (hello, segment, turn, queue, archived); public",
  description:
    "Send `Upgrade: websocket`. Frames are JSON text (`LiveEvent`). `?after=<sequence_order>` replays the branch's segments after " +
    `that number (at most ${REPLAY_LIMIT}, oldest first, \`replay: true\`) right after \`hello\`, so a client that reconnects with the last ` +
    "number it saw misses nothing.\n\n" +
    "A read like any other: without a credential the upgrade counts one read against the address's anonymous read limit, and " +
    "`?after=` one more (its page of replay); past the limit the answer is 429 with `Retry-After`, before any socket is opened. " +
    "A browser `Origin` other than the site's own is refused (403); requests without one (bots) are fine.\n\n" +
    `Send \`ping\` to get \`pong\` (answered at once, never counted); any other frame is answered with an \`error\` frame, and past ` +
    `${INBOUND_FRAMES_PER_MINUTE} of them a minute the socket is closed with 1008. On an archived branch \`hello\` says \`archived: true\` ` +
    "and the server closes the socket after it (and the replay); open sockets are closed after their `archived` frame.\n\n" +
    `At most ${perBranch} sockets per branch, of which at most ${anonymousPerBranch} anonymous; per branch at most ${anonymousPerAddress} ` +
    `anonymous sockets per client address (an IPv6 address counts by its /64) and ${perAccount} per account (429 beyond them).`,
  security: [],
  request: {
    params: idParam("branch_id"),
    query: z.object({
      after: z.coerce
        .number()
        .int()
        .min(0)
        .optional()
        .openapi({ param: { name: "after", in: "query" }, description: "a sequence_order: a non-negative integer in decimal digits" }),
    }),
  },
  responses: {
    101: { description: "Switching protocols: the stream. Every frame is a `LiveEvent`", content: { "application/json": { schema: liveEventSchema } } },
    ...errorResponses("FORBIDDEN", "NOT_FOUND", "UPGRADE_REQUIRED", "RATE_LIMIT_EXCEEDED"),
  },
});

/** `?after=`: absent, or a non-negative integer in decimal digits (at most 15, so it is exact as a number). */
function afterOf(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^\d{1,15}$/.test(value)) throw validationError([{ field: "after", issue: "must be a non-negative integer (a sequence_order)" }]);
  return Number(value);
}

/**
 * `GET /api/v1/branches/{branch_id}/live`: checked like a read, then handed to the branch's room, which accepts
 * the WebSocket. Served before the API's middleware, which would rewrite the 101 response; it is logged by
 * `liveAccessLog` (which set `config`). In order: the id (404), the upgrade (426), the origin (403), `?after=`
 * (400), the read limit (429), the branch in D1 (404, before any room is asked, so none is created for it), and
 * the room's bounds (429).
 */
export async function openLiveStream(c: Context<AppEnv>) {
  const meter = new RequestMeter();
  c.set("meter", meter);
  // The primary: the story's status decides whether this socket is closed after hello.
  c.set("db", getDb(meteredD1(c.env.DB.withSession("first-primary"), meter)));
  const id = pathId(c.req.param("branch_id") ?? "", "Branch");
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError("UPGRADE_REQUIRED", "This is a WebSocket: send Upgrade: websocket");
  }
  checkOrigin(c, "The live stream");
  const after = afterOf(c.req.query("after"));
  const actor = await verifiedActor(c);
  await chargeReads(c, after === null ? 1 : 2);
  const [branch] = await c
    .get("db")
    .select({ id: branches.id, status: stories.status })
    .from(branches)
    .innerJoin(stories, eq(stories.id, branches.storyId))
    // A hidden branch or story has no public stream (its owner and moderators read it through the API).
    .where(and(eq(branches.id, id), branchShown('"branches"', null)))
    .limit(1);
  if (!branch) throw notFound("Branch");
  const socket: SocketRequest = {
    branchId: id,
    after,
    archived: branch.status === "archived",
    account: actor ? `${actor.type}:${actor.id}` : null,
    actor: actor?.type ?? "anonymous",
    address: addressKey(c.req.header("cf-connecting-ip")),
    requestId: c.get("requestId"),
    log: c.get("config").logRequests,
  };
  const request = new Request(c.req.url, c.req.raw);
  request.headers.set(SOCKET_HEADER, JSON.stringify(socket));
  const res = await c.env.BRANCH_ROOM.get(c.env.BRANCH_ROOM.idFromName(id)).fetch(request);
  if (res.status === 101) {
    // A response of our own (the room's is immutable), the socket passed on as it is.
    return new Response(null, { status: 101, webSocket: res.webSocket, headers: { "X-Request-Id": c.get("requestId") } });
  }
  if (res.status === 404) throw notFound("Branch");
  const refused = (await res.json()) as { error: { code: ErrorCode; message: string } };
  const retryAfter = res.headers.get("retry-after");
  throw new ApiError(refused.error.code, refused.error.message, undefined, retryAfter ? { "Retry-After": retryAfter } : undefined);
}
