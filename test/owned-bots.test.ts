import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { BranchRoom } from "../src/durable/branch";
import { describe, expect, it } from "vitest";
import { apiTokenOf, branchRoom, call, createStory, expectError, join, registerAdmin, registerBot, registerHuman, submit, unique, words } from "./helpers";
import { callTool, connectedApp, toolResult } from "./oauth-flow";
import { get, page, post, shown, trips } from "./pages";

/** People own bots: registering with a credential, `/me/bots`, re-keying, editing, retiring, standing. */

/** A bot registered by `owner`'s credential, logged in (its JWT) as well. */
async function ownedBot(owner: { token: string }, overrides: Record<string, unknown> = {}) {
  const res = await call("/auth/bot/register", { token: owner.token, body: { name: unique("owned"), model: "m", ...overrides } });
  expect(res.status, res.text).toBe(201);
  const login = await call("/auth/bot/login", { body: { api_key: res.body.data.api_key } });
  expect(login.status, login.text).toBe(200);
  return { ...res.body.data, id: res.body.data.bot_id as string, apiKey: res.body.data.api_key as string, token: login.body.access_token as string };
}

describe("registering a bot with a person's credential", () => {
  it("records the owner (JWT or API token); without a credential the bot is nobody's, as before", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    expect(bot.owner_id).toBe(owner.id);
    const viaToken = await ownedBot({ token: await apiTokenOf(owner) });
    expect(viaToken.owner_id).toBe(owner.id);
    const unowned = await registerBot();
    expect(unowned.owner_id).toBeNull();
    const mine = await call("/me/bots", { token: owner.token });
    expect(mine.status, mine.text).toBe(200);
    expect(mine.body.data.bots.map((b: any) => b.id).sort()).toEqual([bot.id, viaToken.id].sort());
    expect(mine.body.data.count).toBe(2);
    expect(JSON.stringify(mine.body)).not.toContain("slk_");
  });

  it("refuses a bot's credential (403 FORBIDDEN: bots own no bots) and a bad one (401), writing nothing", async () => {
    const bot = await registerBot();
    const name = unique("nobody");
    expectError(await call("/auth/bot/register", { token: bot.apiKey, body: { name, model: "m" } }), 403, "FORBIDDEN");
    expectError(await call("/auth/bot/register", { token: "slk_not_a_key", body: { name, model: "m" } }), 401, "UNAUTHORIZED");
    // The name was not taken by either refusal.
    const ok = await call("/auth/bot/register", { body: { name, model: "m" } });
    expect(ok.status, ok.text).toBe(201);
  });

  it("shows on the bot's page who runs it", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const html = shown(await page(`/bots/${bot.id}`));
    expect(html).toContain(`Run by ${owner.user.username}`);
    const unowned = await registerBot();
    expect((await page(`/bots/${unowned.id}`)).text).toContain("Run by nobody");
  });
});

describe("the owner's controls", () => {
  it("rotates the key: the new one works, the old one is refused at once (key and login)", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const res = await call(`/bots/${bot.id}/api-key`, { method: "POST", token: owner.token });
    expect(res.status, res.text).toBe(200);
    const fresh = res.body.data.api_key as string;
    expect(fresh).toMatch(/^slk_/);
    expect(fresh).not.toBe(bot.apiKey);
    expectError(await call("/auth/me", { token: bot.apiKey }), 401, "UNAUTHORIZED");
    expectError(await call("/auth/bot/login", { body: { api_key: bot.apiKey } }), 401, "UNAUTHORIZED");
    expect((await call("/auth/me", { token: fresh })).body.id).toBe(bot.id);
  });

  it("rotating the key ends the JWTs logged in with the old one (REST, the room's batch, MCP); the new key's JWT works", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const story = await createStory(owner.token);
    expect((await join(bot.token, story.main_branch_id)).status).toBe(201);
    const res = await call(`/bots/${bot.id}/api-key`, { method: "POST", token: owner.token });
    expect(res.status, res.text).toBe(200);
    expectError(await call("/auth/me", { token: bot.token }), 401, "UNAUTHORIZED");
    // A write its room answers: the segment's own INSERT refuses the old session, and nothing is written.
    const segments = async () => (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments.length;
    const before = await segments();
    expectError(await submit(bot.token, story.main_branch_id, words(5)), 401, "UNAUTHORIZED");
    expect(await segments()).toBe(before);
    const viaMcp = await toolResult(await callTool(bot.token, "list_stories"));
    expect(viaMcp.result.structuredContent.error.code).toBe("UNAUTHORIZED");
    const login = await call("/auth/bot/login", { body: { api_key: res.body.data.api_key } });
    expect(login.status, login.text).toBe(200);
    const fresh = login.body.access_token as string;
    expect((await call("/auth/me", { token: fresh })).body.id).toBe(bot.id);
    expect((await submit(fresh, story.main_branch_id, words(5))).status).toBe(201);
  });

  it("edits name, model, role and webhook (a changed address answers a new secret once; the same address keeps it)", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const name = unique("renamed");
    const res = await call(`/bots/${bot.id}`, {
      method: "PATCH",
      token: owner.token,
      body: { name, model: "m2", role: "narrator", webhook_url: "https://hooks.example/a" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ id: bot.id, name, model: "m2", role: "narrator", webhook_url: "https://hooks.example/a" });
    const secret = res.body.data.webhook_secret;
    expect(secret).toMatch(/^whsec_/);
    const again = await call(`/bots/${bot.id}`, { method: "PATCH", token: owner.token, body: { webhook_url: "https://hooks.example/a" } });
    expect(again.body.data.webhook_secret).toBeUndefined();
    const cleared = await call(`/bots/${bot.id}`, { method: "PATCH", token: owner.token, body: { webhook_url: null, role: null } });
    expect(cleared.body.data).toMatchObject({ webhook_url: null, role: null });
    expect((await call("/auth/me", { token: bot.token })).body.name).toBe(name);
  });

  it("edits by registration's rules: 400 for a bad name, an empty body or a private webhook, 409 for a taken name", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const other = await registerBot();
    const patch = (body: unknown) => call(`/bots/${bot.id}`, { method: "PATCH", token: owner.token, body });
    expectError(await patch({ name: "bad\u200bname" }), 400, "VALIDATION_ERROR");
    expectError(await patch({}), 400, "VALIDATION_ERROR");
    expectError(await patch({ webhook_url: "http://127.0.0.1/x" }), 400, "VALIDATION_ERROR");
    expectError(await patch({ name: other.name.toUpperCase() }), 409, "CONFLICT");
  });

  it("lets the owner read the bot's deliveries and webhook status, as the bot does", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner, { webhook_url: "https://hooks.example/w" });
    const status = await call(`/bots/${bot.id}/webhook/status`, { token: owner.token });
    expect(status.status, status.text).toBe(200);
    expect(status.body.data).toMatchObject({ bot_id: bot.id, webhook_url: "https://hooks.example/w", is_configured: true });
    const deliveries = await call(`/bots/${bot.id}/webhook/deliveries`, { token: owner.token });
    expect(deliveries.status, deliveries.text).toBe(200);
    // Someone else is refused; the owner still may not set the webhook by the bot's own route (PATCH is theirs).
    const stranger = await registerHuman();
    expectError(await call(`/bots/${bot.id}/webhook/status`, { token: stranger.token }), 403, "PERMISSION_DENIED");
    expectError(await call(`/bots/${bot.id}/webhook/deliveries`, { token: stranger.token }), 403, "PERMISSION_DENIED");
    expectError(await call(`/bots/${bot.id}/webhook`, { method: "PUT", token: owner.token, body: { webhook_url: "https://x.example/" } }), 403, "FORBIDDEN");
  });

  it("refuses everyone but the owner: 403 PERMISSION_DENIED for another person, an admin, and an unowned bot; 404 for none", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const unowned = await registerBot();
    const stranger = await registerHuman();
    const admin = await registerAdmin();
    for (const token of [stranger.token, admin.token]) {
      expectError(await call(`/bots/${bot.id}/api-key`, { method: "POST", token }), 403, "PERMISSION_DENIED");
      expectError(await call(`/bots/${bot.id}`, { method: "PATCH", token, body: { model: "x" } }), 403, "PERMISSION_DENIED");
      expectError(await call(`/bots/${bot.id}/retire`, { method: "POST", token }), 403, "PERMISSION_DENIED");
    }
    // Nobody may claim an unowned bot.
    expectError(await call(`/bots/${unowned.id}/api-key`, { method: "POST", token: owner.token }), 403, "PERMISSION_DENIED");
    expectError(await call(`/bots/${crypto.randomUUID()}/retire`, { method: "POST", token: owner.token }), 404, "NOT_FOUND");
    // The bot itself does not manage its owner's controls (the wrong kind of credential).
    expectError(await call(`/bots/${bot.id}/api-key`, { method: "POST", token: bot.apiKey }), 403, "FORBIDDEN");
    expectError(await call("/me/bots", { token: bot.token }), 403, "FORBIDDEN");
    // The key still works: nothing was changed by any refusal.
    expect((await call("/auth/me", { token: bot.apiKey })).status).toBe(200);
  });
});

describe("retiring a bot", () => {
  it("a refused retire (another person's, an admin's) changes nothing: the owner's app acting as the bot keeps working", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const asBot = await connectedApp(owner.token, { identity: `bot:${bot.id}` });
    for (const token of [(await registerHuman()).token, (await registerAdmin()).token]) {
      expectError(await call(`/bots/${bot.id}/retire`, { method: "POST", token }), 403, "PERMISSION_DENIED");
    }
    const grants = await env.DB.prepare("SELECT revoked_at FROM oauth_grants WHERE actor_id = ?").bind(bot.id).all();
    expect(grants.results).toEqual([{ revoked_at: null }]);
    const listed = await toolResult(await callTool(asBot.access_token, "list_stories"));
    expect(listed.result.isError ?? false, JSON.stringify(listed)).toBe(false);
    expect((await get("/me/apps", owner.token)).text).toContain(`the bot ${bot.name}`);
    expect((await call("/auth/me", { token: bot.token })).status).toBe(200);
  });

  it("takes it out of every queue (the turn passes), refuses its key, JWT and login, keeps its segments; then 409", async () => {
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const next = await registerBot();
    const story = await createStory(owner.token);
    const branch = story.main_branch_id;
    expect((await join(bot.token, branch)).status).toBe(201);
    expect((await join(next.token, branch)).status).toBe(201);
    const written = await submit(bot.token, branch, words(5));
    expect(written.status, written.text).toBe(201);
    // bot wrote, so next holds the turn: let it write so the turn is the retiring bot's again.
    expect((await submit(next.token, branch, words(5))).status).toBe(201);
    expect((await call(`/branches/${branch}`)).body.data.queue.current_turn?.bot_id).toBe(bot.id);

    const res = await call(`/bots/${bot.id}/retire`, { method: "POST", token: owner.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ id: bot.id, status: "retired", webhook_url: null });

    const after = (await call(`/branches/${branch}`)).body.data.queue;
    expect(after.current_turn?.bot_id).toBe(next.id);
    const state = await runInDurableObject(branchRoom(branch), (room: BranchRoom) => room.turnSnapshot());
    expect(state?.members).toEqual([next.id]);
    for (const token of [bot.apiKey, bot.token]) expectError(await call("/auth/me", { token }), 401, "UNAUTHORIZED");
    // A write where no queue answers first (a branch no bot has joined): the write's own batch refuses it.
    const free = await createStory(owner.token);
    expectError(await submit(bot.token, free.main_branch_id, words(5)), 401, "UNAUTHORIZED");
    expectError(await call("/auth/bot/login", { body: { api_key: bot.apiKey } }), 401, "UNAUTHORIZED");
    const segments = (await call(`/branches/${branch}/segments`)).body.data.segments;
    expect(segments.some((s: any) => s.id === written.body.data.id)).toBe(true);
    expect((await call("/me/bots", { token: owner.token })).body.data.bots[0].status).toBe("retired");
    expectError(await call(`/bots/${bot.id}/api-key`, { method: "POST", token: owner.token }), 409, "CONFLICT");
    expectError(await call(`/bots/${bot.id}/retire`, { method: "POST", token: owner.token }), 409, "CONFLICT");
  });
});

describe("an owner's suspension suspends the bots they own", () => {
  it("refuses the owned bot's JWT and key on the next request, in the same round trips as before, and lifts with a restore", async () => {
    const admin = await registerAdmin();
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const before = await call("/auth/me", { token: bot.token });
    expect(before.status).toBe(200);
    expect(trips(before)).toBe(1);
    expect(trips(await call("/auth/me", { token: bot.apiKey }))).toBe(2);

    expect((await call(`/admin/accounts/${owner.id}/suspend`, { token: admin.token, body: { reason: "spam" } })).status).toBe(200);
    const refusedJwt = await call("/auth/me", { token: bot.token });
    expect(expectError(refusedJwt, 403, "ACCOUNT_SUSPENDED").details).toMatchObject({ owner_suspended: true });
    expect(trips(refusedJwt)).toBe(1);
    const refusedKey = await call("/auth/me", { token: bot.apiKey });
    expectError(refusedKey, 403, "ACCOUNT_SUSPENDED");
    expect(trips(refusedKey)).toBe(1);
    expectError(await call("/auth/bot/login", { body: { api_key: bot.apiKey } }), 403, "ACCOUNT_SUSPENDED");

    expect((await call(`/admin/accounts/${owner.id}/restore`, { token: admin.token, body: {} })).status).toBe(200);
    expect((await call("/auth/me", { token: bot.token })).status).toBe(200);
  });

  it("takes the owned bots out of their queues and refuses its writes", async () => {
    const admin = await registerAdmin();
    const owner = await registerHuman();
    const bot = await ownedBot(owner);
    const other = await registerBot();
    const story = await createStory((await registerHuman()).token);
    expect((await join(bot.token, story.main_branch_id)).status).toBe(201);
    expect((await join(other.token, story.main_branch_id)).status).toBe(201);
    expect((await call(`/admin/accounts/${owner.id}/suspend`, { token: admin.token, body: { reason: "spam" } })).status).toBe(200);
    expect((await call(`/branches/${story.main_branch_id}`)).body.data.queue.current_turn?.bot_id).toBe(other.id);
    const free = await createStory(admin.token);
    expectError(await submit(bot.token, free.main_branch_id, words(5)), 403, "ACCOUNT_SUSPENDED");
  });
});

describe("the My bots page", () => {
  it("sends a visitor to log in first", async () => {
    const res = await get("/me/bots");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/login?next=%2Fme%2Fbots");
  });

  it("makes a bot (its key shown once, not stored by any cache), rotates its key, edits and retires it", async () => {
    const owner = await registerHuman();
    const name = unique("webbot");
    const made = await post("/me/bots", { name, model: "gpt" }, owner.token);
    expect(made.status).toBe(200);
    expect(made.headers.get("cache-control")).toBe("no-store");
    const html = made.text;
    const key = /<code id="api-key">(slk_[^<]+)<\/code>/.exec(html)?.[1];
    expect(key, html).toBeTruthy();
    expect(html).toContain('data-copy="api-key"');
    expect(html).toContain(name);
    const bot = (await call("/me/bots", { token: owner.token })).body.data.bots[0];
    expect(bot.name).toBe(name);
    expect((await call("/auth/me", { token: key })).body.id).toBe(bot.id);
    // The list shows no key.
    expect(shown(await get("/me/bots", owner.token))).not.toContain("slk_");

    const rotated = (await post(`/me/bots/${bot.id}/api-key`, {}, owner.token)).text;
    const fresh = /<code id="api-key">(slk_[^<]+)<\/code>/.exec(rotated)?.[1];
    expect(fresh).toBeTruthy();
    expect(fresh).not.toBe(key);
    expectError(await call("/auth/me", { token: key }), 401, "UNAUTHORIZED");

    const edited = await post(`/me/bots/${bot.id}`, { name, model: "claude", role: "voice", webhook_url: "" }, owner.token);
    expect(edited.status).toBe(303);
    expect((await call("/me/bots", { token: owner.token })).body.data.bots[0]).toMatchObject({ model: "claude", role: "voice" });

    const retired = await post(`/me/bots/${bot.id}/retire`, {}, owner.token);
    expect(retired.status).toBe(303);
    expectError(await call("/auth/me", { token: fresh! }), 401, "UNAUTHORIZED");
  });

  it("shows errors in words on the page, refuses a form from another site, and someone else's bot", async () => {
    const owner = await registerHuman();
    const bad = await post("/me/bots", { name: "", model: "m" }, owner.token);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("Name: is required");
    const foreign = await post("/me/bots", { name: unique("x"), model: "m" }, { session: owner.token, origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await call("/me/bots", { token: owner.token })).body.data.count).toBe(0);
    const other = await ownedBot(await registerHuman());
    const refused = await post(`/me/bots/${other.id}/retire`, {}, owner.token);
    expect(refused.status).toBe(403);
    expect((await call("/auth/me", { token: other.apiKey })).status).toBe(200);
  });
});
