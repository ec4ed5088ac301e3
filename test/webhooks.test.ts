import { createExecutionContext, createMessageBatch, getQueueResult, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WebhookMessage } from "../src/domain/events/webhook-events";
import worker from "../src/index";
import { hmacSha256Hex } from "../src/lib/crypto";
import { branchRoom, call, createBranch, createStory, expectError, join, registerBot, registerHuman, submit, words } from "./helpers";

const realFetch = globalThis.fetch;
interface Received {
  url: string;
  headers: Record<string, string>;
  body: string;
  json: any;
}

/** A bot's webhook receiver, the outside world: `answer` decides what it does with each request. */
function mockReceiver(answer: (r: Received, init: RequestInit) => Promise<Response> = async () => new Response("ok")) {
  const received: Received[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https://receiver.test/")) return realFetch(input, init);
    const headers = Object.fromEntries(new Headers(init!.headers).entries());
    const r = { url, headers, body: String(init!.body), json: JSON.parse(String(init!.body)) };
    received.push(r);
    return answer(r, init!);
  });
  return received;
}

afterEach(() => vi.restoreAllMocks());

const hookedBot = () => registerBot({ webhook_url: `https://receiver.test/${crypto.randomUUID()}` });

async function waitFor<T>(fn: () => T | undefined, ms = 8000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const v = fn();
    if (v) return v;
  }
  throw new Error("timed out waiting");
}

/** Runs our queue handler on a batch; the harness does not record retry options, so they are spied here. */
async function consume(queue: string, messages: { body: WebhookMessage; attempts: number }[]) {
  const batch = createMessageBatch<WebhookMessage>(
    queue,
    messages.map((m, i) => ({ id: `m${i}`, timestamp: new Date(), ...m })),
  );
  const retries = batch.messages.map((m) => vi.spyOn(m, "retry"));
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  const result = await getQueueResult(batch, ctx);
  return { ...result, delays: retries.map((r) => r.mock.calls[0]?.[0]?.delaySeconds) };
}

async function newBranchMessage(bot: { id: string }) {
  const human = await registerHuman();
  const story = await createStory(human.token);
  const body: WebhookMessage = {
    deliveryId: crypto.randomUUID(),
    event: "new_branch",
    botId: bot.id,
    branchId: story.main_branch_id,
    createdAt: new Date().toISOString(),
    data: { branch_id: story.main_branch_id, story_id: story.id },
  };
  return body;
}

describe("the webhook consumer", () => {
  it("POSTs a signed delivery and acknowledges a 2xx", async () => {
    const bot = await hookedBot();
    const received = mockReceiver();
    const m = await newBranchMessage(bot);
    const result = await consume("webhooks", [{ body: m, attempts: 1 }]);
    expect(result.explicitAcks).toEqual(["m0"]);
    expect(result.retryMessages).toEqual([]);
    const [r] = received;
    expect(r.url).toBe(bot.webhook_url);
    expect(r.headers["x-service-event"]).toBe("new_branch");
    expect(r.headers["x-service-delivery"]).toBe(m.deliveryId);
    expect(r.json).toMatchObject({ event: "new_branch", delivery_id: m.deliveryId, created_at: m.createdAt, branch_id: m.branchId });
    const ts = r.headers["x-service-timestamp"];
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(5);
    expect(r.headers["x-service-signature"]).toBe(`sha256=${await hmacSha256Hex(bot.webhook_secret, `${ts}.${r.body}`)}`);
    const list = (await call(`/bots/${bot.id}/webhook/deliveries`, { token: bot.token })).body.data;
    expect(list.deliveries[0]).toMatchObject({
      id: m.deliveryId,
      event: "new_branch",
      status: "delivered",
      attempts: 1,
      last_status_code: 200,
      last_error: null,
    });
  });

  it("retries a 500, a hang past the timeout and a refused connection with growing backoff, same id and body", async () => {
    const bot = await hookedBot();
    const modes = ["500", "hang", "refuse"];
    let call_ = 0;
    const received = mockReceiver(async (_r, init) => {
      const mode = modes[call_++ % modes.length];
      if (mode === "500") return new Response("boom", { status: 500 });
      if (mode === "refuse") throw new TypeError("connection refused");
      return new Promise((_, reject) => init.signal!.addEventListener("abort", () => reject(init.signal!.reason)));
    });
    const m = await newBranchMessage(bot);
    const delays = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      const result = await consume("webhooks", [{ body: m, attempts: attempt }]);
      expect(result.explicitAcks).toEqual([]);
      expect(result.retryMessages).toEqual([{ msgId: "m0" }]);
      delays.push(result.delays[0]);
    }
    expect(delays).toEqual([10, 20, 40, 80, 160]);
    expect(new Set(received.map((r) => r.headers["x-service-delivery"]))).toEqual(new Set([m.deliveryId]));
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    const d = (await call(`/bots/${bot.id}/webhook/deliveries`, { token: bot.token })).body.data.deliveries[0];
    expect(d).toMatchObject({ status: "retrying", attempts: 5, last_status_code: null, last_error: "no answer within 300 ms" });
    const { results } = await env.DB.prepare("SELECT attempt, status_code, error FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt")
      .bind(m.deliveryId)
      .all<any>();
    expect(results.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(results[0]).toMatchObject({ status_code: 500, error: "receiver answered 500" });
    expect(results[1].error).toMatch(/no answer within 300 ms/);
    expect(results[2].error).toMatch(/connection refused/);

    const dead = await consume("webhooks-dlq", [{ body: m, attempts: 6 }]);
    expect(dead.explicitAcks).toEqual(["m0"]);
    const failed = (await call(`/bots/${bot.id}/webhook/deliveries`, { token: bot.token })).body.data.deliveries[0];
    expect(failed).toMatchObject({ id: m.deliveryId, status: "failed", attempts: 5 });
  });

  it("drops events for bots without a webhook, delivering nothing", async () => {
    const bot = await registerBot();
    const received = mockReceiver();
    const result = await consume("webhooks", [{ body: await newBranchMessage(bot), attempts: 1 }]);
    expect(result.explicitAcks).toEqual(["m0"]);
    expect(received).toEqual([]);
  });
});

/**
 * Once the queue consumer has settled every event of the branch (delivered it to the mocked receiver): how many
 * `your_turn` deliveries each bot received.
 */
async function turnsDelivered(received: Received[], branchId: string, bots: { id: string; webhook_url: string }[]) {
  const unsettled = () => env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE branch_id = ? AND settled_at IS NULL").bind(branchId).first<{ n: number }>();
  for (let i = 0; (await unsettled())!.n > 0; i++) {
    if (i > 160) throw new Error("the branch's deliveries did not settle");
    await new Promise((r) => setTimeout(r, 50));
  }
  const turns = received.filter((r) => r.json.event === "your_turn" && r.json.branch_id === branchId);
  return Object.fromEntries(bots.map((b) => [b.id, turns.filter((r) => r.url === b.webhook_url).length]));
}

/** A story whose main line has two bots with webhooks queued, the first holding the turn. */
async function twoQueuedBots() {
  const received = mockReceiver();
  const story = await createStory((await registerHuman()).token);
  const [a, b] = [await hookedBot(), await hookedBot()];
  await join(a.token, story.main_branch_id);
  await join(b.token, story.main_branch_id);
  return { received, story, a, b };
}

describe("events produced by the service", () => {
  it("your_turn on a join into an empty queue, then on each turn pass, with the context", async () => {
    const received = mockReceiver();
    const human = await registerHuman();
    const story = await createStory(human.token, { style_rules: "Present tense." });
    await call(`/stories/${story.id}/pins`, { token: human.token, body: { title: "Rule", content: "No dragons.", type: "rule" } });
    const [a, b] = [await hookedBot(), await hookedBot()];
    await join(a.token, story.main_branch_id);
    const first = await waitFor(() => received.find((r) => r.url === a.webhook_url));
    expect(first.headers["x-service-event"]).toBe("your_turn");
    expect(first.json).toMatchObject({
      event: "your_turn",
      branch_id: story.main_branch_id,
      branch_title: "main line",
      story_id: story.id,
      context: { story_background: story.background, style_rules: "Present tense.", language: "en", min_length: 3, max_length: 50 },
    });
    expect(first.json.context.previous_segments.map((s: any) => s.sequence_order)).toEqual([1, 2, 3, 4]);
    expect(first.json.context.pinned_posts.map((p: any) => p.content)).toEqual(["No dragons."]);
    await join(b.token, story.main_branch_id);
    for (let i = 0; i < 3; i++) await submit(human.token, story.main_branch_id, words(4));
    await submit(a.token, story.main_branch_id, words(5));
    const toB = await waitFor(() => received.find((r) => r.url === b.webhook_url));
    expect(toB.json.context.previous_segments.map((s: any) => s.sequence_order)).toEqual([4, 5, 6, 7, 8]);
    expect(toB.headers["x-service-signature"]).toBe(`sha256=${await hmacSha256Hex(b.webhook_secret, `${toB.headers["x-service-timestamp"]}.${toB.body}`)}`);
    await submit(b.token, story.main_branch_id, words(5));
    await waitFor(() => received.filter((r) => r.url === a.webhook_url).length === 2 || undefined);
  });

  it("a turn is handed to the queue only for a bot with a receiver (a suspended bot's too: the standing tests)", async () => {
    mockReceiver();
    const human = await registerHuman();
    const story = await createStory(human.token);
    // Every hand-over the room makes, seen on its way to the real queue.
    const handed = await runInDurableObject(branchRoom(story.main_branch_id), async (room) => {
      const roomEnv = (room as unknown as { env: { WEBHOOKS: Queue<WebhookMessage> } }).env;
      const queue = roomEnv.WEBHOOKS;
      const seen: string[] = [];
      roomEnv.WEBHOOKS = {
        send: (body: WebhookMessage, options?: QueueSendOptions) => queue.send(body, options),
        sendBatch: (messages: Iterable<MessageSendRequest<WebhookMessage>>, options?: QueueSendBatchOptions) => {
          const list = [...messages];
          for (const m of list) seen.push(m.body.botId);
          return queue.sendBatch(list, options);
        },
      } as Queue<WebhookMessage>;
      return seen;
    });
    const [a, b, c] = [await registerBot(), await hookedBot(), await registerBot()];
    for (const bot of [a, b, c]) await join(bot.token, story.main_branch_id); // a's turn begins: no receiver
    for (const bot of [a, b, c]) expect((await submit(bot.token, story.main_branch_id, words(5))).status).toBe(201);
    const seen = await runInDurableObject(branchRoom(story.main_branch_id), async () => [...handed]);
    expect(seen).toEqual([b.id]);
    const outbox = await env.DB.prepare("SELECT bot_id FROM outbox WHERE branch_id = ?").bind(story.main_branch_id).all();
    expect(outbox.results).toEqual([{ bot_id: b.id }]);
  });

  it("your_turn when the alarm passes a stalled turn", async () => {
    const { received, story, b } = await twoQueuedBots();
    expect(await runDurableObjectAlarm(env.BRANCH_ROOM.get(env.BRANCH_ROOM.idFromName(story.main_branch_id)))).toBe(true);
    const toB = await waitFor(() => received.find((r) => r.url === b.webhook_url));
    expect(toB.json.event).toBe("your_turn");
  });

  it("your_turn for the next bot when the bot whose turn it is leaves", async () => {
    const { received, story, a, b } = await twoQueuedBots();
    await call(`/branches/${story.main_branch_id}/leave`, { method: "POST", token: a.token });
    const toB = await waitFor(() => received.find((r) => r.url === b.webhook_url));
    expect(toB.json).toMatchObject({ event: "your_turn", branch_id: story.main_branch_id });
  });

  it("a lone bot refused by its limit at its turn sits out: no your_turn for any refusal before its limit frees, one after", async () => {
    const received = mockReceiver();
    const story = await createStory((await registerHuman()).token);
    const branch = story.main_branch_id;
    const bot = await hookedBot();
    await join(bot.token, branch); // your_turn 1
    const oneAnHour = { env: { LIMIT_SEGMENTS_PER_HOUR: "1" }, token: bot.token, body: { content: words(4) } };
    expect((await call(`/branches/${branch}/segments`, oneAnHour)).status).toBe(201); // its own turn again: your_turn 2
    const refused = expectError(await call(`/branches/${branch}/segments`, oneAnHour), 429, "RATE_LIMIT_EXCEEDED");
    const until: string = refused.details.sits_out_until;
    expect(refused.details).toMatchObject({ turn_passed: true, next_bot: null });
    expect(Date.parse(refused.details.reset_time)).toBe(Math.ceil(Date.parse(until) / 1000) * 1000);
    // InkPath's Node SDK wrote again on every your_turn (51 in 4.4 s): each try is refused by the limit, nothing moves.
    for (let i = 0; i < 10; i++) {
      const again = expectError(await call(`/branches/${branch}/segments`, oneAnHour), 429, "RATE_LIMIT_EXCEEDED");
      expect(again.details).toMatchObject({ turn_passed: false, next_bot: null, sits_out_until: until });
    }
    expect(await turnsDelivered(received, branch, [bot])).toEqual({ [bot.id]: 2 });
    // Nobody holds the turn until the bot is back, and the room wakes then, not before.
    expect((await call(`/branches/${branch}`)).body.data.queue).toMatchObject({
      current_turn: null,
      resumes_at: until,
      members: [{ bot_id: bot.id, sits_out_until: until }],
    });
    expect(await runInDurableObject(branchRoom(branch), (_r, state) => state.storage.getAlarm())).toBe(Date.parse(until));
    expect(await runDurableObjectAlarm(branchRoom(branch))).toBe(true); // its limit frees: the room's alarm
    expect(await turnsDelivered(received, branch, [bot])).toEqual({ [bot.id]: 3 });
    expect((await call(`/branches/${branch}`)).body.data.queue.current_turn.bot_id).toBe(bot.id);
    expect((await submit(bot.token, branch, words(4))).status).toBe(201);
  });

  it("two bots, one refused by its limit at its turn: the other writes every turn, and the limited one is sent nothing", async () => {
    const { received, story, a, b } = await twoQueuedBots(); // a's turn: your_turn to a
    const branch = story.main_branch_id;
    const refused = expectError(
      await call(`/branches/${branch}/segments`, { token: a.token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } }),
      429,
      "RATE_LIMIT_EXCEEDED",
    );
    expect(refused.details).toMatchObject({ turn_passed: true, next_bot: { id: b.id, name: b.name }, sits_out_until: expect.any(String) });
    for (let i = 0; i < 4; i++) {
      const wrote = await submit(b.token, branch, words(4));
      expect(wrote.status, wrote.text).toBe(201);
      expect(wrote.body.data.next_bot).toEqual({ id: b.id, name: b.name });
      const early = await submit(a.token, branch, words(4));
      const err = expectError(early, 403, "NOT_YOUR_TURN");
      expect(err.details).toMatchObject({ current_turn: b.id, sits_out_until: refused.details.sits_out_until });
      expect(early.headers.get("retry-after")).toBe(String(err.details.estimated_wait));
    }
    // b: the turn passed to it, then its own turn again after each of its 4 segments; a: only its first turn.
    expect(await turnsDelivered(received, branch, [a, b])).toEqual({ [a.id]: 1, [b.id]: 5 });
  });

  it("new_branch to every bot queued on the story except the creator", async () => {
    const received = mockReceiver();
    const human = await registerHuman();
    const story = await createStory(human.token);
    const side = await createBranch(human.token, story.id);
    const [a, b, c] = [await hookedBot(), await hookedBot(), await hookedBot()];
    await join(a.token, story.main_branch_id);
    await join(b.token, side.id);
    await join(c.token, side.id);
    const made = await createBranch(c.token, story.id, { title: "C's idea" });
    const events = () => received.filter((r) => r.json.event === "new_branch");
    await waitFor(() => (events().length >= 2 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    expect(
      events()
        .map((r) => r.url)
        .sort(),
    ).toEqual([a.webhook_url, b.webhook_url].sort());
    expect(events()[0].json).toMatchObject({
      branch_id: made.id,
      branch_title: "C's idea",
      story_id: story.id,
      story_title: story.title,
      creator: { id: c.id, type: "bot", name: c.name },
    });
  });
});

describe("PUT /bots/{id}/webhook", () => {
  it("sets the address and returns a new whsec_ secret; the bot's deliveries start empty, 20 per page", async () => {
    const bot = await registerBot();
    const res = await call(`/bots/${bot.id}/webhook`, { method: "PUT", token: bot.token, body: { webhook_url: "https://hooks.example.com/x" } });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      bot_id: bot.id,
      webhook_url: "https://hooks.example.com/x",
      webhook_secret: expect.stringMatching(/^whsec_/),
      updated_at: expect.any(String),
    });
    expect(res.body.data.webhook_secret).not.toBe(bot.webhook_secret);
    expect((await call(`/bots/${bot.id}/webhook/deliveries`, { token: bot.apiKey })).body.data).toEqual({
      deliveries: [],
      pagination: { limit: 20, offset: 0, total: 0, has_more: false },
    });
  });

  it("refuses loopback, private, link-local and non-http addresses", async () => {
    const bot = await registerBot();
    for (const url of [
      "http://127.0.0.1/hook",
      "http://10.1.2.3/hook",
      "http://172.16.0.1/",
      "http://192.168.1.1/",
      "http://169.254.169.254/latest",
      "http://[::1]/hook",
      "http://[fe80::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://localhost:8080/",
      "ftp://example.com/x",
      "javascript:alert(1)",
      "https://user:pw@example.com/",
      "not a url",
    ]) {
      const res = await call(`/bots/${bot.id}/webhook`, { method: "PUT", token: bot.token, body: { webhook_url: url } });
      expect(expectError(res, 400, "VALIDATION_ERROR").details.fields[0].field, url).toBe("webhook_url");
    }
  });

  it("checks the address before the id: a bad address is 400 whatever the id, a good one for a malformed id 404", async () => {
    const bot = await registerBot();
    const bad = await call("/bots/not-a-bot-id/webhook", { method: "PUT", token: bot.token, body: { webhook_url: "not a url" } });
    expect(expectError(bad, 400, "VALIDATION_ERROR").details.fields[0].field).toBe("webhook_url");
    const good = await call("/bots/not-a-bot-id/webhook", { method: "PUT", token: bot.token, body: { webhook_url: "https://hooks.example.com/x" } });
    expectError(good, 404, "NOT_FOUND");
  });
});

describe("GET /bots/{id}/webhook/status", () => {
  it("a bot without a webhook: not configured, no deliveries, no attempt", async () => {
    const bot = await registerBot();
    const res = await call(`/bots/${bot.id}/webhook/status`, { token: bot.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      bot_id: bot.id,
      webhook_url: null,
      is_configured: false,
      deliveries: { total: 0, pending: 0, retrying: 0, delivered: 0, failed: 0 },
      last_attempt: null,
    });
  });

  it("the address as configured, its deliveries counted by outcome, and the last attempt's time and status", async () => {
    const bot = await hookedBot();
    let answer = 200;
    mockReceiver(async () => new Response("", { status: answer }));
    const delivered = await newBranchMessage(bot);
    await consume("webhooks", [{ body: delivered, attempts: 1 }]);
    answer = 503;
    const retrying = await newBranchMessage(bot);
    await consume("webhooks", [{ body: retrying, attempts: 1 }]);
    await consume("webhooks", [{ body: retrying, attempts: 2 }]);
    const before = Date.now();
    const failed = await newBranchMessage(bot);
    await consume("webhooks", [{ body: failed, attempts: 1 }]);
    await consume("webhooks-dlq", [{ body: failed, attempts: 6 }]);
    const res = await call(`/bots/${bot.id}/webhook/status`, { token: bot.apiKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      bot_id: bot.id,
      webhook_url: bot.webhook_url,
      is_configured: true,
      deliveries: { total: 3, pending: 0, retrying: 1, delivered: 1, failed: 1 },
      last_attempt: {
        delivery_id: failed.deliveryId,
        event: "new_branch",
        attempt: 1,
        at: expect.any(String),
        status_code: 503,
        error: "receiver answered 503",
        ok: false,
      },
    });
    expect(Date.parse(res.body.data.last_attempt.at)).toBeGreaterThanOrEqual(before - 1000);
  });

  it("is the bot's own: 404 for an unknown bot, 403 FORBIDDEN for a human, 403 PERMISSION_DENIED for another bot", async () => {
    const bot = await registerBot();
    const other = await registerBot();
    const human = await registerHuman();
    expectError(await call(`/bots/${crypto.randomUUID()}/webhook/status`, { token: bot.token }), 404, "NOT_FOUND");
    expectError(await call(`/bots/${bot.id}/webhook/status`, { token: human.token }), 403, "FORBIDDEN");
    expectError(await call(`/bots/${bot.id}/webhook/status`, { token: other.token }), 403, "PERMISSION_DENIED");
    expectError(await call(`/bots/${bot.id}/webhook/status`), 401, "UNAUTHORIZED");
  });
});
