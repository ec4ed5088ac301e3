import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import type { Env } from "../src/env";
import { call, registerBot, registerHuman, unique } from "./helpers";
import {
  MCP_URL,
  ORIGIN,
  REDIRECT,
  authorize,
  callTool,
  connectedApp,
  consentPage,
  exchange,
  mcpPost,
  oneAddress,
  pkce,
  registerClient,
  submitConsent,
  token,
  toolResult,
  workerFetch,
} from "./oauth-flow";
import { get } from "./pages";

/** The red-team of the OAuth surface: each finding, refused as it should be. */

const from = oneAddress;

/** A signed-in person's authorization request for a new client, its browser at one address (`from(bindings)`). */
async function request(bindings?: Partial<Env>) {
  const person = await registerHuman();
  const client = await registerClient();
  const { challenge } = await pkce();
  return { person, a: { clientId: client.client_id, session: person.token, challenge, fetch: from(bindings) } };
}

const LONG = "x".repeat(600);

describe("the authorize page redirects only after the person acted", () => {
  it("answers a request the library refuses with its own 400 page, never a redirect, even to a registered address", async () => {
    const person = await registerHuman();
    const landing = "https://lure.example/landing";
    const client = await registerClient("Lure", [landing]);
    const base = `client_id=${client.client_id}&redirect_uri=${encodeURIComponent(landing)}`;
    for (const query of [
      `${base}&response_type=code`, // no PKCE
      `${base}&response_type=token`,
      `${base}&response_type=code&code_challenge=${"c".repeat(43)}&code_challenge_method=S256&resource=https://other.example/`,
    ]) {
      const signedIn = await get(`/oauth/authorize?${query}`, person.token);
      expect(signedIn.status, query).toBe(400);
      expect(signedIn.headers.get("location"), query).toBeNull();
      expect(signedIn.text).toContain("Start again from the app");
      // A visitor is sent to sign in first, on this site.
      const anonymous = await workerFetch()(`${ORIGIN}/oauth/authorize?${query}`, { redirect: "manual" });
      expect(anonymous.status).toBe(303);
      expect(new URL(anonymous.headers.get("location") ?? "", ORIGIN).origin).toBe(ORIGIN);
    }
  });
});

describe("over-long tokens and client ids", () => {
  it("are refused as unknown by the token endpoint (400 invalid_grant, 401 invalid_client), never a 500", async () => {
    const client = await registerClient();
    const code = await token({
      grant_type: "authorization_code",
      client_id: client.client_id,
      code: `${LONG}:a:b`,
      code_verifier: "v".repeat(43),
      redirect_uri: REDIRECT,
    });
    expect(code.status, JSON.stringify(code.body)).toBe(400);
    expect(code.body.error).toBe("invalid_grant");
    const refresh = await token({ grant_type: "refresh_token", client_id: client.client_id, refresh_token: `${LONG}:a:b` });
    expect(refresh.status, JSON.stringify(refresh.body)).toBe(400);
    expect(refresh.body.error).toBe("invalid_grant");
    const clientId = await token({ grant_type: "refresh_token", client_id: LONG, refresh_token: "a:b:c" });
    expect(clientId.status, JSON.stringify(clientId.body)).toBe(401);
    expect(clientId.body.error).toBe("invalid_client");
    // Revoking a token nobody issued: 200 with nothing done (RFC 7009 §2.2).
    const revoked = await workerFetch()(`${ORIGIN}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: `${LONG}:a:b`, client_id: client.client_id, token_type_hint: "access_token" }),
    });
    expect(revoked.status, await revoked.text()).toBe(200);
  });

  it("are a 400 page on the authorize endpoint and a 401 with the challenge on /mcp", async () => {
    const person = await registerHuman();
    const { challenge } = await pkce();
    const consent = await consentPage({ clientId: LONG, session: person.token, challenge });
    expect(consent.page.status).toBe(400);
    expect(consent.html).toContain("Invalid client_id");
    for (const bearer of [`${LONG}:a:b`, `a:${LONG}:b`, `a:b:${LONG}`]) {
      const res = await mcpPost(bearer);
      expect(res.status, bearer.slice(0, 8)).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("invalid_token");
    }
  });
});

describe("limits on the OAuth endpoints, per client address", () => {
  it("registrations: the next one is 429 temporarily_unavailable with Retry-After; another address is not limited", async () => {
    const here = from({ LIMIT_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR: "1" } as Partial<Env>);
    await registerClient("First", [REDIRECT], here);
    const res = await here(`${ORIGIN}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Second", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await res.json()).toMatchObject({ error: "temporarily_unavailable", error_description: expect.stringContaining("per hour") });
    await registerClient("Elsewhere", [REDIRECT], from({ LIMIT_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR: "1" } as Partial<Env>));
  });

  it("failed token requests, per client and address: after the limit, 429 temporarily_unavailable; a good request from there is served", async () => {
    const here = from({ LIMIT_OAUTH_TOKEN_FAILURES_PER_CLIENT_ADDRESS_PER_HOUR: "2" } as Partial<Env>);
    const client = await registerClient();
    const junk = { grant_type: "authorization_code", client_id: client.client_id, code: "a:b:c", code_verifier: "v".repeat(43), redirect_uri: REDIRECT };
    for (let i = 0; i < 2; i++) expect((await token(junk, here)).status).toBe(400);
    const refused = await token(junk, here);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe("temporarily_unavailable");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const person = await registerHuman();
    const { verifier, challenge } = await pkce();
    const code = await authorize({ clientId: client.client_id, session: person.token, challenge });
    await exchange(client.client_id, code, verifier, here);
  });

  it("/mcp with tokens that are not ours: after the limit, 429 before any look-up; our own credentials are not limited", async () => {
    const limits = { LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR: "2" } as Partial<Env>;
    const here = from(limits);
    for (let i = 0; i < 2; i++) expect((await mcpPost(`a:${i}:c`, undefined, here)).status).toBe(401);
    const refused = await mcpPost("a:2:c", undefined, here);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as any).error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    const bot = await registerBot();
    expect((await toolResult(await callTool(bot.apiKey, "list_stories", {}, here))).result.isError ?? false).toBe(false);
    expect((await mcpPost("a:3:c", undefined, from(limits))).status).toBe(401);
  });

  it("failed authorizations (the consent form): after the limit, 429", async () => {
    const { a } = await request({ LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR: "1" } as Partial<Env>);
    const consent = await consentPage(a);
    expect((await submitConsent(a, { ...consent, handle: "not-the-handle" }, {})).status).toBe(400);
    const refused = await submitConsent(a, consent, {});
    expect(refused.status).toBe(429);
    expect(refused.headers.get("location")).toBeNull();
  });

  it("counts the D1 read behind a KV miss in Server-Timing", async () => {
    const res = await mcpPost("a:b:c");
    expect(res.status).toBe(401);
    expect(res.headers.get("server-timing")).toMatch(/^d1;desc="1 round trip"/);
  });
});

describe("/mcp reads the caller's standing on the primary", () => {
  it("ignores a client's x-d1-bookmark", async () => {
    const constraints: (string | undefined)[] = [];
    const DB = new Proxy(env.DB, {
      get: (target, name) =>
        name === "withSession"
          ? (constraint?: string) => {
              constraints.push(constraint);
              return target.withSession(constraint);
            }
          : Reflect.get(target, name),
    });
    const person = await registerHuman();
    const app = await connectedApp(person.token);
    const bookmark = (await call("/stories")).headers.get("x-d1-bookmark") ?? "";
    expect(bookmark).toBeTruthy();
    const res = await workerFetch({ DB })(MCP_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${app.access_token}`,
        "x-d1-bookmark": bookmark,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_stories", arguments: {} } }),
    });
    expect(res.status).toBe(200);
    expect(constraints.length).toBeGreaterThan(0);
    expect(constraints).not.toContain(bookmark);
    expect(new Set(constraints)).toEqual(new Set(["first-primary"]));
  });
});

describe("a bot made on the consent page", () => {
  it("is a registration: under the registration limit per address (as My bots and POST /auth/bot/register)", async () => {
    const { person, a } = await request({ LIMIT_REGISTRATIONS_PER_ADDRESS_PER_HOUR: "1" } as Partial<Env>);
    const made = await submitConsent(a, await consentPage(a), { identity: "new", new_bot_name: unique("first") });
    expect(made.status).toBe(302);
    const refused = await submitConsent(a, await consentPage(a), { identity: "new", new_bot_name: unique("second") });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("location")).toBeNull();
    expect((await call("/me/bots", { token: person.token })).body.data.count).toBe(1);
    // Approving as someone who already exists makes nobody: not limited.
    expect((await submitConsent(a, await consentPage(a), { identity: "me" })).status).toBe(302);
  });
});

describe("a late failure of the consent leaves nothing half-written", () => {
  it("an app whose metadata document cannot be read at approval: 400, no bot made, its name still free", async () => {
    const clientId = "https://flaky.example/oauth/client.json";
    const document = { client_id: clientId, client_name: "Flaky", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" };
    let reachable = true;
    const realFetch = globalThis.fetch;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url !== clientId) return realFetch(input, init);
      return reachable ? Response.json(document, { headers: { "cache-control": "no-store" } }) : new Response("down", { status: 503 });
    });
    try {
      const person = await registerHuman();
      const { challenge } = await pkce();
      const a = { clientId, session: person.token, challenge };
      const consent = await consentPage(a);
      expect(consent.page.status, consent.html.slice(0, 300)).toBe(200);
      reachable = false;
      const name = unique("flaky");
      const res = await submitConsent(a, consent, { identity: "new", new_bot_name: name });
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect((await call("/me/bots", { token: person.token })).body.data.count).toBe(0);
      expect((await env.DB.prepare("SELECT count(*) AS n FROM oauth_grants WHERE person_id = ?").bind(person.id).first())?.n).toBe(0);
      reachable = true;
      expect((await submitConsent(a, await consentPage(a), { identity: "new", new_bot_name: name })).status).toBe(302);
      expect((await call("/me/bots", { token: person.token })).body.data.bots.map((b: any) => b.name)).toEqual([name]);
    } finally {
      spy.mockRestore();
    }
  });

  it("a new bot's name taken: 409 on the page again (a new handle), no grant recorded; another name then connects", async () => {
    const taken = (await registerBot()).name;
    const { person, a } = await request();
    const res = await submitConsent(a, await consentPage(a), { identity: "new", new_bot_name: taken.toUpperCase() });
    expect(res.status).toBe(409);
    const again = await res.text();
    expect(again).toMatch(/name="handle" value="[^"]+"/);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM oauth_grants WHERE person_id = ?").bind(person.id).first())?.n).toBe(0);
    expect((await call("/me/bots", { token: person.token })).body.data.count).toBe(0);
    const name = unique("fresh");
    expect((await submitConsent(a, await consentPage(a), { identity: "new", new_bot_name: name })).status).toBe(302);
    expect((await call("/me/bots", { token: person.token })).body.data.bots.map((b: any) => b.name)).toEqual([name]);
  });

  it("approving the same app as the same identity again replaces the grant: the old one ended in D1 and refused", async () => {
    const person = await registerHuman();
    const client = await registerClient();
    const { verifier, challenge } = await pkce();
    const first = await exchange(client.client_id, await authorize({ clientId: client.client_id, session: person.token, challenge }), verifier);
    const second = await exchange(client.client_id, await authorize({ clientId: client.client_id, session: person.token, challenge }), verifier);
    const rows = await env.DB.prepare("SELECT id, revoked_at FROM oauth_grants WHERE person_id = ? ORDER BY created_at").bind(person.id).all<any>();
    expect(rows.results.map((r) => [r.id, r.revoked_at !== null])).toEqual([
      [first.access_token.split(":")[1], true],
      [second.access_token.split(":")[1], false],
    ]);
    expect((await callTool(first.access_token, "list_stories")).status).toBe(401);
    expect((await toolResult(await callTool(second.access_token, "list_stories"))).result.isError ?? false).toBe(false);
  });
});

describe("the consent page's write box", () => {
  it("is unticked when the app asks only to read (the person may tick it), ticked when it asks to write or names no scope", async () => {
    const person = await registerHuman();
    const client = await registerClient();
    const { challenge } = await pkce();
    const writeBox = (html: string) => {
      const box = /<input type="checkbox" id="scope-write"[^>]*>/.exec(html)?.[0];
      expect(box, "the write box").toBeTruthy();
      return box!;
    };
    const asked = async (scope?: string) => writeBox((await consentPage({ clientId: client.client_id, session: person.token, challenge, scope })).html);
    expect(await asked("stories:read")).not.toContain("checked");
    expect(await asked("stories:read stories:write")).toContain("checked");
    expect(await asked()).toContain("checked");
    // Ticked by the person, a read-only request is granted writing.
    const app = await connectedApp(person.token, { write: "1" }, "stories:read");
    expect(app.scope.split(" ").sort()).toEqual(["stories:read", "stories:write"]);
  });
});
