import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { registerHuman } from "./helpers";
import type { Env } from "../src/env";
import {
  MCP_URL,
  ORIGIN,
  REDIRECT,
  authorize,
  callTool,
  connectedApp,
  exchange,
  oneAddress,
  mcpPost,
  pkce,
  publicClient,
  registerClient,
  token,
  toolResult,
  workerFetch,
} from "./oauth-flow";
import { get } from "./pages";

/** The token endpoint's hardening: refresh-token reuse, limits a shared host cannot trip, PKCE for every client. */

afterEach(() => vi.restoreAllMocks());

type App = Awaited<ReturnType<typeof connectedApp>>;
const refresh = (app: Pick<App, "client">, refreshToken: string, fetch = workerFetch()) =>
  token({ grant_type: "refresh_token", client_id: app.client.client_id, refresh_token: refreshToken }, fetch);

/** Tools answer for a live grant; a grant ended is 401 with the challenge. */
const callStatus = async (accessToken: string) => {
  const res = await callTool(accessToken, "list_stories");
  if (res.status !== 200) return res.status;
  return (await toolResult(res)).result?.isError ? "tool error" : 200;
};

const revokedAt = async (accessToken: string) =>
  (await env.DB.prepare("SELECT revoked_at FROM oauth_grants WHERE id = ?").bind(accessToken.split(":")[1]).first<{ revoked_at: string | null }>())
    ?.revoked_at ?? null;

/** Moves the clock `seconds` on, for this test's requests (they run in this isolate). */
function later(seconds: number) {
  const now = Date.now();
  vi.spyOn(Date, "now").mockImplementation(() => now + seconds * 1000);
}

describe("refresh-token reuse", () => {
  it("within the grace, a rotated token answers the very answer it got: the client's current tokens keep working", async () => {
    const app = await connectedApp((await registerHuman()).token);
    const first = await refresh(app, app.refresh_token);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const lost = await refresh(app, app.refresh_token);
    expect(lost.status, JSON.stringify(lost.body)).toBe(200);
    expect(lost.body.refresh_token).toBe(first.body.refresh_token);
    expect(lost.body.access_token).toBe(first.body.access_token);
    expect(lost.body.expires_in).toBeGreaterThan(3500);
    expect(lost.body.scope).toBe(first.body.scope);
    expect(lost.headers.get("cache-control")).toBe("no-store");
    // Nothing was killed: the current access token calls, the current refresh token refreshes.
    expect(await callStatus(first.body.access_token)).toBe(200);
    const next = await refresh(app, first.body.refresh_token);
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(await callStatus(next.body.access_token)).toBe(200);
  });

  it("after the grace, a rotated token is refused and ends the grant: its current access and refresh tokens stop", async () => {
    const app = await connectedApp((await registerHuman()).token);
    const current = await refresh(app, app.refresh_token);
    expect(current.status).toBe(200);
    later(31);
    const reused = await refresh(app, app.refresh_token);
    expect(reused.status, JSON.stringify(reused.body)).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    expect(await revokedAt(app.access_token)).not.toBeNull();
    expect(await callStatus(current.body.access_token)).toBe(401);
    const after = await refresh(app, current.body.refresh_token);
    expect(after.status).toBe(400);
    expect(after.body.error).toBe("invalid_grant");
  });

  it("a token rotated before the last one is a reuse at once, and ends the grant", async () => {
    const app = await connectedApp((await registerHuman()).token);
    const second = await refresh(app, app.refresh_token);
    const third = await refresh(app, second.body.refresh_token);
    expect(third.status).toBe(200);
    const reused = await refresh(app, app.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("invalid_grant");
    expect(await callStatus(third.body.access_token)).toBe(401);
    expect((await refresh(app, third.body.refresh_token)).status).toBe(400);
  });

  it("a rotated token presented by another client is refused and ends the grant; a junk token of the grant ends nothing", async () => {
    const person = await registerHuman();
    const app = await connectedApp(person.token);
    const other = await connectedApp(person.token);
    const current = await refresh(app, app.refresh_token);
    const [userId, grantId] = app.refresh_token.split(":");
    const junk = await refresh(app, `${userId}:${grantId}:${"x".repeat(32)}`);
    expect(junk.status).toBe(400);
    expect(await callStatus(current.body.access_token)).toBe(200);
    const stolen = await refresh(other, app.refresh_token);
    expect(stolen.status).toBe(400);
    expect(stolen.body.access_token).toBeUndefined();
    expect(await callStatus(current.body.access_token)).toBe(401);
  });
  it("a rotation whose record cannot be written still answers the new tokens (never a 500)", async () => {
    const app = await connectedApp((await registerHuman()).token);
    const real = env.OAUTH_KV;
    const OAUTH_KV = {
      get: (key: string, options?: any) => real.get(key, options),
      getWithMetadata: (key: string, options?: any) => real.getWithMetadata(key, options),
      list: (options?: KVNamespaceListOptions) => real.list(options),
      delete: (key: string) => real.delete(key),
      put: (key: string, value: string, options?: KVNamespacePutOptions) =>
        key.startsWith("rotation:") ? Promise.reject(new Error("KV down")) : real.put(key, value, options),
    } as unknown as KVNamespace;
    const res = await refresh(app, app.refresh_token, workerFetch({ OAUTH_KV }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await callStatus(res.body.access_token)).toBe(200);
  });
});

describe("PKCE for every client", () => {
  /** A self-registered confidential client: its id and secret. */
  async function confidentialClient() {
    const res = await workerFetch()(`${ORIGIN}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Server Host", redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_basic" }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { client_id: string; client_secret: string };
  }

  it("a confidential client asking without a code_challenge is refused (400 page, no redirect, no code)", async () => {
    const person = await registerHuman();
    const client = await confidentialClient();
    const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, state: "s", resource: MCP_URL });
    const res = await get(`/oauth/authorize?${query}`, person.token);
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(res.text).toContain("PKCE is required of every client");
    // With `plain`, as the metadata says S256 only.
    query.set("code_challenge", "c".repeat(43));
    query.set("code_challenge_method", "plain");
    expect((await get(`/oauth/authorize?${query}`, person.token)).status).toBe(400);
  });

  it("with S256 it connects: the code is redeemed with its secret and the verifier", async () => {
    const person = await registerHuman();
    const client = await confidentialClient();
    const { verifier, challenge } = await pkce();
    const code = await authorize({ clientId: client.client_id, session: person.token, challenge });
    const res = await workerFetch()(`${ORIGIN}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}` },
      body: new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT, resource: MCP_URL }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await callStatus(((await res.json()) as { access_token: string }).access_token)).toBe(200);
  });
});

describe("a shared address: junk cannot lock out live grants", () => {
  const junkCode = (clientId: string, i: number) => ({
    grant_type: "authorization_code",
    client_id: clientId,
    code: `u:g${i}:${"j".repeat(32)}`,
    code_verifier: "v".repeat(43),
    redirect_uri: REDIRECT,
  });

  it("after 50 junk codes for a client from an address, its junk is 429 there, but a valid refresh and code exchange are served", async () => {
    // The numbers of wrangler.toml (and the per-address one other OAuth failures still count under).
    const host = oneAddress({
      LIMIT_OAUTH_TOKEN_FAILURES_PER_CLIENT_ADDRESS_PER_HOUR: "50",
      LIMIT_OAUTH_TOKEN_FAILURES_PER_ADDRESS_PER_HOUR: "1000",
      LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR: "50",
    } as Partial<Env>);
    const app = await connectedApp((await registerHuman()).token);
    const clientId = app.client.client_id;
    for (let i = 0; i < 50; i++) expect((await token(junkCode(clientId, i), host)).status).toBe(400);
    const limited = await token(junkCode(clientId, 50), host);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe("temporarily_unavailable");
    // The people's grants are served from there all the same, and count nothing.
    const refreshed = await refresh(app, app.refresh_token, host);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    const { verifier, challenge } = await pkce();
    const code = await authorize({ clientId, session: (await registerHuman()).token, challenge });
    expect((await exchange(clientId, code, verifier, host)).access_token).toBeTruthy();
    // A used code names no live grant any more: limited like junk.
    const again = await token({ ...junkCode(clientId, 0), code, code_verifier: verifier, resource: MCP_URL }, host);
    expect(again.status).toBe(429);
    // So is a revocation (RFC 7009) of one of its tokens.
    const revoked = await host(`${ORIGIN}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: refreshed.body.refresh_token, token_type_hint: "refresh_token", client_id: clientId }),
    });
    expect(revoked.status).toBe(200);
    // Another client's junk from the same address is its own count.
    const other = await registerClient();
    expect((await token(junkCode(other.client_id, 0), host)).status).toBe(400);
  });

  it("the address's backstop over all client ids refuses junk, never a live grant", async () => {
    const host = oneAddress({ LIMIT_OAUTH_TOKEN_FAILURES_PER_ADDRESS_PER_HOUR: "2", LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR: "2" } as Partial<Env>);
    const app = await connectedApp((await registerHuman()).token);
    for (let i = 0; i < 2; i++) expect((await token(junkCode(`made-up-${i}`, i), host)).status).toBe(401);
    expect((await token(junkCode("made-up-2", 2), host)).status).toBe(429);
    expect((await token(junkCode(app.client.client_id, 3), host)).status).toBe(429);
    expect((await refresh(app, app.refresh_token, host)).status).toBe(200);
  });
});

describe("a shared address on /mcp", () => {
  it("a host's calls with tokens of live grants (expired ones too) are neither counted nor refused by the address limit", async () => {
    const host = oneAddress({ LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR: "2" } as Partial<Env>);
    const app = await connectedApp((await registerHuman()).token);
    const [userId, grantId] = app.access_token.split(":");
    // What an access token of the grant is once it has expired (KV no longer has it): 401, and the host refreshes.
    const stale = `${userId}:${grantId}:${"x".repeat(32)}`;
    for (let i = 0; i < 3; i++) expect((await mcpPost(stale, undefined, host)).status).toBe(401);
    // Tokens of no grant are counted: past the limit, 429.
    for (let i = 0; i < 2; i++) expect((await mcpPost(`a:${i}:c`, undefined, host)).status).toBe(401);
    expect((await mcpPost("a:2:c", undefined, host)).status).toBe(429);
    // The people's live grants are served from there all the same.
    expect((await mcpPost(app.access_token, undefined, host)).status).toBe(200);
    expect((await mcpPost(stale, undefined, host)).status).toBe(401);
  });
});

describe("client registration", () => {
  const register = (metadata: Record<string, unknown>, fetch = workerFetch()) =>
    fetch(`${ORIGIN}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(metadata) });
  const refused = async (metadata: Record<string, unknown>) => {
    const res = await register(metadata);
    return { status: res.status, ...((await res.json()) as { error?: string; error_description?: string; client_id?: string }) };
  };

  it("is bounded: a name of 100 characters, 5 redirect URIs, short addresses; past them 400 with RFC 7591's error", async () => {
    const redirects = Array.from({ length: 5 }, (_, i) => `https://host.example/cb${i}`);
    expect((await refused({ ...publicClient("n".repeat(100), redirects), software_id: crypto.randomUUID() })).status).toBe(201);
    expect(await refused(publicClient("n".repeat(101)))).toMatchObject({ status: 400, error: "invalid_client_metadata" });
    expect(await refused({ ...publicClient(), "client_name#fr": "n".repeat(101) })).toMatchObject({ status: 400, error: "invalid_client_metadata" });
    expect(await refused(publicClient("Six", [...redirects, "https://host.example/cb5"]))).toMatchObject({ status: 400, error: "invalid_redirect_uri" });
    expect(await refused(publicClient("Long", [`https://host.example/${"p".repeat(2000)}`]))).toMatchObject({ status: 400, error: "invalid_redirect_uri" });
    expect(await refused({ ...publicClient(), logo_uri: `https://host.example/${"l".repeat(2000)}` })).toMatchObject({
      status: 400,
      error: "invalid_client_metadata",
    });
    expect(await refused({ ...publicClient(), contacts: Array.from({ length: 6 }, (_, i) => `a${i}@host.example`) })).toMatchObject({ status: 400 });
    expect(await refused({ ...publicClient(), software_statement: "s".repeat(20_000) })).toMatchObject({ status: 400, error: "invalid_client_metadata" });
    // Nested thousands deep, within the bound: never a 500 (it is not compared with earlier registrations).
    const deep = JSON.stringify({ ...publicClient(), x: 0 }).replace('"x":0', `"x":${"[".repeat(7000)}${"]".repeat(7000)}`);
    const res = await workerFetch()(`${ORIGIN}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: deep });
    expect(res.status).toBeLessThan(500);
  });

  it("an identical public registration answers the same client and costs the address nothing; a new one is counted; a confidential one is always its own", async () => {
    const here = oneAddress({ LIMIT_OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR: "1" } as Partial<Env>);
    const metadata = { ...publicClient("Shared Host", ["https://shared.example/callback"]), software_id: crypto.randomUUID() };
    const first = await register(metadata, here);
    expect(first.status).toBe(201);
    const { client_id } = (await first.json()) as { client_id: string };
    for (let i = 0; i < 3; i++) {
      // The same metadata in another order, from this address and from others.
      const reordered = Object.fromEntries(Object.entries(metadata).reverse());
      const again = await register(reordered, i % 2 ? here : workerFetch());
      expect(again.status).toBe(201);
      expect(((await again.json()) as { client_id: string }).client_id).toBe(client_id);
    }
    // A different registration from the address is its second: over its limit of 1.
    expect((await register({ ...metadata, client_name: "Another" }, here)).status).toBe(429);
    // The client answered again connects as any other.
    const person = await registerHuman();
    const { verifier, challenge } = await pkce();
    const code = await authorize({ clientId: client_id, session: person.token, challenge, redirectUri: "https://shared.example/callback" });
    const res = await token({
      grant_type: "authorization_code",
      client_id,
      code,
      code_verifier: verifier,
      redirect_uri: "https://shared.example/callback",
      resource: MCP_URL,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // A confidential client is never answered again (its secret is stored hashed): each registration is its own.
    const confidential = { ...metadata, token_endpoint_auth_method: "client_secret_basic" };
    const secrets = await Promise.all([register(confidential), register(confidential)].map(async (r) => (await r).json() as Promise<{ client_id: string }>));
    expect(new Set(secrets.map((b) => b.client_id)).size).toBe(2);
  });
});
