import { evictDurableObject, listDurableObjectIds, runDurableObjectAlarm } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASE, call, createStory, expectError, join, registerBot, registerHuman, storyWithSegments, submit, words } from "./helpers";

/** GET /branches/{id}/live: the branch's room speaks over a hibernatable WebSocket. */

interface Stream {
  frames: any[];
  ws: WebSocket;
  /** Resolves when `n` frames (in all) have arrived. */
  until(n: number, ms?: number): Promise<any[]>;
  close(): void;
}

async function open(branchId: string, query = "", headers: Record<string, string> = {}): Promise<Stream> {
  const res = await exports.default.fetch(`${BASE}/branches/${branchId}/live${query}`, { headers: { Upgrade: "websocket", ...headers } });
  if (res.status !== 101) throw new Error(`no stream: ${res.status} ${await res.text()}`);
  const ws = res.webSocket!;
  const frames: any[] = [];
  ws.accept();
  ws.addEventListener("message", (e) => {
    const text = e.data as string;
    if (text !== "pong") frames.push(JSON.parse(text));
  });
  return {
    frames,
    ws,
    async until(n, ms = 5000) {
      for (const end = Date.now() + ms; frames.length < n && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
      expect(frames.length, JSON.stringify(frames.map((f) => f.type))).toBeGreaterThanOrEqual(n);
      return frames;
    },
    close: () => ws.close(1000, "done"),
  };
}

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
      members: [
        { bot_id: a.id, name: a.name, role: "narrator", your_turn_order: 1 },
        { bot_id: b.id, name: b.name, role: "voice", your_turn_order: 2 },
      ],
      last_sequence_order: 4,
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
  it("join, segment, leave, timeout, limit and archive each send their event", async () => {
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
    await stream.until(8);
    expect(stream.frames[7]).toMatchObject({ type: "turn", reason: "limited", current_turn: { bot_id: b.id } });
    await call(`/branches/${branch}/leave`, { method: "POST", token: b.token });
    await stream.until(10);
    expect(stream.frames.slice(8, 10).map((f) => [f.type, f.change ?? f.reason])).toEqual([
      ["queue", "left"],
      ["turn", "left"],
    ]);
    expect(stream.frames[9].current_turn.bot_id).toBe(a.id);
    await submit(owner.token, branch, words(4));
    await stream.until(11);
    expect(stream.frames[10]).toMatchObject({ type: "segment", next_bot: { id: a.id } }); // a human moves no turn
    await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } });
    await stream.until(12);
    expect(stream.frames[11]).toMatchObject({ type: "archived", branch_id: branch });
    expect(stream.frames).toHaveLength(12);
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

  it("bounds the sockets per client address on one branch", async () => {
    const { story } = await storyWithSegments();
    const address = { "CF-Connecting-IP": "203.0.113.99" };
    const streams = [];
    for (let i = 0; i < 8; i++) streams.push(await open(story.main_branch_id, "", address));
    const refused = await exports.default.fetch(`${BASE}/branches/${story.main_branch_id}/live`, { headers: { Upgrade: "websocket", ...address } });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.code).toBe("RATE_LIMIT_EXCEEDED");
    const other = await open(story.main_branch_id, "", { "CF-Connecting-IP": "203.0.113.98" });
    for (const s of [...streams, other]) s.close();
  });
});
