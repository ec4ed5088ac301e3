import { createExecutionContext, evictDurableObject, listDurableObjectIds, runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { app } from "../src/app";
import { INBOUND_FRAMES_PER_MINUTE, LIVE_SOCKETS } from "../src/domain/events/live-bounds";
import type { Env } from "../src/env";
import { BASE, address, call, createStory, expectError, join, registerBot, registerHuman, storyWithSegments, submit, words } from "./helpers";

/** GET /branches/{id}/live: the branch's room speaks over a hibernatable WebSocket. */

interface Stream {
  frames: any[];
  ws: WebSocket;
  /** The 101 answer. */
  res: Response;
  /** Resolves with the close frame's code and reason, when the socket closes. */
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves when `n` frames (in all) have arrived. */
  until(n: number, ms?: number): Promise<any[]>;
  close(): void;
}

interface UpgradeOptions {
  query?: string;
  headers?: Record<string, string>;
  /** Bindings to change for this upgrade (served by the app itself, with the rest of the real env). */
  env?: Partial<Env>;
}

/** An upgrade request as a client sends it; a fresh client address unless the test names one. */
function upgrade(branchId: string, { query = "", headers = {}, env: bindings }: UpgradeOptions = {}): Promise<Response> {
  const request = new Request(`${BASE}/branches/${branchId}/live${query}`, {
    headers: { Upgrade: "websocket", "CF-Connecting-IP": address(), ...headers },
  });
  if (!bindings) return exports.default.fetch(request);
  return Promise.resolve(app.fetch(request, { ...env, ...bindings }, createExecutionContext()));
}

async function open(branchId: string, query = "", headers: Record<string, string> = {}, bindings?: Partial<Env>): Promise<Stream> {
  const res = await upgrade(branchId, { query, headers, env: bindings });
  if (res.status !== 101) throw new Error(`no stream: ${res.status} ${await res.text()}`);
  const ws = res.webSocket!;
  const frames: any[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
  ws.accept();
  ws.addEventListener("message", (e) => {
    const text = e.data as string;
    if (text !== "pong") frames.push(JSON.parse(text));
  });
  return {
    frames,
    ws,
    res,
    closed,
    async until(n, ms = 5000) {
      for (const end = Date.now() + ms; frames.length < n && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
      expect(frames.length, JSON.stringify(frames.map((f) => f.type))).toBeGreaterThanOrEqual(n);
      return frames;
    },
    close: () => {
      try {
        ws.close(1000, "done");
      } catch {
        // already closed by the server
      }
    },
  };
}

/** Resolves within `ms` or fails naming what it waited for. */
async function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer = 0;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms) as unknown as number;
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const errorOf = async (res: Response) => ((await res.json()) as any).error as { code: string; message: string; request_id?: string };
const room = (branchId: string) => env.BRANCH_ROOM.get(env.BRANCH_ROOM.idFromName(branchId));

describe("opening the stream", () => {
  it("greets with hello: the turn, its deadline, the queue with names and order, the last sequence_order", async () => {
    const { story } = await storyWithSegments();
    const [a, b] = [await registerBot(), await registerBot()];
    await join(a.token, story.main_branch_id);
    await join(b.token, story.main_branch_id, "voice");
    const stream = await open(story.main_branch_id);
    const [hello] = await stream.until(1);
    expect(hello).toEqual({
      type: "hello",
      branch_id: story.main_branch_id,
      at: expect.stringMatching(/Z$/),
      turn_mode: true,
      current_turn: { bot_id: a.id, name: a.name, deadline: expect.stringMatching(/Z$/) },
      resumes_at: null,
      members: [
        { bot_id: a.id, name: a.name, role: "narrator", your_turn_order: 1, sits_out_until: null },
        { bot_id: b.id, name: b.name, role: "voice", your_turn_order: 2, sits_out_until: null },
      ],
      last_sequence_order: 4,
      archived: false,
    });
    stream.close();
  });

  it("is 426 in the envelope without Upgrade: websocket, and 404 for an unknown branch, creating no room", async () => {
    const { story } = await storyWithSegments();
    expectError(await call(`/branches/${story.main_branch_id}/live`), 426, "UPGRADE_REQUIRED");
    const unknown = crypto.randomUUID();
    const before = (await listDurableObjectIds(env.BRANCH_ROOM)).length;
    const res = await exports.default.fetch(`${BASE}/branches/${unknown}/live`, { headers: { Upgrade: "websocket" } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("NOT_FOUND");
    expect((await exports.default.fetch(`${BASE}/branches/nope/live`, { headers: { Upgrade: "websocket" } })).status).toBe(404);
    expect((await listDurableObjectIds(env.BRANCH_ROOM)).length).toBe(before);
  });

  it("answers ping with pong and any other frame with an error frame, and keeps streaming", async () => {
    const { owner, story } = await storyWithSegments();
    const stream = await open(story.main_branch_id);
    await stream.until(1);
    const raw: string[] = [];
    stream.ws.addEventListener("message", (e) => raw.push(e.data as string));
    stream.ws.send("ping");
    stream.ws.send('{"type":"segment","content":"let me write"}');
    stream.ws.send(new Uint8Array([1, 2, 3]));
    for (let i = 0; i < 100 && raw.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
    expect(raw[0]).toBe("pong");
    expect(JSON.parse(raw[1])).toMatchObject({ type: "error", branch_id: story.main_branch_id });
    expect(JSON.parse(raw[2])).toMatchObject({ type: "error" });
    expect((await submit(owner.token, story.main_branch_id, words(4))).status).toBe(201);
    expect((await stream.until(4)).at(-1)).toMatchObject({ type: "segment" });
    stream.close();
  });
});

describe("every change reaches the stream after it commits, in order", () => {
  it("join, segment, leave, timeout, limit (sitting out), return and archive each send their event", async () => {
    const { owner, story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const stream = await open(branch);
    await stream.until(1);
    const [a, b] = [await registerBot(), await registerBot()];
    await join(a.token, branch);
    await stream.until(3);
    expect(stream.frames.slice(1, 3).map((f) => [f.type, f.change ?? f.reason])).toEqual([
      ["queue", "joined"],
      ["turn", "joined"],
    ]);
    expect(stream.frames[2].current_turn.bot_id).toBe(a.id);
    await join(b.token, branch);
    await stream.until(4);
    expect(stream.frames[3]).toMatchObject({ type: "queue", change: "joined", bot: { bot_id: b.id }, members: [{ bot_id: a.id }, { bot_id: b.id }] });
    const written = (await submit(a.token, branch, words(4))).body.data;
    await stream.until(6);
    expect(stream.frames[4]).toEqual({
      type: "segment",
      branch_id: branch,
      at: expect.any(String),
      replay: false,
      segment: (await call(`/branches/${branch}/segments`)).body.data.segments.at(-1),
      next_bot: { id: b.id, name: b.name },
    });
    expect(stream.frames[4].segment.id).toBe(written.id);
    expect(stream.frames[5]).toMatchObject({ type: "turn", reason: "submitted", current_turn: { bot_id: b.id } });
    expect(await runDurableObjectAlarm(room(branch))).toBe(true);
    await stream.until(7);
    expect(stream.frames[6]).toMatchObject({ type: "turn", reason: "timeout", current_turn: { bot_id: a.id } });
    const limited = await call(`/branches/${branch}/segments`, { token: a.token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } });
    expect(limited.status).toBe(429);
    const until = limited.body.error.details.sits_out_until;
    await stream.until(9);
    // a sits out (a limit refused it at its turn): the queue says until when, and the turn passes to b.
    expect(stream.frames[7]).toMatchObject({
      type: "queue",
      change: "sits_out",
      bot: { bot_id: a.id },
      members: [
        { bot_id: a.id, sits_out_until: until },
        { bot_id: b.id, sits_out_until: null },
      ],
    });
    expect(stream.frames[8]).toMatchObject({ type: "turn", reason: "limited", current_turn: { bot_id: b.id }, resumes_at: null });
    await call(`/branches/${branch}/leave`, { method: "POST", token: b.token });
    await stream.until(11);
    expect(stream.frames.slice(9, 11).map((f) => [f.type, f.change ?? f.reason])).toEqual([
      ["queue", "left"],
      ["turn", "left"],
    ]);
    // Every queued bot sits out: nobody holds the turn until a is back.
    expect(stream.frames[10]).toMatchObject({ current_turn: null, resumes_at: until });
    await submit(owner.token, branch, words(4));
    await stream.until(12);
    expect(stream.frames[11]).toMatchObject({ type: "segment", next_bot: null }); // a human moves no turn
    expect(await runDurableObjectAlarm(room(branch))).toBe(true);
    await stream.until(13);
    expect(stream.frames[12]).toMatchObject({ type: "turn", reason: "resumed", current_turn: { bot_id: a.id }, resumes_at: null });
    await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } });
    await stream.until(14);
    expect(stream.frames[13]).toMatchObject({ type: "archived", branch_id: branch });
    expect(stream.frames).toHaveLength(14);
    stream.close();
  });

  it("under concurrent writes: one segment event per segment, sequence numbers strictly increasing", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const others = await Promise.all(Array.from({ length: 4 }, () => registerHuman()));
    const stream = await open(story.main_branch_id);
    await stream.until(1);
    const writers = Array.from({ length: 20 }, (_, i) => [human, ...others][i % 5].token);
    const results = await Promise.all(writers.map((t) => submit(t, story.main_branch_id, words(4))));
    expect(results.every((r) => r.status === 201)).toBe(true);
    await stream.until(21);
    const seqs = stream.frames.filter((f) => f.type === "segment").map((f) => f.segment.sequence_order);
    expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 5));
    stream.close();
  });
});

describe("resuming and hibernating", () => {
  it("?after= replays the segments after that number, oldest first, before live events", async () => {
    const { owner, story } = await storyWithSegments();
    for (let i = 0; i < 3; i++) await submit(owner.token, story.main_branch_id, words(4));
    const stream = await open(story.main_branch_id, "?after=5");
    const frames = await stream.until(3);
    expect(frames[0]).toMatchObject({ type: "hello", last_sequence_order: 7 });
    expect(frames.slice(1).map((f) => [f.type, f.segment.sequence_order, f.replay, f.next_bot])).toEqual([
      ["segment", 6, true, null],
      ["segment", 7, true, null],
    ]);
    await submit(owner.token, story.main_branch_id, words(4));
    expect((await stream.until(4))[3]).toMatchObject({ type: "segment", replay: false, segment: { sequence_order: 8 } });
    stream.close();
  });

  it("a socket survives the room's eviction (hibernation): a later change still reaches it", async () => {
    const { owner, story } = await storyWithSegments();
    const stream = await open(story.main_branch_id);
    await stream.until(1);
    await evictDurableObject(room(story.main_branch_id));
    expect((await submit(owner.token, story.main_branch_id, words(4))).status).toBe(201);
    expect((await stream.until(2))[1]).toMatchObject({ type: "segment", segment: { sequence_order: 5 } });
    stream.close();
  });

  it("bounds the anonymous sockets per client address on one branch", async () => {
    const { story } = await storyWithSegments();
    const address = { "CF-Connecting-IP": "203.0.113.99" };
    const streams = [];
    for (let i = 0; i < LIVE_SOCKETS.anonymousPerAddress; i++) streams.push(await open(story.main_branch_id, "", address));
    const refused = await upgrade(story.main_branch_id, { headers: address });
    expect(refused.status).toBe(429);
    expect((await errorOf(refused)).code).toBe("RATE_LIMIT_EXCEEDED");
    const other = await open(story.main_branch_id, "", { "CF-Connecting-IP": "203.0.113.98" });
    for (const s of [...streams, other]) s.close();
  });
});

describe("the live stream is a read like any other", () => {
  /** A rate-limit binding that grants `leases` calls and refuses the rest, recording the keys it was asked for. */
  const limiter = (leases: number) => {
    const keys: string[] = [];
    const binding = {
      limit: async ({ key }: { key: string }) => {
        keys.push(key);
        return { success: keys.length <= leases };
      },
    } as RateLimit;
    return { keys, binding };
  };

  it("counts each upgrade, and its page of replay, against the address's anonymous reads; past them 429 with Retry-After before upgrading", async () => {
    const { owner, story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const address = { "CF-Connecting-IP": "203.0.113.124" };
    // One lease from the binding: 10 reads for this address.
    const { keys, binding } = limiter(1);
    for (let i = 0; i < 3; i++) {
      const stream = await open(branch, "?after=0", address, { READ_LIMITER: binding }); // the upgrade and one page of replay: 2 reads
      await stream.until(5);
      stream.close();
    }
    for (let i = 0; i < 3; i++) expect((await call(`/branches/${branch}`, { headers: address, env: { READ_LIMITER: binding } })).status).toBe(200);
    (await open(branch, "", address, { READ_LIMITER: binding })).close(); // the tenth read
    expectError(await call(`/branches/${branch}`, { headers: address, env: { READ_LIMITER: binding } }), 429, "RATE_LIMIT_EXCEEDED");
    const refused = await upgrade(branch, { headers: address, env: { READ_LIMITER: binding } });
    expect(refused.status).toBe(429);
    expect(refused.webSocket).toBeNull();
    expect(refused.headers.get("retry-after")).toBe("60");
    const error = await errorOf(refused);
    expect(error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(error.request_id).toBe(refused.headers.get("x-request-id"));
    expect(new Set(keys)).toEqual(new Set(["read:203.0.113.124"]));
    // A verified credential is not an anonymous read (there is no per-account read limit): it still gets in.
    (await open(branch, "", { ...address, Authorization: `Bearer ${owner.token}` }, { READ_LIMITER: binding })).close();
  });

  it("logs the upgrade like every request, and the socket's close with its duration and frames; the 101 reaches the client whole", async () => {
    const { owner, story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const lines: any[] = [];
    const spy = vi.spyOn(console, "info").mockImplementation((line: unknown) => void lines.push(JSON.parse(String(line))));
    try {
      const logging = { LOG_REQUESTS: "true" };
      const stream = await open(branch, "", {}, logging);
      expect((await stream.until(1))[0]).toMatchObject({ type: "hello", branch_id: branch });
      const id = stream.res.headers.get("x-request-id");
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(lines).toContainEqual({
        request_id: id,
        route: "/api/v1/branches/:branch_id/live",
        status: 101,
        d1_round_trips: 1,
        actor: "anonymous",
        error: null,
      });
      expect((await submit(owner.token, branch, words(4))).status).toBe(201);
      await stream.until(2);
      stream.ws.send("anything");
      await stream.until(3);
      stream.close();
      for (let i = 0; i < 200 && !lines.some((l) => l.event === "live socket closed"); i++) await new Promise((r) => setTimeout(r, 10));
      expect(lines.find((l) => l.event === "live socket closed")).toEqual({
        event: "live socket closed",
        request_id: id,
        branch_id: branch,
        actor: "anonymous",
        code: 1000,
        duration_ms: expect.any(Number),
        frames_sent: 2,
        frames_sent_complete: true,
        frames_received: 1,
      });
      const refused = await upgrade(branch, { headers: { Origin: "https://elsewhere.example" }, env: logging });
      expect(refused.status).toBe(403);
      expect(lines.at(-1)).toEqual({
        request_id: refused.headers.get("x-request-id"),
        route: "/api/v1/branches/:branch_id/live",
        status: 403,
        d1_round_trips: 0,
        actor: "anonymous",
        error: "FORBIDDEN",
      });
    } finally {
      spy.mockRestore();
    }
  });

  it("refuses a browser Origin other than the site's own with 403 FORBIDDEN; no Origin (bots) and the site's own are fine", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    for (const origin of ["https://evil.example", "null", "https://storyloom.test.evil.example", "http://storyloom.test", "https://storyloom.test:8080"]) {
      const res = await upgrade(branch, { headers: { Origin: origin } });
      expect(res.status, origin).toBe(403);
      expect((await errorOf(res)).code).toBe("FORBIDDEN");
    }
    (await open(branch)).close();
    (await open(branch, "", { Origin: "https://storyloom.test" })).close(); // the request's own origin
    (await open(branch, "", { Origin: "https://storyloom.example" }, { PUBLIC_ORIGIN: "https://storyloom.example" })).close(); // the configured one
  });

  it(`reads ${INBOUND_FRAMES_PER_MINUTE} frames a minute from a socket, then closes it with 1008; ping is answered by the runtime and never counted`, async () => {
    const { story } = await storyWithSegments();
    const stream = await open(story.main_branch_id);
    await stream.until(1);
    let pongs = 0;
    stream.ws.addEventListener("message", (e) => void (e.data === "pong" && pongs++));
    for (let i = 0; i < 3 * INBOUND_FRAMES_PER_MINUTE; i++) stream.ws.send("ping");
    for (let i = 0; i < 200 && pongs < 3 * INBOUND_FRAMES_PER_MINUTE; i++) await new Promise((r) => setTimeout(r, 10));
    expect(pongs).toBe(3 * INBOUND_FRAMES_PER_MINUTE);
    for (let i = 0; i < INBOUND_FRAMES_PER_MINUTE; i++) stream.ws.send(`{"type":"nonsense","n":${i}}`);
    const frames = await stream.until(1 + INBOUND_FRAMES_PER_MINUTE);
    expect(frames.slice(1).every((f) => f.type === "error")).toBe(true);
    stream.ws.send("one too many");
    expect(await within(stream.closed, "the server's close")).toMatchObject({ code: 1008 });
    expect(stream.frames).toHaveLength(1 + INBOUND_FRAMES_PER_MINUTE);
  });

  it("counts IPv6 addresses by /64: one /64 cannot open more sockets than one address", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const streams = [];
    for (let i = 1; i <= LIVE_SOCKETS.anonymousPerAddress; i++) streams.push(await open(branch, "", { "CF-Connecting-IP": `2001:db8:24:1::${i}` }));
    for (const sameNet of ["2001:db8:24:1:ffff:ffff:ffff:ffff", "2001:0db8:0024:0001:0:0:0:abcd"]) {
      const refused = await upgrade(branch, { headers: { "CF-Connecting-IP": sameNet } });
      expect(refused.status, sameNet).toBe(429);
      expect((await errorOf(refused)).code).toBe("RATE_LIMIT_EXCEEDED");
    }
    streams.push(await open(branch, "", { "CF-Connecting-IP": "2001:db8:24:2::1" })); // the next /64 is another address
    for (const s of streams) s.close();
  });

  it("keeps a share of each branch for signed-in readers: anonymous sockets stop at theirs, and a signed-in caller at its own", async () => {
    expect(LIVE_SOCKETS.anonymousPerBranch).toBeLessThan(LIVE_SOCKETS.perBranch - LIVE_SOCKETS.anonymousPerBranch);
    expect(LIVE_SOCKETS.anonymousPerAddress * 20).toBeLessThanOrEqual(LIVE_SOCKETS.anonymousPerBranch);
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const streams: Stream[] = [];
    for (let i = 0; i < LIVE_SOCKETS.anonymousPerBranch; i++) {
      const address = `10.24.${Math.floor(i / LIVE_SOCKETS.anonymousPerAddress)}.1`;
      streams.push(await open(branch, "", { "CF-Connecting-IP": address }));
    }
    const anonymous = await upgrade(branch, { headers: { "CF-Connecting-IP": "10.25.0.1" } });
    expect(anonymous.status).toBe(429);
    expect((await errorOf(anonymous)).message).toMatch(/anonymous/);
    const bot = await registerBot();
    const signedIn = { "CF-Connecting-IP": "10.25.0.2", Authorization: `Bearer ${bot.token}` };
    for (let i = 0; i < LIVE_SOCKETS.perAccount; i++) streams.push(await open(branch, "", signedIn));
    const over = await upgrade(branch, { headers: { ...signedIn, "CF-Connecting-IP": "10.25.0.3" } });
    expect(over.status).toBe(429);
    expect((await errorOf(over)).message).toMatch(/account/);
    for (const s of streams) s.close();
  });

  it("?after= that is not a non-negative integer is 400 VALIDATION_ERROR naming it", async () => {
    const { story } = await storyWithSegments();
    for (const value of ["abc", "-1", "1.5", "0x1", "", "1e2", " 1", "+1", "99999999999999999999"]) {
      const res = await upgrade(story.main_branch_id, { query: `?after=${encodeURIComponent(value)}` });
      expect(res.status, JSON.stringify(value)).toBe(400);
      const error = (await res.json()) as any;
      expect(error.error.code).toBe("VALIDATION_ERROR");
      expect(error.error.details.fields[0].field).toBe("after");
    }
    const resumed = await open(story.main_branch_id, "?after=3");
    expect((await resumed.until(2)).map((f) => f.type)).toEqual(["hello", "segment"]);
    resumed.close();
  });

  it("an archived branch: hello says so and the server closes the socket after it (and the replay); open sockets close after their archived frame", async () => {
    const { owner, story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const before = await open(branch);
    await before.until(1);
    expect((await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } })).status).toBe(200);
    expect((await before.until(2))[1]).toMatchObject({ type: "archived", branch_id: branch });
    expect(await within(before.closed, "the close after archived")).toMatchObject({ code: 1000, reason: "archived" });
    const after = await open(branch, "?after=3");
    expect(await within(after.closed, "the close after hello")).toMatchObject({ code: 1000, reason: "archived" });
    expect(after.frames.map((f) => [f.type, f.archived ?? f.segment?.sequence_order])).toEqual([
      ["hello", true],
      ["segment", 4],
    ]);
  });
});
