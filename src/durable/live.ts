import { and, asc, eq, gt } from "drizzle-orm";
import type { Db } from "../db/client";
import { segments } from "../db/schema";
import type { LiveEvent, TurnReason } from "../domain/live-events";
import { segmentView } from "../domain/segments";
import { type Member, type TurnState, queueView } from "../turns/rules";

/** At most this many live sockets per branch, and per client address on one branch. */
export const MAX_SOCKETS_PER_BRANCH = 500;
export const MAX_SOCKETS_PER_ADDRESS = 8;
/** `?after=` replays at most this many segments. */
export const REPLAY_LIMIT = 100;

const now = () => new Date().toISOString();
type SegmentRecord = ReturnType<typeof segmentView>;

export const liveTurn = (branchId: string, turn: TurnState, reason: TurnReason): LiveEvent => ({
  type: "turn",
  branch_id: branchId,
  at: now(),
  current_turn: queueView(turn).current_turn,
  reason,
});

export const liveSegment = (branchId: string, segment: SegmentRecord, nextBot: { id: string; name: string } | null, { replay = false } = {}): LiveEvent => ({
  type: "segment",
  branch_id: branchId,
  at: now(),
  segment,
  next_bot: nextBot,
  replay,
});

export const liveQueue = (branchId: string, change: "joined" | "left", bot: Member, turn: TurnState): LiveEvent => ({
  type: "queue",
  branch_id: branchId,
  at: now(),
  change,
  bot: { bot_id: bot.botId, name: bot.name },
  members: queueView(turn).members,
});

interface Attachment {
  branchId: string;
}

const refusal = (status: number, code: string, message: string) =>
  new Response(JSON.stringify({ status: "error", error: { code, message } }), { status, headers: { "content-type": "application/json" } });

/**
 * A branch's live stream with the WebSocket Hibernation API: the room accepts sockets through its state, so an
 * idle stream costs no object time; `ping` is answered by the runtime itself (auto-response) without waking it.
 * Sockets are tagged with their client address to bound them per address.
 */
export class LiveSockets {
  constructor(private readonly ctx: DurableObjectState) {
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  async accept(request: Request, branchId: string, at: { turn: TurnState; lastSequence: number; db: Db }): Promise<Response> {
    const address = request.headers.get("cf-connecting-ip") ?? "unknown";
    if (this.ctx.getWebSockets().length >= MAX_SOCKETS_PER_BRANCH) {
      return refusal(429, "RATE_LIMIT_EXCEEDED", `This branch already has ${MAX_SOCKETS_PER_BRANCH} live connections`);
    }
    if (this.ctx.getWebSockets(address).length >= MAX_SOCKETS_PER_ADDRESS) {
      return refusal(429, "RATE_LIMIT_EXCEEDED", `At most ${MAX_SOCKETS_PER_ADDRESS} live connections per address on one branch`);
    }
    const afterParam = new URL(request.url).searchParams.get("after");
    const after = afterParam === null || afterParam === "" ? NaN : Number(afterParam);
    const missed = Number.isInteger(after) && after >= 0 && after < at.lastSequence ? await this.since(at.db, branchId, after) : [];
    const [client, server] = Object.values(new WebSocketPair());
    this.ctx.acceptWebSocket(server, [address]);
    server.serializeAttachment({ branchId } satisfies Attachment);
    const view = queueView(at.turn);
    send(server, { type: "hello", branch_id: branchId, at: now(), ...view, last_sequence_order: at.lastSequence });
    for (const row of missed) send(server, liveSegment(branchId, segmentView(row), null, { replay: true }));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends one event to every socket; returns how many it reached. A socket that fails is left to close. */
  broadcast(event: LiveEvent): number {
    const frame = JSON.stringify(event);
    let sent = 0;
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.send(frame);
        sent++;
      } catch {
        // closing or closed: its close handler tidies up
      }
    }
    return sent;
  }

  refuse(ws: WebSocket, message: string | ArrayBuffer) {
    const { branchId } = (ws.deserializeAttachment() ?? { branchId: "" }) as Attachment;
    const what = typeof message === "string" ? `"${message.slice(0, 40)}"` : "a binary frame";
    send(ws, { type: "error", branch_id: branchId, at: now(), message: `Only "ping" is read on this stream; ignored ${what}` });
  }

  closed(ws: WebSocket, code: number, reason: string) {
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  private since(db: Db, branchId: string, after: number) {
    return db
      .select()
      .from(segments)
      .where(and(eq(segments.branchId, branchId), gt(segments.sequenceOrder, after)))
      .orderBy(asc(segments.sequenceOrder))
      .limit(REPLAY_LIMIT);
  }
}

function send(ws: WebSocket, event: LiveEvent) {
  try {
    ws.send(JSON.stringify(event));
  } catch {
    // the client went away
  }
}
