import type { components } from "./schema";

/** A frame of `GET /branches/{branch_id}/live`, as the OpenAPI document describes it (component LiveEvent). */
export type LiveEvent = components["schemas"]["LiveEvent"];
export type LiveEventType = LiveEvent["type"];
export type LiveEventOf<T extends LiveEventType> = Extract<LiveEvent, { type: T }>;

/**
 * The part of a WebSocket the stream uses: the browser / Workers / Node 22 `WebSocket` and the `ws` package's
 * all fit. A socket may be handed over already open (a Workers socket after `accept()`).
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  // biome-ignore lint/suspicious/noExplicitAny: each WebSocket implementation types its events its own way
  addEventListener(type: "open" | "message" | "close" | "error", listener: (event: any) => void): void;
}

/** Opens a socket to `url` (`ws://` or `wss://`). Throw a `LiveConnectError` with a status to report a refusal. */
export type WebSocketFactory = (url: string) => WebSocketLike | Promise<WebSocketLike>;

/** A refused connection. A 4xx other than 408/429 (an unknown branch is 404) ends the stream instead of retrying. */
export class LiveConnectError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "LiveConnectError";
  }
}

export interface LiveOptions {
  /** Replay the branch's segments with a larger sequence_order first (`?after=`); default: only what happens next. */
  after?: number;
  /** Stops the stream (the iterator ends). */
  signal?: AbortSignal;
  /** Reconnection delays: `initialMs × 2^(failures-1)`, capped at `maxMs`, with ±20 % jitter. Defaults 250 / 10 000. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Give up (the iterator throws) after this many consecutive failed connections. Default 20. */
  maxConsecutiveFailures?: number;
  /** Sends `ping` this often and reconnects when nothing came back since the previous one. Default 25 000; 0 = never. */
  pingIntervalMs?: number;
  /**
   * End the iteration after yielding an `archived` event (nothing follows it). Default true. Either way the stream
   * ends without reconnecting when the server closes the socket after `archived`. A `hello` that says `archived:
   * true` (a branch archived before this connection) ends it once the segments up to its `last_sequence_order`
   * have been yielded (the replay), without waiting for the server's close.
   */
  endOnArchived?: boolean;
  /** Told about every connection change, e.g. for a log line. */
  onConnection?: (info: LiveConnectionInfo) => void;
}

export type LiveConnectionInfo =
  | { state: "open"; url: string; after: number | null }
  | { state: "closed"; reason: string }
  | { state: "retry"; failures: number; delayMs: number };

const OPEN = 1;
type Item = { kind: "event"; event: LiveEvent } | { kind: "closed"; reason: string };

const defaultFactory: WebSocketFactory = (url) => {
  const WS = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  if (!WS) throw new Error("no global WebSocket (Node < 22): pass the `WebSocket` option, e.g. (url) => new (require('ws'))(url)");
  return new WS(url);
};

/**
 * The branch's live events as an async iterator. Reconnects with backoff when the connection drops, resuming with
 * `?after=<last sequence_order seen>`; replayed segments it already yielded are dropped, and a segment that skips
 * ahead (more than 100 missed while away) makes it reconnect to replay the rest, so segments come with no gap and
 * no duplicate. `hello` is yielded on every (re)connection: it carries the current turn.
 */
export class LiveStream implements AsyncIterable<LiveEvent> {
  /** The largest sequence_order yielded (or announced by the first `hello`); the resume point. */
  lastSequence: number | null;
  private closed = false;
  private wake: (() => void) | null = null;
  private socket: WebSocketLike | null = null;

  constructor(
    private readonly httpUrl: string,
    private readonly factory: WebSocketFactory = defaultFactory,
    private readonly options: LiveOptions = {},
  ) {
    this.lastSequence = options.after ?? null;
    options.signal?.addEventListener("abort", () => this.close());
  }

  /** Ends the stream: the current socket is closed and the iterator finishes. */
  close() {
    this.closed = true;
    try {
      this.socket?.close(1000, "client closed");
    } catch {}
    this.wake?.();
  }

  private url() {
    const url = new URL(this.httpUrl);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (this.lastSequence !== null) url.searchParams.set("after", String(this.lastSequence));
    return url.toString();
  }

  private sleep(ms: number) {
    return new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      this.wake = done;
      function done() {
        clearTimeout(t);
        resolve();
      }
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<LiveEvent> {
    const { backoff = {}, maxConsecutiveFailures = 20, pingIntervalMs = 25_000, endOnArchived = true, onConnection } = this.options;
    let failures = 0;
    let gapAt: number | null = null; // the resume point of the last reconnection made to fill a gap
    let archived = false; // an `archived` frame came: the server's close ends the stream
    let archivedAt: number | null = null; // a `hello` said archived: the stream ends at this sequence_order
    while (!this.closed) {
      let delayNext = true;
      const inbox: Item[] = [];
      const push = (item: Item) => {
        inbox.push(item);
        this.wake?.();
      };
      let pinger: ReturnType<typeof setInterval> | undefined;
      try {
        const url = this.url();
        let socket: WebSocketLike;
        try {
          socket = await this.factory(url);
        } catch (e) {
          const status = (e as LiveConnectError).status;
          if (status && status >= 400 && status < 500 && status !== 408 && status !== 429) throw e;
          push({ kind: "closed", reason: (e as Error).message });
          socket = null as unknown as WebSocketLike;
        }
        if (socket) {
          this.socket = socket;
          let heard = true;
          socket.addEventListener("message", (ev: { data: unknown }) => {
            heard = true;
            if (typeof ev.data !== "string" || ev.data === "pong") return;
            try {
              push({ kind: "event", event: JSON.parse(ev.data) as LiveEvent });
            } catch {}
          });
          socket.addEventListener("close", (ev: { code?: number; reason?: string }) =>
            push({ kind: "closed", reason: `closed ${ev.code ?? ""} ${ev.reason ?? ""}`.trim() }),
          );
          socket.addEventListener("error", () => push({ kind: "closed", reason: "socket error" }));
          if (socket.readyState === OPEN) onConnection?.({ state: "open", url, after: this.lastSequence });
          else socket.addEventListener("open", () => onConnection?.({ state: "open", url, after: this.lastSequence }));
          if (pingIntervalMs > 0) {
            pinger = setInterval(() => {
              if (!heard) return push({ kind: "closed", reason: `nothing heard for ${pingIntervalMs} ms` });
              heard = false;
              try {
                if (socket.readyState === OPEN) socket.send("ping");
              } catch {}
            }, pingIntervalMs);
          }
        }

        for (;;) {
          while (!inbox.length && !this.closed) await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = null;
          if (this.closed) return;
          const item = inbox.shift()!;
          if (item.kind === "closed") {
            onConnection?.({ state: "closed", reason: item.reason });
            if (archived || (archivedAt !== null && (this.lastSequence ?? archivedAt) >= archivedAt)) return;
            break;
          }
          const event = item.event;
          if (event.type === "hello") {
            failures = 0;
            if (event.archived) archivedAt = event.last_sequence_order;
            this.lastSequence ??= event.last_sequence_order;
          } else if (event.type === "segment") {
            const seq = event.segment.sequence_order;
            if (this.lastSequence !== null && seq <= this.lastSequence) continue; // already yielded
            if (this.lastSequence !== null && seq > this.lastSequence + 1 && gapAt !== this.lastSequence) {
              gapAt = this.lastSequence; // reconnect once from here to have the missing ones replayed
              delayNext = false;
              onConnection?.({ state: "closed", reason: `gap after ${this.lastSequence} (got ${seq}); replaying` });
              break;
            }
            this.lastSequence = seq;
          }
          if (event.type === "archived") archived = true;
          yield event;
          if (event.type === "archived" && endOnArchived) return;
          if (archivedAt !== null && (this.lastSequence ?? archivedAt) >= archivedAt) return; // nothing more will come
        }
      } finally {
        if (pinger !== undefined) clearInterval(pinger);
        try {
          if (this.socket && this.socket.readyState <= OPEN) this.socket.close(1000, "reconnecting");
        } catch {}
        this.socket = null;
        this.wake = null;
      }
      if (this.closed) return;
      if (!delayNext) continue;
      failures++;
      if (failures > maxConsecutiveFailures) throw new Error(`live stream: ${failures - 1} connections failed in a row`);
      const base = Math.min(backoff.maxMs ?? 10_000, (backoff.initialMs ?? 250) * 2 ** (failures - 1));
      const delayMs = Math.round(base * (0.8 + Math.random() * 0.4));
      onConnection?.({ state: "retry", failures, delayMs });
      await this.sleep(delayMs);
    }
  }
}
