import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { INBOUND_FRAMES_PER_MINUTE, INBOUND_WINDOW_MS, LIVE_SOCKETS, REPLAY_LIMIT } from "../domain/events/live-bounds";
import type { LiveEvent, QueueChange, TurnReason } from "../domain/events/live-events";
import type { SocketRequest } from "../domain/events/live-socket";
import { asSegments, segmentRecords, type segmentView } from "../domain/stories/segments";
import { type Member, type TurnState, queueView } from "../turns/rules";

const now = () => new Date().toISOString();
type SegmentRecord = ReturnType<typeof segmentView>;

export const liveTurn = (branchId: string, turn: TurnState, reason: TurnReason): LiveEvent => {
  const { current_turn, resumes_at } = queueView(turn, Date.now());
  return { type: "turn", branch_id: branchId, at: now(), current_turn, resumes_at, reason };
};

export const liveSegment = (branchId: string, segment: SegmentRecord, nextBot: { id: string; name: string } | null, { replay = false } = {}): LiveEvent => ({
  type: "segment",
  branch_id: branchId,
  at: now(),
  segment,
  next_bot: nextBot,
  replay,
});

export const liveQueue = (branchId: string, change: QueueChange, bot: Member, turn: TurnState): LiveEvent => ({
  type: "queue",
  branch_id: branchId,
  at: now(),
  change,
  bot: { bot_id: bot.botId, name: bot.name },
  members: queueView(turn, Date.now()).members,
});

/** What a socket carries through hibernation: who opened it, and its counters. */
interface Attachment {
  branchId: string;
  requestId: string;
  actor: string;
  log: boolean;
  openedAt: number;
  /** Frames sent when it opened (hello and the replay). */
  sentAtOpen: number;
  /** The room instance that accepted it, and how many events that instance had broadcast then. */
  instance: string;
  broadcastsAtOpen: number;
  /** Frames it sent in the current window, when the window began, and in all. */
  inbound: number;
  inboundSince: number;
  received: number;
  /** The room closed it (and logged it). */
  closed: boolean;
}

const refusal = (status: number, code: string, message: string, retryAfter?: number) =>
  new Response(JSON.stringify({ status: "error", error: { code, message } }), {
    status,
    headers: { "content-type": "application/json", ...(retryAfter ? { "retry-after": String(retryAfter) } : {}) },
  });

/** How long a refused reader is asked to wait before trying again: sockets free up as readers leave. */
const FULL_RETRY_AFTER = 60;

/**
 * A branch's live stream with the WebSocket Hibernation API: the room accepts sockets through its state, so an
 * idle stream costs no object time; `ping` is answered by the runtime itself (auto-response) without waking it.
 * Sockets are tagged with their address, their kind and their account to bound them (LIVE_SOCKETS). An inbound
 * frame costs the room its socket's counter, nothing more; past INBOUND_FRAMES_PER_MINUTE the socket is closed.
 */
export class LiveSockets {
  /** This instance of the room (a new one after hibernation or eviction), and the events it has broadcast. */
  private readonly instance = crypto.randomUUID();
  private broadcasts = 0;

  constructor(private readonly ctx: DurableObjectState) {
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  /** A refusal when a bound is reached, else null; checked inside the room's lock, before anything is loaded. */
  refusal(socket: SocketRequest): Response | null {
    const count = (tag?: string) => this.ctx.getWebSockets(tag).length;
    const full = (message: string) => refusal(429, "RATE_LIMIT_EXCEEDED", message, FULL_RETRY_AFTER);
    const { perBranch, anonymousPerBranch, anonymousPerAddress, perAddress, perAccount } = LIVE_SOCKETS;
    if (count() >= perBranch) return full(`This branch already has ${perBranch} live connections`);
    if (socket.account === null) {
      if (count("anonymous") >= anonymousPerBranch) {
        return full(`This branch's ${anonymousPerBranch} live connections for anonymous readers are taken; connect with a credential or retry later`);
      }
      if (count(`anonymous:${socket.address}`) >= anonymousPerAddress) {
        return full(`At most ${anonymousPerAddress} anonymous live connections per address on one branch`);
      }
    } else if (count(`account:${socket.account}`) >= perAccount) {
      return full(`At most ${perAccount} live connections per account on one branch`);
    }
    if (count(`address:${socket.address}`) >= perAddress) return full(`At most ${perAddress} live connections per address on one branch`);
    return null;
  }

  async accept(socket: SocketRequest, at: { turn: TurnState; lastSequence: number; db: Db }): Promise<Response> {
    const { branchId, after } = socket;
    const missed = after !== null && after < at.lastSequence ? await this.since(at.db, branchId, after) : [];
    const [client, server] = Object.values(new WebSocketPair());
    const tags = socket.account === null ? ["anonymous", `anonymous:${socket.address}`] : [`account:${socket.account}`];
    this.ctx.acceptWebSocket(server, [`address:${socket.address}`, ...tags]);
    const view = queueView(at.turn, Date.now());
    send(server, { type: "hello", branch_id: branchId, at: now(), ...view, last_sequence_order: at.lastSequence, archived: socket.archived });
    for (const segment of missed) send(server, liveSegment(branchId, segment, null, { replay: true }));
    const attachment: Attachment = {
      branchId,
      requestId: socket.requestId,
      actor: socket.actor,
      log: socket.log,
      openedAt: Date.now(),
      sentAtOpen: 1 + missed.length,
      instance: this.instance,
      broadcastsAtOpen: this.broadcasts,
      inbound: 0,
      inboundSince: Date.now(),
      received: 0,
      closed: false,
    };
    if (socket.archived) this.finish(server, attachment, 1000, "archived");
    else server.serializeAttachment(attachment);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends one event to every socket; returns how many it reached. A socket that fails is left to close. */
  broadcast(event: LiveEvent): number {
    this.broadcasts++;
    const sockets = this.ctx.getWebSockets();
    if (sockets.length === 0) return 0; // most writes: nobody is watching, nothing to serialize
    const frame = JSON.stringify(event);
    let sent = 0;
    for (const ws of sockets) {
      try {
        ws.send(frame);
        sent++;
      } catch {
        // closing or closed: its close handler tidies up
      }
    }
    return sent;
  }

  /** The story was archived: every socket gets `archived`, then is closed (nothing follows it). */
  archive(branchId: string): number {
    return this.last({ type: "archived", branch_id: branchId, at: now() }, "archived");
  }

  /** A last event (archived, the branch hidden): every socket gets it, then is closed with `reason`. */
  last(event: LiveEvent, reason: string): number {
    const sent = this.broadcast(event);
    for (const ws of this.ctx.getWebSockets()) {
      const attachment = attachmentOf(ws);
      if (attachment && !attachment.closed) this.finish(ws, attachment, 1000, reason);
    }
    return sent;
  }

  /**
   * A frame from the client (never `ping`: the runtime answers it). It costs a counter: within the allowance it is
   * answered with an `error` frame, past it the socket is closed with 1008 (policy violation).
   */
  received(ws: WebSocket, message: string | ArrayBuffer) {
    const attachment = attachmentOf(ws);
    if (!attachment || attachment.closed) return;
    const at = Date.now();
    if (at - attachment.inboundSince >= INBOUND_WINDOW_MS) {
      attachment.inboundSince = at;
      attachment.inbound = 0;
    }
    attachment.inbound++;
    attachment.received++;
    if (attachment.inbound > INBOUND_FRAMES_PER_MINUTE) {
      return this.finish(ws, attachment, 1008, `at most ${INBOUND_FRAMES_PER_MINUTE} frames a minute; only "ping" is read`);
    }
    ws.serializeAttachment(attachment);
    const what = typeof message === "string" ? `"${message.slice(0, 40)}"` : "a binary frame";
    send(ws, { type: "error", branch_id: attachment.branchId, at: now(), message: `Only "ping" is read on this stream; ignored ${what}` });
  }

  /** The client closed the socket (or it dropped): answer the close, and log it unless the room closed it. */
  closed(ws: WebSocket, code: number, reason: string) {
    const attachment = attachmentOf(ws);
    if (attachment && !attachment.closed) this.log(attachment, code);
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {
      // already closed
    }
  }

  /** The room closes a socket: marked, so the client's answering close is not logged twice. */
  private finish(ws: WebSocket, attachment: Attachment, code: number, reason: string) {
    attachment.closed = true;
    try {
      ws.serializeAttachment(attachment);
      ws.close(code, reason);
    } catch {
      // already closed
    }
    this.log(attachment, code);
  }

  /**
   * One line per socket at its close: duration and frames. Events are counted once per broadcast, not per socket,
   * so a socket opened before the room last hibernated knows only the frames since (`frames_sent_complete: false`).
   */
  private log(attachment: Attachment, code: number) {
    if (!attachment.log) return;
    const complete = attachment.instance === this.instance;
    console.info(
      JSON.stringify({
        event: "live socket closed",
        request_id: attachment.requestId,
        branch_id: attachment.branchId,
        actor: attachment.actor,
        code,
        duration_ms: Date.now() - attachment.openedAt,
        frames_sent: attachment.sentAtOpen + this.broadcasts - (complete ? attachment.broadcastsAtOpen : 0),
        frames_sent_complete: complete,
        frames_received: attachment.received,
      }),
    );
  }

  /** The segments after `after`, as the public reads them (a hidden one keeps its place, without its text). */
  private async since(db: Db, branchId: string, after: number) {
    const rows = await segmentRecords(
      db,
      null,
      sql`WHERE s.branch_id = ${branchId} AND s.sequence_order > ${after} ORDER BY s.sequence_order LIMIT ${REPLAY_LIMIT}`,
    );
    return asSegments(rows);
  }
}

const attachmentOf = (ws: WebSocket) => ws.deserializeAttachment() as Attachment | null;

function send(ws: WebSocket, event: LiveEvent) {
  try {
    ws.send(JSON.stringify(event));
  } catch {
    // the client went away
  }
}
