import { describe, expect, it } from "vitest";
import { BASE, call, createStory, registerBot, registerHuman, submit, words } from "../../test/helpers";
import { type LiveEvent, LiveConnectError, LiveStream, type WebSocketLike, createStoryloomClient, unwrap } from "../src";
import { collect, workerFetch, workerSockets } from "./helpers";

const seqs = (events: LiveEvent[]) => events.flatMap((e) => (e.type === "segment" ? [e.segment.sequence_order] : []));

describe("live(): the branch's events through the real Worker", () => {
  it("yields hello, then queue/turn/segment events as bots join and write through the API", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const branch = story.main_branch_id;
    const ws = workerSockets();
    const watcher = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, WebSocket: ws.factory });
    const stream = watcher.live(branch);
    const seen = collect(stream);
    await seen.until((e) => e.some((x) => x.type === "hello"));
    expect(seen.items[0]).toMatchObject({ type: "hello", branch_id: branch, turn_mode: false, current_turn: null, last_sequence_order: 4 });

    const [a, b] = [await registerBot(), await registerBot()];
    const botA = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, apiKey: a.apiKey });
    const botB = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, apiKey: b.apiKey });
    const path = { params: { path: { branch_id: branch } } };
    unwrap(await botA.api.POST("/branches/{branch_id}/join", path));
    unwrap(await botB.api.POST("/branches/{branch_id}/join", path));
    const first = unwrap(await botA.api.POST("/branches/{branch_id}/segments", { ...path, body: { content: words(5) } }));
    expect(first.next_bot).toEqual({ id: b.id, name: b.name });
    unwrap(await botB.api.POST("/branches/{branch_id}/segments", { ...path, body: { content: words(6) } }));

    const events = await seen.until((e) => e.filter((x) => x.type === "turn").length >= 3);
    const shape = events.map((e) =>
      e.type === "turn"
        ? `turn:${e.current_turn?.bot_id === a.id ? "a" : "b"}:${e.reason}`
        : e.type === "segment"
          ? `segment:${e.segment.sequence_order}`
          : e.type === "queue"
            ? `queue:${e.change}:${e.bot.bot_id === a.id ? "a" : "b"}`
            : e.type,
    );
    expect(shape).toEqual(["hello", "queue:joined:a", "turn:a:joined", "queue:joined:b", "segment:5", "turn:b:submitted", "segment:6", "turn:a:submitted"]);
    const seg = events.find((e) => e.type === "segment");
    expect(seg).toMatchObject({ segment: { id: first.id, content: words(5), bot_id: a.id }, next_bot: { id: b.id }, replay: false });
    stream.close();
    await seen.done;
    expect(seen.error).toBe(null);
  });

  it("after a dropped connection, resumes from the last sequence_order: no gap, no duplicate", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const branch = story.main_branch_id;
    const ws = workerSockets();
    const client = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, WebSocket: ws.factory });
    const connections: string[] = [];
    const stream = client.live(branch, { backoff: { initialMs: 20 }, onConnection: (c) => connections.push(c.state) });
    const seen = collect(stream);
    await seen.until((e) => e.length >= 1);
    for (let i = 0; i < 2; i++) expect((await submit(human.token, branch, words(4))).status).toBe(201);
    await seen.until((e) => seqs(e).length === 2);

    // Drop the socket from the client's side and keep the stream from reconnecting while three more land.
    ws.hold();
    ws.sockets[0].close(1000, "dropped by the test");
    await seen.until(() => connections.includes("closed"));
    for (let i = 0; i < 3; i++) expect((await submit(human.token, branch, words(4))).status).toBe(201);
    ws.release();
    await seen.until((e) => seqs(e).length >= 5);
    // and live again afterwards
    expect((await submit(human.token, branch, words(4))).status).toBe(201);
    const events = await seen.until((e) => seqs(e).length >= 6);

    expect(seqs(events)).toEqual([5, 6, 7, 8, 9, 10]);
    expect(ws.urls).toHaveLength(2);
    expect(new URL(ws.urls[1]).searchParams.get("after")).toBe("6");
    expect(events.filter((e) => e.type === "hello")).toHaveLength(2);
    expect(events.filter((e) => e.type === "segment").map((e) => (e as any).replay)).toEqual([false, false, true, true, true, false]);
    expect(stream.lastSequence).toBe(10);
    stream.close();
    await seen.done;
  });

  it("starts from ?after= and ends with archived", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const ws = workerSockets();
    const client = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, WebSocket: ws.factory });
    const seen = collect(client.live(story.main_branch_id, { after: 2 }));
    await seen.until((e) => seqs(e).length === 2);
    expect(seqs(seen.items)).toEqual([3, 4]);
    expect((await call(`/stories/${story.id}`, { method: "PATCH", token: human.token, body: { status: "archived" } })).status).toBe(200);
    await seen.done; // the iterator ends after archived
    expect(seen.items.at(-1)?.type).toBe("archived");
  });

  it("on a branch archived before it connected: yields hello (archived: true) and the replay, then ends at the server's close without reconnecting", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    expect((await call(`/stories/${story.id}`, { method: "PATCH", token: human.token, body: { status: "archived" } })).status).toBe(200);
    const ws = workerSockets();
    const client = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, WebSocket: ws.factory });
    const seen = collect(client.live(story.main_branch_id, { after: 2, backoff: { initialMs: 20 } }));
    await seen.done;
    expect(seen.error).toBe(null);
    expect(seen.items.map((e) => (e.type === "segment" ? e.segment.sequence_order : e.type))).toEqual(["hello", 3, 4]);
    expect(seen.items[0]).toMatchObject({ type: "hello", archived: true });
    expect(ws.urls).toHaveLength(1);
  });

  it("ends with the refusal for an unknown branch (404), without retrying", async () => {
    const ws = workerSockets();
    const client = createStoryloomClient({ baseUrl: BASE, fetch: workerFetch, WebSocket: ws.factory });
    const seen = collect(client.live(crypto.randomUUID()));
    await seen.done;
    expect(seen.error).toBeInstanceOf(LiveConnectError);
    expect((seen.error as LiveConnectError).status).toBe(404);
    expect(ws.urls).toHaveLength(1);
  });
});

/** A scripted server: each connection sends the frames given for it, then stays open (or closes). */
function scripted(connections: { frames: object[]; close?: boolean }[]) {
  const urls: string[] = [];
  const factory = (url: string): WebSocketLike => {
    const script = connections[urls.length] ?? { frames: [] };
    urls.push(url);
    const listeners: Record<string, ((e: any) => void)[]> = {};
    const socket = {
      readyState: 1,
      send() {},
      close() {
        socket.readyState = 3;
      },
      addEventListener(type: string, fn: (e: any) => void) {
        listeners[type] ??= [];
        listeners[type].push(fn);
      },
    };
    setTimeout(() => {
      for (const f of script.frames) for (const fn of listeners.message ?? []) fn({ data: JSON.stringify(f) });
      if (script.close) for (const fn of listeners.close ?? []) fn({ code: 1006, reason: "gone" });
    }, 1);
    return socket;
  };
  return { factory, urls };
}
const hello = (last: number) => ({ type: "hello", branch_id: "b", at: "", turn_mode: false, current_turn: null, members: [], last_sequence_order: last });
const segment = (n: number, replay = false) => ({ type: "segment", branch_id: "b", at: "", segment: { sequence_order: n }, next_bot: null, replay });

describe("live(): duplicates and gaps", () => {
  it("drops segments it already yielded and reconnects to fill a gap", async () => {
    const server = scripted([
      { frames: [hello(4), segment(5), segment(5), segment(4), segment(8)] }, // 6 and 7 went missing
      { frames: [hello(8), segment(6, true), segment(7, true), segment(8, true)], close: true },
      { frames: [hello(8), segment(8, true), segment(9)] },
    ]);
    const stream = new LiveStream("http://x.test/api/v1/branches/b/live", server.factory, { backoff: { initialMs: 1 } });
    const seen = collect(stream);
    await seen.until((e) => seqs(e).includes(9));
    expect(seqs(seen.items)).toEqual([5, 6, 7, 8, 9]);
    expect(server.urls.map((u) => new URL(u).searchParams.get("after"))).toEqual([null, "5", "8"]);
    stream.close();
    await seen.done;
  });

  it("on an archived branch ends once hello's last_sequence_order has been yielded, without waiting for the close; resumes a replay cut short", async () => {
    const archived = (last: number) => ({ ...hello(last), archived: true });
    const server = scripted([
      { frames: [archived(250), ...Array.from({ length: 100 }, (_, i) => segment(101 + i, true))], close: true }, // one page of replay
      { frames: [archived(250), ...Array.from({ length: 50 }, (_, i) => segment(201 + i, true))] }, // the rest; the close never comes
    ]);
    const stream = new LiveStream("http://x.test/api/v1/branches/b/live", server.factory, { after: 100, backoff: { initialMs: 1 } });
    const seen = collect(stream);
    await seen.done;
    expect(seen.error).toBe(null);
    expect(seqs(seen.items)).toEqual(Array.from({ length: 150 }, (_, i) => 101 + i));
    expect(server.urls.map((u) => new URL(u).searchParams.get("after"))).toEqual(["100", "200"]);
  });

  it("gives up after maxConsecutiveFailures connections fail in a row", async () => {
    let attempts = 0;
    const stream = new LiveStream(
      "http://x.test/api/v1/branches/b/live",
      () => {
        attempts++;
        throw new LiveConnectError("down", 503);
      },
      { backoff: { initialMs: 1, maxMs: 2 }, maxConsecutiveFailures: 3 },
    );
    const seen = collect(stream);
    await seen.done;
    expect(String(seen.error)).toMatch(/3 connections failed/);
    expect(attempts).toBe(4);
  });
});

describe("live(): keeping the connection honest", () => {
  it("pings, and reconnects when a ping goes unanswered; an abort signal ends the iteration", async () => {
    const sent: string[][] = [];
    let answer = false;
    const factory = (): WebSocketLike => {
      const frames: string[] = [];
      sent.push(frames);
      const listeners: Record<string, ((e: any) => void)[]> = {};
      const emit = (type: string, event: object) => {
        for (const fn of listeners[type] ?? []) fn(event);
      };
      const socket = {
        readyState: 1,
        send(data: string) {
          frames.push(data);
          if (answer) setTimeout(() => emit("message", { data: "pong" }), 1);
        },
        close() {
          socket.readyState = 3;
        },
        addEventListener(type: string, fn: (e: any) => void) {
          listeners[type] ??= [];
          listeners[type].push(fn);
        },
      };
      setTimeout(() => emit("message", { data: JSON.stringify(hello(1)) }), 1);
      return socket;
    };
    const abort = new AbortController();
    const stream = new LiveStream("http://x.test/api/v1/branches/b/live", factory, { pingIntervalMs: 20, backoff: { initialMs: 1 }, signal: abort.signal });
    const seen = collect(stream);
    // The first socket never answers: after one ping and one silent interval the stream opens a second one.
    await seen.until(() => sent.length >= 2, 2000);
    expect(sent[0]).toContain("ping");
    answer = true;
    const connections = sent.length;
    await new Promise((r) => setTimeout(r, 150));
    expect(sent.length).toBe(connections); // answered pings keep the connection
    abort.abort();
    await seen.done;
    expect(seen.error).toBe(null);
    expect(seen.items.length).toBeGreaterThan(0);
    expect(seen.items.every((e) => e.type === "hello")).toBe(true);
  });
});
