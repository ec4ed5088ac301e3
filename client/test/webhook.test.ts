import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WebhookMessage } from "../../src/domain/events/webhook-events";
import worker from "../../src/index";
import { createStory, join, registerBot, registerHuman } from "../../test/helpers";
import { verifyWebhook } from "../src";

/** What the real queue consumer sends; the receiver (the outside world) is `https://receiver.test/` only. */
interface Captured {
  url: string;
  headers: Headers;
  body: string;
}
const realFetch = globalThis.fetch;
function receiver() {
  const captured: Captured[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https://receiver.test/")) return realFetch(input, init);
    captured.push({ url, headers: new Headers(init!.headers), body: String(init!.body) });
    return new Response("ok");
  });
  return captured;
}
afterEach(() => vi.restoreAllMocks());

const hookedBot = () => registerBot({ webhook_url: `https://receiver.test/${crypto.randomUUID()}` });

async function waitFor<T>(fn: () => T | undefined, ms = 8000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    const v = fn();
    if (v) return v;
  }
  throw new Error("timed out waiting for a delivery");
}

/** Runs the real consumer on one message, as test/webhooks.test.ts does. */
async function consume(body: WebhookMessage) {
  const batch = createMessageBatch<WebhookMessage>("webhooks", [{ id: "m0", timestamp: new Date(), attempts: 1, body }]);
  const ctx = createExecutionContext();
  await worker.queue(batch, env);
  return getQueueResult(batch, ctx);
}

describe("verifyWebhook against the queue consumer's real deliveries", () => {
  it("accepts a delivery the consumer signed (Headers or a Node-style header record, string or bytes)", async () => {
    const captured = receiver();
    const bot = await hookedBot();
    const story = await createStory((await registerHuman()).token);
    const message: WebhookMessage = {
      deliveryId: crypto.randomUUID(),
      event: "new_branch",
      botId: bot.id,
      branchId: story.main_branch_id,
      createdAt: new Date().toISOString(),
      data: { branch_id: story.main_branch_id, story_id: story.id },
    };
    expect((await consume(message)).explicitAcks).toEqual(["m0"]);
    const [d] = captured;
    const result = await verifyWebhook(bot.webhook_secret, d.headers, d.body);
    expect(result).toMatchObject({ ok: true, event: "new_branch", deliveryId: message.deliveryId, body: d.body });
    const record = Object.fromEntries([...d.headers.entries()]); // lower-case keys, as node:http gives them
    expect((await verifyWebhook(bot.webhook_secret, record, new TextEncoder().encode(d.body))).ok).toBe(true);
  });

  it("accepts the your_turn the service sends through its outbox and queue when a bot joins", async () => {
    const captured = receiver();
    const bot = await hookedBot();
    const story = await createStory((await registerHuman()).token);
    await join(bot.token, story.main_branch_id);
    const d = await waitFor(() => captured.find((c) => c.url === bot.webhook_url));
    const result = await verifyWebhook(bot.webhook_secret, d.headers, d.body);
    expect(result.ok).toBe(true);
    expect(result.ok && JSON.parse(result.body)).toMatchObject({ event: "your_turn", branch_id: story.main_branch_id });
  });

  it("rejects a tampered body, another secret, a stale or future timestamp, and a malformed signature", async () => {
    const captured = receiver();
    const bot = await hookedBot();
    const story = await createStory((await registerHuman()).token);
    await join(bot.token, story.main_branch_id);
    const d = await waitFor(() => captured.find((c) => c.url === bot.webhook_url));
    const ts = Number(d.headers.get("X-Service-Timestamp"));
    expect(await verifyWebhook(bot.webhook_secret, d.headers, d.body.replace("your_turn", "your_tune"))).toEqual({ ok: false, reason: "bad_signature" });
    expect(await verifyWebhook(`${bot.webhook_secret}x`, d.headers, d.body)).toEqual({ ok: false, reason: "bad_signature" });
    // 5 minutes is the window: just inside passes, just outside (either way) does not.
    expect((await verifyWebhook(bot.webhook_secret, d.headers, d.body, { now: (ts + 300) * 1000 })).ok).toBe(true);
    expect(await verifyWebhook(bot.webhook_secret, d.headers, d.body, { now: (ts + 301) * 1000 })).toEqual({ ok: false, reason: "stale_timestamp" });
    expect(await verifyWebhook(bot.webhook_secret, d.headers, d.body, { now: (ts - 301) * 1000 })).toEqual({ ok: false, reason: "stale_timestamp" });
    // A replay with a fresh timestamp but the old signature fails: the timestamp is signed.
    const moved = new Headers(d.headers);
    moved.set("X-Service-Timestamp", String(ts + 1));
    expect(await verifyWebhook(bot.webhook_secret, moved, d.body)).toEqual({ ok: false, reason: "bad_signature" });
    const bad = new Headers(d.headers);
    bad.set("X-Service-Signature", "sha256=zz");
    expect(await verifyWebhook(bot.webhook_secret, bad, d.body)).toEqual({ ok: false, reason: "bad_signature" });
    bad.delete("X-Service-Signature");
    expect(await verifyWebhook(bot.webhook_secret, bad, d.body)).toEqual({ ok: false, reason: "missing_headers" });
  });

  it("reads event and deliveryId from the signed body: a replay under a new X-Service-Delivery keeps the first id", async () => {
    const captured = receiver();
    const bot = await hookedBot();
    const story = await createStory((await registerHuman()).token);
    await join(bot.token, story.main_branch_id);
    const d = await waitFor(() => captured.find((c) => c.url === bot.webhook_url));
    const signed = JSON.parse(d.body);
    const replayed = new Headers(d.headers);
    replayed.set("X-Service-Delivery", crypto.randomUUID());
    replayed.set("X-Service-Event", "new_branch");
    const result = await verifyWebhook(bot.webhook_secret, replayed, d.body);
    expect(result).toMatchObject({ ok: true, event: "your_turn", deliveryId: signed.delivery_id });
    expect(signed.delivery_id).toBe(d.headers.get("X-Service-Delivery"));
    // Without the headers the service adds for routing, the body still says which delivery it is.
    replayed.delete("X-Service-Delivery");
    replayed.delete("X-Service-Event");
    expect(await verifyWebhook(bot.webhook_secret, replayed, d.body)).toMatchObject({ ok: true, event: "your_turn", deliveryId: signed.delivery_id });
  });

  it("refuses a correctly signed body that does not name its event and delivery (bad_body)", async () => {
    const secret = "whsec-test";
    const ts = String(Math.floor(Date.now() / 1000));
    const signedWith = async (body: string) => {
      const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
      const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${ts}.${body}`)));
      const hex = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
      return new Headers({ "X-Service-Timestamp": ts, "X-Service-Signature": `sha256=${hex}`, "X-Service-Delivery": "d1", "X-Service-Event": "your_turn" });
    };
    for (const body of ["not json", "[]", "null", '{"event":"your_turn"}', '{"delivery_id":"d1"}', '{"event":1,"delivery_id":"d1"}']) {
      expect(await verifyWebhook(secret, await signedWith(body), body), body).toEqual({ ok: false, reason: "bad_body" });
    }
    const good = '{"event":"your_turn","delivery_id":"d2","created_at":"2025-01-01T00:00:00.000Z"}';
    expect(await verifyWebhook(secret, await signedWith(good), good)).toMatchObject({ ok: true, event: "your_turn", deliveryId: "d2" });
  });
});
