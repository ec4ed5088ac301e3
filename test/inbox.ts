import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import type { FanoutMessage } from "../src/domain/events/inbox-events";
import type { Env } from "../src/env";
import { handleFanout } from "../src/queue/fanout";
import { call } from "./helpers";

/** What the follow and inbox tests share (test/follows.test.ts, test/inbox.test.ts, test/web-follows.test.ts). */

export const followOf = (token: string, target_type: string, target_id: string, bindings?: Partial<Env>) =>
  call("/follows", { token, body: { target_type, target_id }, env: bindings });

/** The caller's inbox (`GET /me/inbox` + query), its data. */
export async function inboxOf(token: string, query = "") {
  const res = await call(`/me/inbox${query}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { items: any[]; unread_count: number; pagination: any };
}

/**
 * Once the real fan-out consumer has settled every inbox event of the story (the writes hand them to the queue
 * after their answer): waits, bounded, as test/webhooks.test.ts waits for deliveries.
 */
export async function settled(storyId: string) {
  for (let i = 0; ; i++) {
    const row = await env.DB.prepare("SELECT count(*) AS n FROM inbox_events WHERE story_id = ? AND settled_at IS NULL").bind(storyId).first<{ n: number }>();
    if (!row!.n) return;
    if (i > 200) throw new Error("the story's inbox events did not settle");
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A queue that keeps what is sent to it (a write's `env: { FANOUT }`, or `SEARCH_SYNC`), for a test to drive the
 * consumer itself.
 */
export function capturedQueue<T = FanoutMessage>() {
  const sent: T[] = [];
  const queue = {
    send: async (body: T) => void sent.push(body),
    sendBatch: async (messages: Iterable<{ body: T }>) => {
      for (const m of messages) sent.push(m.body);
    },
  } as unknown as Queue;
  return { sent, queue };
}

/**
 * Runs the fan-out consumer on the captured messages, and on the steps they queue, until none is left (each batch
 * as the queue would hand it over); `vars` change its config (a small page). Answers how many steps ran.
 */
export async function drain(captured: ReturnType<typeof capturedQueue<FanoutMessage>>, vars: Partial<Env> = {}) {
  let steps = 0;
  const bindings = { ...env, ...vars, FANOUT: captured.queue };
  while (captured.sent.length) {
    const messages = captured.sent.splice(0).map((body, i) => ({ id: `m${steps + i}`, body, attempts: 1, ack: vi.fn(), retry: vi.fn() }));
    await handleFanout({ queue: "inbox-fanout", messages } as never, bindings);
    for (const m of messages) {
      expect(m.retry).not.toHaveBeenCalled();
      expect(m.ack).toHaveBeenCalledOnce();
    }
    steps += messages.length;
  }
  return steps;
}

/** The inbox items of an account as stored: how many, with their counts. */
export const storedItems = async (accountId: string) =>
  (await env.DB.prepare("SELECT kind, count, collapse_key FROM inbox_items WHERE account_id = ? ORDER BY seq").bind(accountId).all<any>()).results;
