import { env, exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { expect, vi } from "vitest";
import { BASE, call, registerBot, registerHuman } from "./helpers";
import { ORIGIN } from "./pages";

/** What the moderation tests share (test/hide.test.ts, test/hide-leaks.test.ts): moderators, hiding, and every door. */

/** A human made a moderator (the role is set in D1, as an admin's route would). */
export async function moderator() {
  const human = await registerHuman();
  await env.DB.prepare("UPDATE users SET role = 'moderator' WHERE id = ?").bind(human.id).run();
  return human;
}

export const hide = (token: string | undefined, type: string, id: string, reason = "spam") => call(`/admin/${type}/${id}/hide`, { token, body: { reason } });
export const restore = (token: string | undefined, type: string, id: string) => call(`/admin/${type}/${id}/restore`, { token, method: "POST" });

export async function waitFor<T>(fn: () => T | undefined, ms = 8000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const v = fn();
    if (v) return v;
  }
  throw new Error("timed out waiting");
}

/** The live stream's frames from an upgrade through the Worker. */
export async function live(branchId: string, query = "") {
  const res = await exports.default.fetch(
    new Request(`${BASE}/branches/${branchId}/live${query}`, { headers: { Upgrade: "websocket", "CF-Connecting-IP": "198.51.100.9" } }),
  );
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  const frames: any[] = [];
  const raw: string[] = [];
  ws.accept();
  ws.addEventListener("message", (e) => {
    raw.push(e.data as string);
    frames.push(JSON.parse(e.data as string));
  });
  return { frames, raw, close: () => ws.close(1000, "done") };
}

const realFetch = globalThis.fetch;
/**
 * A fake webhook receiver: what the service POSTs to https://receiver.test/… (undone by `vi.restoreAllMocks()`),
 * answered with the status `status()` gives (200 unless told).
 */
export function receiver(status: () => number = () => 200) {
  const received: { url: string; body: string }[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (!url.startsWith("https://receiver.test/")) return realFetch(input, init);
    received.push({ url, body: String(init!.body) });
    return new Response("ok", { status: status() });
  });
  return received;
}

const clients: Client[] = [];

/** Closes the MCP clients the test opened (call it in `afterEach`). */
export const closeClients = () => Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));

/** An MCP client as a host runs it (the SDK's own), anonymous or with a credential. */
let bystanderKey: Promise<string> | undefined;
/** A bot that wrote nothing and moderates nothing: `/mcp` takes no call without a credential, so it reads as a stranger would. */
const bystander = () => (bystanderKey ??= registerBot().then((b) => b.apiKey as string));

export async function mcpClient(token?: string) {
  const headers: Record<string, string> = { "CF-Connecting-IP": "203.0.113.5" };
  headers.Authorization = `Bearer ${token ?? (await bystander())}`;
  const transport = new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
    fetch: (url, init) => exports.default.fetch(String(url), init),
    requestInit: { headers },
  });
  const client = new Client({ name: "hide-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A tool's result over MCP (as a bystander unless `token`), and its JSON. */
export async function mcpTool(name: string, args: Record<string, unknown>, token?: string) {
  const client = await mcpClient(token);
  const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any; content: { text?: string }[] };
  return { json: JSON.stringify(result), result };
}
