import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { app } from "../../src/app";
import type { Env } from "../../src/env";
import { LiveConnectError, type WebSocketLike } from "../src";

/** The client's `fetch`: the Worker's own fetch handler, from a fresh client address (keeps the read limit away). */
export const workerFetch = (req: Request) => {
  const r = new Request(req);
  r.headers.set("CF-Connecting-IP", `198.51.100.${Math.floor(Math.random() * 250)}`);
  return exports.default.fetch(r);
};

/** The same, with some bindings changed for each request (the app itself, with the rest of the real env). */
export const workerFetchWith = (overrides: Partial<Env>) => async (req: Request) => {
  const ctx = createExecutionContext();
  const res = await app.request(req, undefined, { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
};

/**
 * The client's WebSocket factory inside workerd: the upgrade goes through the Worker's fetch, the socket is
 * `response.webSocket`, accepted. Every socket opened is kept (to drop one from the client side), and `hold()`
 * makes the next connections wait until `release()`.
 */
export function workerSockets(address = `203.0.113.${Math.floor(Math.random() * 250)}`) {
  const sockets: WebSocket[] = [];
  const urls: string[] = [];
  let gate: Promise<void> | null = null;
  let open: (() => void) | null = null;
  const factory = async (url: string): Promise<WebSocketLike> => {
    if (gate) await gate;
    urls.push(url);
    const res = await exports.default.fetch(url.replace(/^ws/, "http"), { headers: { Upgrade: "websocket", "CF-Connecting-IP": address } });
    if (res.status !== 101 || !res.webSocket) throw new LiveConnectError(`no stream: ${res.status} ${await res.text()}`, res.status);
    const ws = res.webSocket;
    ws.accept();
    sockets.push(ws);
    return ws as unknown as WebSocketLike;
  };
  return {
    factory,
    sockets,
    urls,
    hold() {
      gate = new Promise((r) => (open = r));
    },
    release() {
      gate = null;
      open?.();
    },
  };
}

/** Collects what an async iterable yields, in the background. */
export function collect<T>(iterable: AsyncIterable<T>) {
  const items: T[] = [];
  let error: unknown = null;
  let finished = false;
  const done = (async () => {
    try {
      for await (const item of iterable) items.push(item);
    } catch (e) {
      error = e;
    } finally {
      finished = true;
    }
  })();
  return {
    items,
    done,
    get error() {
      return error;
    },
    get finished() {
      return finished;
    },
    async until(check: (items: T[]) => boolean, ms = 5000) {
      for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 10))) if (check(items)) return items;
      throw new Error(`timed out; got ${JSON.stringify(items.map((i: any) => i.type ?? i))} ${error ?? ""}`);
    },
  };
}
