import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { describe, expect, it, vi } from "vitest";
import { app } from "../src/app";
import { getDb } from "../src/db/client";
import { outboxStatements, yourTurnMessage } from "../src/domain/events/webhook-events";
import type { BranchRoom } from "../src/durable/branch";
import type { Env } from "../src/env";
import { handleQueue } from "../src/queue/webhooks";
import { sweep } from "../src/queue/sweeper";
import {
  apiTokenOf,
  branchRoom,
  call,
  createStory,
  expectError,
  join,
  registerAdmin,
  registerBot,
  registerHuman,
  storyInput,
  storyWithSegments,
  submit,
  words,
} from "./helpers";
import { COOKIE, ORIGIN, get, post, shown, trips } from "./pages";

/** Account standing: suspended, deleted, demoted and logged-out credentials, whichever kind, whichever door. */

const future = () => new Date(Date.now() + 86_400_000).toISOString();

const suspend = (token: string, id: string, body: Record<string, unknown> = { reason: "spam" }) => call(`/admin/accounts/${id}/suspend`, { token, body });
const restore = (token: string, id: string, body: Record<string, unknown> = {}) => call(`/admin/accounts/${id}/restore`, { token, body });
const setRole = (token: string, id: string, role: string) => call(`/admin/accounts/${id}/role`, { token, body: { role } });

/** One MCP tool call (through the Worker's own fetch, or with some bindings changed). */
async function mcpTool(token: string, name: string, args: Record<string, unknown>, bindings?: Partial<Env>) {
  const transport = new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
    fetch: async (url, init) => {
      if (!bindings) return exports.default.fetch(new Request(url, init));
      const ctx = createExecutionContext();
      const res = await app.request(String(url), init, { ...env, ...bindings }, ctx);
      await waitOnExecutionContext(ctx);
      return res;
    },
    requestInit: { headers: { Authorization: `Bearer ${token}`, "CF-Connecting-IP": "203.0.113.9" } },
  });
  const client = new Client({ name: "standing-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    return (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: any };
  } finally {
    await client.close();
  }
}

const auditOf = (targetId: string) =>
  env.DB.prepare("SELECT actor_id, action, target_type, reason, detail FROM audit_log WHERE target_id = ? ORDER BY created_at").bind(targetId).all();

/** The branch's live stream: its frames as they come (the first is `hello`). */
async function watch(branchId: string) {
  const res = await exports.default.fetch(`https://storyloom.test/api/v1/branches/${branchId}/live`, {
    headers: { Upgrade: "websocket", "CF-Connecting-IP": "198.51.100.9" },
  });
  const ws = res.webSocket!;
  const frames: any[] = [];
  ws.accept();
  ws.addEventListener("message", (e) => e.data !== "pong" && frames.push(JSON.parse(e.data as string)));
  const until = async (n: number) => {
    for (const end = Date.now() + 5000; frames.length < n && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
    expect(frames.length, JSON.stringify(frames)).toBeGreaterThanOrEqual(n);
    return frames;
  };
  await until(1);
  return { ws, until };
}

const queueOf = async (branchId: string) => (await call(`/branches/${branchId}`)).body.data.queue;

describe("a suspension refuses every credential from the next request on", () => {
  it("a human's JWT, API token and web session: 403 ACCOUNT_SUSPENDED on reads, writes, pages and logins; restored, all work again", async () => {
    const admin = await registerAdmin();
    const human = await registerHuman();
    const apiToken = await apiTokenOf(human);
    const { story } = await storyWithSegments();
    const until = future();
    const res = await suspend(admin.token, human.id, { reason: "spam", until });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ id: human.id, type: "human", suspended: true, suspended_until: until, suspension_reason: "spam" });

    for (const token of [human.token, apiToken]) {
      const err = expectError(await call("/auth/me", { token }), 403, "ACCOUNT_SUSPENDED");
      expect(err.details).toEqual({ until, reason: "spam" });
      expectError(await call(`/stories/${story.id}`, { token }), 403, "ACCOUNT_SUSPENDED");
      expectError(await call("/stories", { token, body: storyInput({ title: "never written" }) }), 403, "ACCOUNT_SUSPENDED");
      expectError(await call(`/branches/${story.main_branch_id}/comments`, { token, body: { content: "no" } }), 403, "ACCOUNT_SUSPENDED");
      expectError(await submit(token, story.main_branch_id, words(5)), 403, "ACCOUNT_SUSPENDED");
    }
    const written = await env.DB.prepare("SELECT count(*) AS n FROM stories WHERE owner_id = ?").bind(human.id).first<{ n: number }>();
    expect(written!.n).toBe(0);
    const comments = await env.DB.prepare("SELECT count(*) AS n FROM comments WHERE author_id = ?").bind(human.id).first<{ n: number }>();
    expect(comments!.n).toBe(0);

    // The web reader: the page is asked for again without the cookie (cleared), to be seen signed out;
    // a form answers 403 with the reason, signing nobody in.
    const home = await get("/", human.token);
    expect(home.status).toBe(303);
    expect(home.headers.get("location")).toBe("/");
    expect(home.headers.get("set-cookie")).toMatch(new RegExp(`${COOKIE}=;`));
    const refusedForm = await post(`/branches/${story.main_branch_id}/comments`, { content: "no" }, human.token);
    expect(refusedForm.status).toBe(403);
    const html = refusedForm.text;
    expect(html).toContain("suspended");
    expect(html).not.toContain(human.input.username);
    expect(refusedForm.headers.get("set-cookie")).toMatch(new RegExp(`${COOKIE}=;`));
    // Logging in again is refused too (after the password: a suspension is told only to whoever knows it).
    expectError(await call("/auth/login", { body: { email: human.input.email, password: human.input.password } }), 403, "ACCOUNT_SUSPENDED");
    expectError(await call("/auth/login", { body: { email: human.input.email, password: "wrong password" } }), 401, "UNAUTHORIZED");

    expect((await restore(admin.token, human.id, { reason: "appeal upheld" })).body.data).toMatchObject({ suspended: false, suspended_at: null });
    expect((await call("/auth/me", { token: human.token })).status).toBe(200);
    expect((await call("/auth/me", { token: apiToken })).status).toBe(200);
    expect((await get("/", human.token)).status).toBe(200);
    expect((await call("/auth/login", { body: { email: human.input.email, password: human.input.password } })).status).toBe(200);
    expect((await auditOf(human.id)).results).toEqual([
      { actor_id: admin.id, action: "suspend", target_type: "account", reason: "spam", detail: JSON.stringify({ until }) },
      { actor_id: admin.id, action: "unsuspend", target_type: "account", reason: "appeal upheld", detail: null },
    ]);
  });

  it("a bot's JWT and API key: refused on reads, joins, segments (the room's batch) and MCP; no new token; a suspension that has ended refuses nothing", async () => {
    const admin = await registerAdmin();
    const bot = await registerBot();
    const { story } = await storyWithSegments();
    expect((await suspend(admin.token, bot.id, { reason: "abuse" })).status).toBe(200);
    for (const token of [bot.token, bot.apiKey]) {
      expectError(await call("/auth/me", { token }), 403, "ACCOUNT_SUSPENDED");
      expectError(await join(token, story.main_branch_id), 403, "ACCOUNT_SUSPENDED");
      expectError(await submit(token, story.main_branch_id, words(5)), 403, "ACCOUNT_SUSPENDED");
    }
    const members = await env.DB.prepare("SELECT count(*) AS n FROM branch_members WHERE bot_id = ?").bind(bot.id).first<{ n: number }>();
    expect(members!.n).toBe(0);
    expectError(await call("/auth/bot/login", { body: { api_key: bot.apiKey } }), 403, "ACCOUNT_SUSPENDED");
    // Over MCP, the JWT and the API key get the same answer: a tool error result, never an HTTP refusal.
    for (const credential of [bot.token, bot.apiKey]) {
      const result = await mcpTool(credential, "read_branch", { branch_id: story.main_branch_id });
      expect(result.isError).toBe(true);
      expect(result.structuredContent.error).toMatchObject({ code: "ACCOUNT_SUSPENDED", details: { until: null, reason: "abuse" } });
    }

    // A suspension whose `until` has passed is over without a restore.
    await env.DB.prepare("UPDATE bots SET suspended_until = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), bot.id)
      .run();
    expect((await call("/auth/me", { token: bot.token })).status).toBe(200);
    expect((await join(bot.apiKey, story.main_branch_id)).status).toBe(201);
  });

  it("the room refuses a segment from a session suspended after the Worker let it through (the standing rides in the room's batch)", async () => {
    const admin = await registerAdmin();
    const { owner, story } = await storyWithSegments();
    // A segment by a human makes no D1 trip in the Worker (the room warm): only the room's batch can refuse it.
    expect((await submit(owner.token, story.main_branch_id, words(5))).status).toBe(201);
    const ok = await submit(owner.token, story.main_branch_id, words(5));
    expect(ok.status, ok.text).toBe(201);
    expect(trips(ok)).toBe(1);
    await suspend(admin.token, owner.id);
    const refused = await submit(owner.token, story.main_branch_id, words(5));
    expectError(refused, 403, "ACCOUNT_SUSPENDED");
    const count = await env.DB.prepare("SELECT count(*) AS n FROM segments WHERE author_id = ?").bind(owner.id).first<{ n: number }>();
    expect(count!.n).toBe(1 + 3 + 2); // the starter and initial segments of the story, and the two written before
  });
});

describe("a suspended bot leaves every turn queue at once", () => {
  it("holding the turn: the next bot's turn begins with its your_turn, the live stream is told, the room agrees with D1", async () => {
    const admin = await registerAdmin();
    const { story } = await storyWithSegments();
    const other = await createStory((await registerHuman()).token);
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    const hook = { webhook_url: "https://receiver.test/hook" };
    const [a, b] = [await registerBot(hook), await registerBot(hook)];
    for (const bot of [a, b]) expect((await join(bot.token, story.main_branch_id)).status).toBe(201);
    expect((await join(a.token, other.main_branch_id)).status).toBe(201);
    expect((await queueOf(story.main_branch_id)).current_turn.bot_id).toBe(a.id);
    const live = await watch(story.main_branch_id);

    const res = await suspend(admin.token, a.id, { reason: "spam" });
    expect(res.status, res.text).toBe(200);
    const [, queued, turn] = await live.until(3);
    live.ws.close(1000, "done");
    expect(queued).toMatchObject({ type: "queue", change: "suspended", bot: { bot_id: a.id }, members: [{ bot_id: b.id }] });
    expect(turn).toMatchObject({ type: "turn", reason: "suspended", current_turn: { bot_id: b.id } });
    const queue = await queueOf(story.main_branch_id);
    expect(queue.current_turn.bot_id).toBe(b.id);
    expect(queue.members.map((m: any) => m.bot_id)).toEqual([b.id]);
    expect((await queueOf(other.main_branch_id)).members).toEqual([]);
    const told = await env.DB.prepare("SELECT bot_id, branch_id, event FROM outbox WHERE bot_id = ?").bind(b.id).all();
    expect(told.results).toEqual([{ bot_id: b.id, branch_id: story.main_branch_id, event: "your_turn" }]);
    const snapshot = await runInDurableObject(branchRoom(story.main_branch_id), async (room: BranchRoom) => room.turnSnapshot());
    expect(snapshot).toMatchObject({ members: [b.id], currentTurn: b.id });
    // Restored, it logs in again and rejoins by itself (at the end of the queue).
    await restore(admin.token, a.id);
    const login = await call("/auth/bot/login", { body: { api_key: a.apiKey } });
    expect(login.status).toBe(200);
    expect((await join(login.body.access_token, story.main_branch_id)).body.data).toMatchObject({ your_turn_order: 2, current_turn: b.id });
    vi.restoreAllMocks();
  });

  it("a suspension whose request died before the rooms were told: the sweeper expels the bot", async () => {
    const { story } = await storyWithSegments();
    const [a, b] = [await registerBot(), await registerBot()];
    for (const bot of [a, b]) await join(bot.token, story.main_branch_id);
    // The suspension's batch, without the room calls after it.
    const now = new Date().toISOString();
    await env.DB.batch([
      env.DB.prepare("UPDATE bots SET suspended_at = ?, suspension_reason = 'spam' WHERE id = ?").bind(now, a.id),
      env.DB.prepare(
        "INSERT INTO audit_log (id, actor_id, actor_name, action, target_type, target_id, created_at) VALUES (?, 'x', 'x', 'suspend', 'account', ?, ?)",
      ).bind(crypto.randomUUID(), a.id, now),
    ]);
    const swept = await sweep(env);
    expect(swept.expelled).toBe(1);
    expect((await queueOf(story.main_branch_id)).current_turn.bot_id).toBe(b.id);
  });

  it("…and at once when a warm room begins its turn: the queue's consumer of that your_turn tells the room, which expels it", async () => {
    const { story } = await storyWithSegments();
    const [a, b, c] = [await registerBot(), await registerBot(), await registerBot()];
    for (const bot of [a, b, c]) await join(bot.token, story.main_branch_id);
    // b's suspension reached D1, and its request died before the room heard of it: the warm room still counts b.
    await env.DB.prepare("UPDATE bots SET suspended_at = ?, suspension_reason = 'spam' WHERE id = ?").bind(new Date().toISOString(), b.id).run();
    expect((await submit(a.token, story.main_branch_id, words(4))).status).toBe(201); // the room begins b's turn
    // The consumer expels b (no sweeper run): c holds the turn, b is in no queue.
    const queue = await vi.waitFor(
      async () => {
        const q = await queueOf(story.main_branch_id);
        if (q.current_turn?.bot_id !== c.id) throw new Error(`the turn is ${q.current_turn?.bot_id}`);
        return q;
      },
      { timeout: 8000, interval: 100 },
    );
    expect(JSON.stringify(queue)).not.toContain(b.id);
  });

  it("…and a room that refuses to expel it (its branch is gone) is logged: the delivery is still settled, not retried", async () => {
    const bot = await registerBot({ webhook_url: "https://receiver.test/hook" });
    await env.DB.prepare("UPDATE bots SET suspended_at = ? WHERE id = ?").bind(new Date().toISOString(), bot.id).run();
    const message = yourTurnMessage(bot.id, crypto.randomUUID());
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const [ack, retry] = [vi.fn(), vi.fn()];
    await handleQueue({ queue: "webhooks", messages: [{ id: "m", body: message, attempts: 1, ack, retry }] } as never, env);
    expect(logged.mock.calls.map((c) => String(c[0]))).toEqual([expect.stringContaining('"event":"expel failed"')]);
    expect([ack.mock.calls.length, retry.mock.calls.length]).toEqual([1, 0]);
    logged.mockRestore();
  });

  it("its webhooks stop: a queued delivery is settled undelivered, nothing is sent", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot({ webhook_url: "https://receiver.test/hook" });
    const message = yourTurnMessage(bot.id, story.main_branch_id);
    const db = getDb(env.DB);
    // Queued before the suspension; once suspended, no event of the bot's enters the outbox at all.
    await db.batch([...outboxStatements(db, [message])] as [ReturnType<typeof outboxStatements>[number]]);
    await env.DB.prepare("UPDATE bots SET suspended_at = ? WHERE id = ?").bind(new Date().toISOString(), bot.id).run();
    const later = yourTurnMessage(bot.id, story.main_branch_id);
    await db.batch([...outboxStatements(db, [later])] as [ReturnType<typeof outboxStatements>[number]]);
    expect(await env.DB.prepare("SELECT id FROM outbox WHERE id = ?").bind(later.deliveryId).first()).toBeNull();
    const sent = vi.spyOn(globalThis, "fetch");
    const ack = vi.fn();
    await handleQueue({ queue: "webhooks", messages: [{ id: "m", body: message, attempts: 1, ack, retry: vi.fn() }] } as never, env);
    expect(sent).not.toHaveBeenCalled();
    expect(ack).toHaveBeenCalled();
    const row = await env.DB.prepare("SELECT settled_at FROM outbox WHERE id = ?").bind(message.deliveryId).first<{ settled_at: string | null }>();
    expect(row!.settled_at).not.toBeNull();
    sent.mockRestore();
  });
});

describe("deleted accounts and changed roles", () => {
  it("a deleted account's JWT and API token are refused 401, and write nothing", async () => {
    const human = await registerHuman();
    const apiToken = await apiTokenOf(human);
    const { story } = await storyWithSegments();
    await env.DB.prepare("DELETE FROM users WHERE id = ?").bind(human.id).run();
    expectError(await call("/auth/me", { token: human.token }), 401, "UNAUTHORIZED");
    expectError(await call(`/stories/${story.id}`, { token: human.token }), 401, "UNAUTHORIZED");
    expectError(await call(`/branches/${story.main_branch_id}/comments`, { token: human.token, body: { content: "ghost" } }), 401, "UNAUTHORIZED");
    expectError(await submit(human.token, story.main_branch_id, words(5)), 401, "UNAUTHORIZED");
    expectError(await call("/auth/me", { token: apiToken }), 401, "UNAUTHORIZED");
    const ghost = await env.DB.prepare("SELECT count(*) AS n FROM comments WHERE author_id = ?").bind(human.id).first<{ n: number }>();
    expect(ghost!.n).toBe(0);
  });

  it("a demoted admin's token is a human's: admin routes 403, another's story not theirs to edit; reads go on as a human", async () => {
    const admin = await registerAdmin();
    const { story } = await storyWithSegments();
    const target = await registerHuman();
    await env.DB.prepare("UPDATE users SET user_type = 'human' WHERE id = ?").bind(admin.id).run();
    expectError(await setRole(admin.token, target.id, "moderator"), 403, "FORBIDDEN");
    expectError(await suspend(admin.token, target.id), 403, "FORBIDDEN");
    const me = await call("/auth/me", { token: admin.token });
    expect(me.status).toBe(200);
    expect(me.body.user_type).toBe("human");
    // An edit composed with the token's admin rights is refused, never applied as an admin's.
    const patch = await call(`/stories/${story.id}`, { method: "PATCH", token: admin.token, body: { title: "taken over" } });
    expect(expectError(patch, 401, "AUTH_INVALID_TOKEN").details).toEqual({ reason: "account_changed" });
    expect((await call(`/stories/${story.id}`)).body.data.title).toBe(story.title);
    expect((await auditOf(target.id)).results).toEqual([]);
  });

  it("the moderator role: granted and removed by an admin only, effective on the holder's next request with the same token", async () => {
    const admin = await registerAdmin();
    const mod = await registerHuman();
    const spammer = await registerBot();
    const human = await registerHuman();
    const bot = await registerBot();
    expectError(await suspend(mod.token, spammer.id), 403, "FORBIDDEN");
    const granted = await setRole(admin.token, mod.id, "moderator");
    expect(granted.status, granted.text).toBe(200);
    expect(granted.body.data).toMatchObject({ id: mod.id, type: "human", role: "moderator" });

    expect((await suspend(mod.token, spammer.id)).status).toBe(200);
    expect((await restore(mod.token, spammer.id)).status).toBe(200);
    expectError(await suspend(mod.token, admin.id), 403, "PERMISSION_DENIED");
    expectError(await suspend(mod.token, mod.id), 403, "PERMISSION_DENIED");
    expectError(await suspend(admin.token, admin.id), 403, "PERMISSION_DENIED");
    expectError(await restore(mod.token, admin.id), 403, "PERMISSION_DENIED");
    const nobody = crypto.randomUUID();
    expectError(await suspend(mod.token, nobody), 404, "NOT_FOUND");
    expectError(await restore(mod.token, nobody), 404, "NOT_FOUND");
    expectError(await setRole(admin.token, nobody, "moderator"), 404, "NOT_FOUND");
    expectError(await setRole(mod.token, human.id, "moderator"), 403, "FORBIDDEN");
    expectError(await setRole(admin.token, bot.id, "moderator"), 400, "VALIDATION_ERROR");
    expectError(await setRole(admin.token, admin.id, "moderator"), 400, "VALIDATION_ERROR");
    expectError(await suspend(mod.token, spammer.id, { reason: "x", until: new Date(Date.now() - 1000).toISOString() }), 400, "VALIDATION_ERROR");
    expectError(await suspend(mod.token, spammer.id, {}), 400, "VALIDATION_ERROR");

    expect((await setRole(admin.token, mod.id, "user")).body.data.role).toBe("user");
    expectError(await suspend(mod.token, spammer.id), 403, "FORBIDDEN");
    const audit = (await auditOf(mod.id)).results;
    expect(audit.map((r: any) => [r.action, r.actor_id, JSON.parse(r.detail).role])).toEqual([
      ["role", admin.id, "moderator"],
      ["role", admin.id, "user"],
    ]);
    expect((await auditOf(spammer.id)).results.map((r: any) => [r.action, r.actor_id])).toEqual([
      ["suspend", mod.id],
      ["unsuspend", mod.id],
    ]);
  });

  it("the admin routes take an account id in any letter case, as the report routes do (an admin's `admin-…` id too); a malformed one is 404", async () => {
    const admin = await registerAdmin();
    const other = await registerAdmin();
    const human = await registerHuman();
    const bot = await registerBot();
    const upper = (id: string) => id.toUpperCase();
    const suspended = await suspend(admin.token, upper(bot.id));
    expect(suspended.status, suspended.text).toBe(200);
    expect(suspended.body.data).toMatchObject({ id: bot.id, type: "bot", suspended: true });
    expect((await restore(admin.token, upper(bot.id))).body.data).toMatchObject({ id: bot.id, suspended: false });
    expect((await setRole(admin.token, upper(human.id), "moderator")).body.data).toMatchObject({ id: human.id, role: "moderator" });
    expect((await suspend(admin.token, upper(other.id))).body.data).toMatchObject({ id: other.id, type: "admin", suspended: true });
    expect((await restore(admin.token, upper(other.id))).body.data).toMatchObject({ id: other.id, suspended: false });
    // The self-check compares the stored id: one's own id in capitals is still one's own.
    expectError(await suspend(admin.token, upper(admin.id)), 403, "PERMISSION_DENIED");
    expect((await auditOf(bot.id)).results.map((r: any) => r.action)).toEqual(["suspend", "unsuspend"]);
    // A report names the account the same way.
    expect(
      (await call("/reports", { token: human.token, body: { target_type: "account", target_id: upper(other.id), reason: "spam" } })).body.data,
    ).toMatchObject({
      target_id: other.id,
    });
    for (const bad of ["no%20such%20id", "x".repeat(65)]) {
      expectError(await suspend(admin.token, bad), 404, "NOT_FOUND");
      expectError(await setRole(admin.token, bad, "moderator"), 404, "NOT_FOUND");
    }
  });
});

describe("logout revokes the session's token", () => {
  it("POST /auth/logout: the same JWT is refused on the API, the pages and /mcp; an API token is deleted; an API key is no session", async () => {
    const human = await registerHuman();
    const res = await call("/auth/logout", { method: "POST", token: human.token });
    expect(res.status, res.text).toBe(200);
    expectError(await call("/auth/me", { token: human.token }), 401, "UNAUTHORIZED");
    expectError(await call("/stories", { token: human.token, body: storyInput() }), 401, "UNAUTHORIZED");
    expectError(await call("/auth/logout", { method: "POST", token: human.token }), 401, "UNAUTHORIZED");
    const home = await get("/", human.token);
    expect(home.status).toBe(303); // the page again, signed out
    expect(home.headers.get("set-cookie")).toMatch(new RegExp(`${COOKIE}=;`));
    const { story } = await storyWithSegments();
    const tool = await mcpTool(human.token, "read_branch", { branch_id: story.main_branch_id });
    expect(tool.structuredContent.error.code).toBe("UNAUTHORIZED");
    // Revoked until it would have expired anyway.
    const row = await env.DB.prepare("SELECT account_id, expires_at FROM revoked_sessions WHERE account_id = ?").bind(human.id).first<any>();
    expect(Date.parse(row.expires_at)).toBeGreaterThan(Date.now());
    // Another session of the same account is untouched.
    const again = await call("/auth/login", { body: { email: human.input.email, password: human.input.password } });
    expect((await call("/auth/me", { token: again.body.access_token })).status).toBe(200);

    const apiToken = await apiTokenOf({ token: again.body.access_token });
    expect((await call("/auth/logout", { method: "POST", token: apiToken })).status).toBe(200);
    expectError(await call("/auth/me", { token: apiToken }), 401, "UNAUTHORIZED");
    const bot = await registerBot();
    expectError(await call("/auth/logout", { method: "POST", token: bot.apiKey }), 403, "FORBIDDEN");
    expect((await call("/auth/logout", { method: "POST", token: bot.token })).status).toBe(200);
    expectError(await call("/auth/me", { token: bot.token }), 401, "UNAUTHORIZED");
  });

  it("the web reader's logout revokes the cookie's token on the server, not only in the browser", async () => {
    const human = await registerHuman();
    const login = await post("/login", { email: human.input.email, password: human.input.password });
    const session = new RegExp(`${COOKIE}=([^;]+)`).exec(login.headers.get("set-cookie") ?? "")?.[1];
    expect(session).toBeTruthy();
    expect((await get("/", session!)).status).toBe(200);
    const out = await post("/logout", {}, session);
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(new RegExp(`${COOKIE}=;`));
    // A copy of the cookie signs nobody in, on the pages or as a bearer on the API.
    expect((await get("/", session!)).status).toBe(303); // the page again, signed out
    expectError(await call("/auth/me", { token: session }), 401, "UNAUTHORIZED");
    // Logging out a session already refused just clears the cookie.
    expect((await post("/logout", {}, session)).status).toBe(303);
  });

  it("the sweeper prunes revoked sessions once their tokens have expired anyway", async () => {
    const expired = crypto.randomUUID();
    const live = crypto.randomUUID();
    await env.DB.batch([
      env.DB.prepare("INSERT INTO revoked_sessions (jti, account_id, expires_at) VALUES (?, 'a', ?)").bind(expired, new Date(Date.now() - 1000).toISOString()),
      env.DB.prepare("INSERT INTO revoked_sessions (jti, account_id, expires_at) VALUES (?, 'a', ?)").bind(live, future()),
    ]);
    await sweep(env);
    const left = await env.DB.prepare("SELECT jti FROM revoked_sessions WHERE jti IN (?, ?)").bind(expired, live).all();
    expect(left.results).toEqual([{ jti: live }]);
  });
});

describe("the standing check's round trips", () => {
  it("a read with a JWT is one trip, the check inside it: a suspended account's read is refused in that same one trip", async () => {
    const admin = await registerAdmin();
    const human = await registerHuman();
    const { story } = await storyWithSegments();
    const read = await call(`/stories/${story.id}`, { token: human.token });
    expect(read.status).toBe(200);
    expect(trips(read)).toBe(1);
    const page200 = await get(`/stories/${story.id}`, human.token);
    expect(page200.status).toBe(200);
    expect(trips(page200)).toBe(1);
    await suspend(admin.token, human.id);
    const refused = await call(`/stories/${story.id}`, { token: human.token });
    expectError(refused, 403, "ACCOUNT_SUSPENDED");
    expect(trips(refused)).toBe(1);
    // An API token's look-up carries its standing: no trip more than before.
    const other = await registerHuman();
    expect(trips(await call(`/stories/${story.id}`, { token: await apiTokenOf(other) }))).toBe(2);
    // An admin route's moderator check rides in its first trip too: a suspend is a read and a write.
    const bot = await registerBot();
    expect(trips(await suspend(admin.token, bot.id))).toBe(2);
  });
});

describe("standing on every call: leave, wait, re-join and replays", () => {
  const leave = (token: string, branchId: string) => call(`/branches/${branchId}/leave`, { token, method: "POST" });
  const logout = (token: string) => call("/auth/logout", { method: "POST", token });
  const members = async (branchId: string) => (await queueOf(branchId)).members.map((m: any) => m.bot_id);

  it("a logged-out bot's JWT: leave (REST and MCP) is 401 and passes no turn; wait_for_turn and a re-join are 401", async () => {
    const { story } = await storyWithSegments();
    const [a, b] = [await registerBot(), await registerBot()];
    for (const bot of [a, b]) expect((await join(bot.token, story.main_branch_id)).status).toBe(201);
    expect((await logout(a.token)).status).toBe(200);

    expectError(await leave(a.token, story.main_branch_id), 401, "UNAUTHORIZED");
    const left = await mcpTool(a.token, "leave_branch", { branch_id: story.main_branch_id });
    expect(left.structuredContent.error.code).toBe("UNAUTHORIZED");
    const waited = await mcpTool(a.token, "wait_for_turn", { branch_id: story.main_branch_id, timeout_seconds: 1 });
    expect(waited.structuredContent.error.code).toBe("UNAUTHORIZED");
    expectError(await join(a.token, story.main_branch_id), 401, "UNAUTHORIZED");
    const rejoined = await mcpTool(a.token, "join_branch", { branch_id: story.main_branch_id });
    expect(rejoined.structuredContent.error.code).toBe("UNAUTHORIZED");

    // Nothing moved: a still holds the turn, in D1 and in the room; nobody was told it begins.
    expect(await members(story.main_branch_id)).toEqual([a.id, b.id]);
    expect((await queueOf(story.main_branch_id)).current_turn.bot_id).toBe(a.id);
    const snapshot = await runInDurableObject(branchRoom(story.main_branch_id), async (room: BranchRoom) => room.turnSnapshot());
    expect(snapshot).toMatchObject({ members: [a.id, b.id], currentTurn: a.id });
    // Its API key is no session: it still leaves, and the turn passes.
    expect((await leave(a.apiKey, story.main_branch_id)).status).toBe(200);
    expect((await queueOf(story.main_branch_id)).current_turn.bot_id).toBe(b.id);
  });

  it("a keyed re-join of a queued bot with a logged-out JWT is 401 and stores no answer under its key (REST and MCP)", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    expect((await join(bot.token, story.main_branch_id)).status).toBe(201);
    expect((await logout(bot.token)).status).toBe(200);
    const rejoin = call(`/branches/${story.main_branch_id}/join`, { token: bot.token, body: {}, headers: { "Idempotency-Key": "rejoin-after-logout" } });
    expectError(await rejoin, 401, "UNAUTHORIZED");
    const viaMcp = await mcpTool(bot.token, "join_branch", { branch_id: story.main_branch_id, idempotency_key: "mcp-rejoin-after-logout" });
    expect(viaMcp.structuredContent.error.code).toBe("UNAUTHORIZED");
    const stored = await env.DB.prepare("SELECT count(*) AS n FROM idempotency_keys WHERE actor_id = ?").bind(bot.id).first<{ n: number }>();
    expect(stored!.n).toBe(0);
  });

  it("a suspended bot's JWT: leave (REST and MCP) and wait_for_turn are 403 ACCOUNT_SUSPENDED, not NOT_FOUND", async () => {
    const admin = await registerAdmin();
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    expect((await join(bot.token, story.main_branch_id)).status).toBe(201);
    expect((await suspend(admin.token, bot.id, { reason: "abuse" })).status).toBe(200); // it left every queue
    for (const token of [bot.token, bot.apiKey]) {
      expectError(await leave(token, story.main_branch_id), 403, "ACCOUNT_SUSPENDED");
      for (const [tool, args] of [
        ["leave_branch", {}],
        ["wait_for_turn", { timeout_seconds: 1 }],
      ] as const) {
        const result = await mcpTool(token, tool, { branch_id: story.main_branch_id, ...args });
        expect(result.structuredContent.error, `${tool}`).toMatchObject({ code: "ACCOUNT_SUSPENDED", details: { reason: "abuse" } });
      }
    }
  });

  it("a suspension the room has not heard of (its request died): the leave is refused in the room's batch and writes nothing", async () => {
    const { story } = await storyWithSegments();
    const [a, b] = [await registerBot(), await registerBot()];
    for (const bot of [a, b]) await join(bot.token, story.main_branch_id);
    await env.DB.prepare("UPDATE bots SET suspended_at = ?, suspension_reason = 'spam' WHERE id = ?").bind(new Date().toISOString(), a.id).run();
    expectError(await leave(a.token, story.main_branch_id), 403, "ACCOUNT_SUSPENDED");
    expect(await members(story.main_branch_id)).toEqual([a.id, b.id]);
    const told = await env.DB.prepare("SELECT count(*) AS n FROM outbox WHERE bot_id = ?").bind(b.id).first<{ n: number }>();
    expect(told!.n).toBe(0);
  });

  it("a refusal answered without a D1 trip of the request's own (the room's NOT_YOUR_TURN): a logged-out bot's JWT is 401 and a suspended bot's 403, REST and MCP", async () => {
    const admin = await registerAdmin();
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const [a, b, c] = [await registerBot(), await registerBot(), await registerBot()];
    for (const bot of [a, b, c]) expect((await join(bot.token, branch)).status).toBe(201);
    const write = (token: string) => mcpTool(token, "write_segment", { branch_id: branch, content: words(4) });
    // In good standing, out of turn: NOT_YOUR_TURN, from the room's memory.
    expectError(await submit(b.token, branch, words(4)), 403, "NOT_YOUR_TURN");
    expect((await write(b.token)).structuredContent.error.code).toBe("NOT_YOUR_TURN");

    expect((await logout(b.token)).status).toBe(200);
    const loggedOut = expectError(await submit(b.token, branch, words(4)), 401, "UNAUTHORIZED");
    expect(JSON.stringify(loggedOut)).not.toContain(a.id); // nothing of the queue
    expect((await write(b.token)).structuredContent.error.code).toBe("UNAUTHORIZED");

    expect((await suspend(admin.token, c.id)).status).toBe(200); // it left the queue: the room would say "join first"
    expectError(await submit(c.token, branch, words(4)), 403, "ACCOUNT_SUSPENDED");
    expect((await write(c.token)).structuredContent.error.code).toBe("ACCOUNT_SUSPENDED");
    expect((await queueOf(branch)).current_turn.bot_id).toBe(a.id);
  });

  it("a refusal of the account's gate (a limit): a logged-out JWT over its hourly limit is 401, not 429, REST and MCP", async () => {
    const human = await registerHuman();
    const limited = { LIMIT_STORIES_PER_HOUR: "0" };
    expectError(await call("/stories", { token: human.token, body: storyInput(), env: limited }), 429, "RATE_LIMIT_EXCEEDED");
    expect((await logout(human.token)).status).toBe(200);
    expectError(await call("/stories", { token: human.token, body: storyInput(), env: limited }), 401, "UNAUTHORIZED");
    const refused = await mcpTool(human.token, "create_story", storyInput(), limited);
    expect(refused.structuredContent.error.code).toBe("UNAUTHORIZED");
  });

  it("an Idempotency-Key replay answers only a credential in good standing: 401 once logged out, 403 once suspended (REST and MCP)", async () => {
    const admin = await registerAdmin();
    const human = await registerHuman();
    const body = storyInput();
    const send = (token: string) => call("/stories", { token, body, headers: { "Idempotency-Key": "story-replayed" } });
    const first = await send(human.token);
    expect(first.status, first.text).toBe(201);
    const replay = await send(human.token);
    expect(replay.status).toBe(201);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await logout(human.token)).status).toBe(200);
    expectError(await send(human.token), 401, "UNAUTHORIZED");

    const login = await call("/auth/login", { body: { email: human.input.email, password: human.input.password } });
    const token = login.body.access_token as string;
    const args = { ...storyInput(), idempotency_key: "mcp-story-replayed" };
    expect((await mcpTool(token, "create_story", args)).isError).toBeFalsy();
    expect((await mcpTool(token, "create_story", args)).isError).toBeFalsy();
    expect((await suspend(admin.token, human.id)).status).toBe(200);
    expectError(await send(token), 403, "ACCOUNT_SUSPENDED");
    expect((await mcpTool(token, "create_story", args)).structuredContent.error.code).toBe("ACCOUNT_SUSPENDED");
  });
});

describe("a suspended account may still log out; a refused browser session sees the pages signed out", () => {
  it("POST /auth/logout with a suspended account's JWT or API token: 200, and the credential stays refused once restored", async () => {
    const admin = await registerAdmin();
    const human = await registerHuman();
    const apiToken = await apiTokenOf(human);
    const bot = await registerBot();
    for (const id of [human.id, bot.id]) expect((await suspend(admin.token, id)).status).toBe(200);
    for (const token of [human.token, apiToken, bot.token]) {
      const out = await call("/auth/logout", { method: "POST", token });
      expect(out.status, out.text).toBe(200);
      expectError(await call("/auth/me", { token }), 401, "UNAUTHORIZED"); // logged out: said before the suspension
    }
    expectError(await call("/auth/logout", { method: "POST", token: bot.apiKey }), 403, "FORBIDDEN"); // a key is no session
    for (const id of [human.id, bot.id]) expect((await restore(admin.token, id)).status).toBe(200);
    for (const token of [human.token, apiToken, bot.token]) expectError(await call("/auth/me", { token }), 401, "UNAUTHORIZED");
    // A logged-out session cannot log out again, suspended or not.
    expectError(await call("/auth/logout", { method: "POST", token: human.token }), 401, "UNAUTHORIZED");
  });

  it("the web reader's logout of a suspended session revokes its token too", async () => {
    const admin = await registerAdmin();
    const human = await registerHuman();
    await suspend(admin.token, human.id);
    const out = await post("/logout", {}, human.token);
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toMatch(new RegExp(`${COOKIE}=;`));
    await restore(admin.token, human.id);
    expectError(await call("/auth/me", { token: human.token }), 401, "UNAUTHORIZED");
  });

  it("a revoked or suspended cookie on a public page: the page again without it (303 to itself, the cookie cleared), then signed out", async () => {
    const admin = await registerAdmin();
    const { story } = await storyWithSegments();
    const [revoked, suspended] = [await registerHuman(), await registerHuman()];
    expect((await call("/auth/logout", { method: "POST", token: revoked.token })).status).toBe(200);
    await suspend(admin.token, suspended.id);
    for (const human of [revoked, suspended]) {
      for (const path of ["/", `/stories/${story.id}?x=1`, `/branches/${story.main_branch_id}`]) {
        const res = await get(path, human.token);
        expect(res.status, path).toBe(303);
        expect(res.headers.get("location")).toBe(path);
        expect(res.headers.get("set-cookie")).toMatch(new RegExp(`${COOKIE}=;`));
        const html = shown(await get(path));
        expect(html).not.toContain(human.input.username);
        expect(html).toContain("Log in");
      }
      // A page that needs a sign-in: the same, then the usual way to the login.
      const admin404 = await get("/admin", human.token);
      expect(admin404.status).toBe(303);
      expect(admin404.headers.get("location")).toBe("/admin");
    }
  });
});
