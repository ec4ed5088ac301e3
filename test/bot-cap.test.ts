import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, expectError, registerHuman, unique } from "./helpers";
import { authorize, consentPage, pkce, registerClient, submitConsent, workerFetch } from "./oauth-flow";
import { ORIGIN, get, post } from "./pages";

/**
 * Bots per owner are capped (`LIMIT_BOTS_PER_OWNER`, live bots; retired ones do not count) wherever a person makes
 * one: the API, "My bots", the consent page's new bot. Retire and Revoke ask before they act.
 */

const CAP = { LIMIT_BOTS_PER_OWNER: "2" };

const register = (token: string, name = unique("capped"), limit: Record<string, string> = CAP) =>
  call("/auth/bot/register", { token, body: { name, model: "m" }, env: limit });
/** At wrangler.toml's cap, as the pages see it. */
const fillUp = async (token: string) => {
  for (let i = 0; i < 10; i++) expect((await register(token, unique("full"), {})).status).toBe(201);
};

describe("bots per owner", () => {
  it("the API refuses a bot past the cap with 409 CONFLICT (reason bot_limit), writing nothing; a retired bot makes room; unowned bots are not capped", async () => {
    const owner = await registerHuman();
    const first = await register(owner.token);
    expect(first.status).toBe(201);
    expect((await register(owner.token)).status).toBe(201);
    const name = unique("third");
    const over = expectError(await register(owner.token, name), 409, "CONFLICT");
    expect(over.details).toEqual({ reason: "bot_limit", limit: 2, bots: 2 });
    expect(over.message).toContain("retire one first");
    expect((await call("/me/bots", { token: owner.token })).body.data.count).toBe(2);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM bots WHERE name = ?").bind(name).first("n")).toBe(0);
    // A taken name is still a taken name (409 naming the field), not the cap.
    expect((await call(`/bots/${first.body.data.bot_id}/retire`, { method: "POST", token: owner.token })).status).toBe(200);
    const taken = expectError(await register(owner.token, first.body.data.name), 409, "CONFLICT");
    expect(taken.details).toEqual({ field: "name" });
    expect((await register(owner.token)).status).toBe(201);
    // Nobody's bots (no credential) are not anyone's to count.
    const unowned = await call("/auth/bot/register", { body: { name: unique("free"), model: "m" }, env: { LIMIT_BOTS_PER_OWNER: "0" } });
    expect(unowned.status).toBe(201);
  });

  it("the cap holds under concurrency: 5 registrations at once with room for 2 make exactly 2", async () => {
    const owner = await registerHuman();
    const results = await Promise.all(Array.from({ length: 5 }, () => register(owner.token)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 409, 409, 409]);
    expect((await call("/me/bots", { token: owner.token })).body.data.count).toBe(2);
  });

  it("My bots says the cap, and shows the refusal in words inside the form", async () => {
    const owner = await registerHuman();
    const list = (await get("/me/bots", owner.token)).text;
    expect(list).toContain("You may have up to 10 bots at once (0 now)");
    await fillUp(owner.token);
    const refused = await post("/me/bots", { name: unique("eleventh"), model: "m" }, owner.token);
    expect(refused.status).toBe(409);
    const html = refused.text;
    expect(html).toContain("You have 10 bots, the most one person may have at once (10): retire one first");
    expect(html).toContain("(10 now)");
  });

  it("the consent page's new bot past the cap is a form error before the handle is spent; the same form then approves as the person", async () => {
    const owner = await registerHuman();
    await fillUp(owner.token);
    const client = await registerClient();
    const { challenge } = await pkce();
    const a = { clientId: client.client_id, session: owner.token, challenge };
    const consent = await consentPage(a);
    const refused = await submitConsent(a, consent, { identity: "new", new_bot_name: unique("overflow") });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("retire one first");
    expect((await call("/me/bots", { token: owner.token })).body.data.count).toBe(10);
    const again = await submitConsent(a, consent, { identity: "me" });
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get("location") ?? "").searchParams.get("code")).toBeTruthy();
  });
});

describe("Retire and Revoke ask first", () => {
  it("My bots: 'Retire …' opens a question whose own button retires; Connected apps: the same for Revoke, each app with when and where", async () => {
    const owner = await registerHuman();
    const bot = (await register(owner.token)).body.data;
    const bots = (await get("/me/bots", owner.token)).text;
    expect(bots).toMatch(new RegExp(`<details class="fold"><summary>Retire ${bot.name}…</summary>[\\s\\S]*?Yes, retire ${bot.name}</button>`));
    expect(bots).not.toContain(`>Retire ${bot.name}</button>`);
    const client = await registerClient("Twin App", ["https://one.example/cb"]);
    const twin = await registerClient("Twin App", ["http://127.0.0.1:4411/cb"]);
    const connect = async (clientId: string, redirectUri: string) => {
      const { verifier, challenge } = await pkce();
      const code = await authorize({ clientId, session: owner.token, challenge, redirectUri });
      const res = await workerFetch()(`${ORIGIN}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri }),
      });
      expect(res.status).toBe(200);
    };
    await connect(client.client_id, "https://one.example/cb");
    await connect(twin.client_id, "http://127.0.0.1:4411/cb");
    const apps = (await get("/me/apps", owner.token)).text;
    expect(apps).toContain("sends access to <strong>one.example</strong>");
    expect(apps).toContain("sends access to <strong>127.0.0.1:4411</strong>");
    expect(apps.match(/<summary>Revoke Twin App…<\/summary>/g)).toHaveLength(2);
    expect(apps).toContain("Yes, revoke Twin App</button>");
  });
});
