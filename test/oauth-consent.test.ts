import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Env } from "../src/env";
import { call, registerAdmin, registerHuman, unique } from "./helpers";
import { ORIGIN, authorize, connectedApp, consentPage, exchange, mcpPost, pkce, registerClient, submitConsent, workerFetch } from "./oauth-flow";
import { get, post } from "./pages";

/**
 * An assistant connecting from a real browser: the consent page's forms may go where Approve and Deny redirect
 * (Chromium checks `form-action` against that redirect), and nothing else may; a click that never reached the app
 * leaves no connected app; the resource advertises both scopes.
 */

const formAction = (res: { headers: Headers }) => /form-action ([^;]*)/.exec(res.headers.get("content-security-policy") ?? "")?.[1];

describe("the consent page's Content-Security-Policy", () => {
  it("lets its forms go to the validated redirect's origin and nowhere else; every other page keeps 'self'", async () => {
    const person = await registerHuman();
    const { challenge } = await pkce();
    const hosted = await registerClient("Hosted", ["https://claude.ai/api/mcp/auth_callback"]);
    const hostedPage = await consentPage({
      clientId: hosted.client_id,
      session: person.token,
      challenge,
      redirectUri: "https://claude.ai/api/mcp/auth_callback",
    });
    expect(hostedPage.page.status).toBe(200);
    expect(formAction(hostedPage.page)).toBe("'self' https://claude.ai");
    // A local app's callback on a port of its own: that origin exactly (scheme, host and port).
    const local = await registerClient("Local", ["http://127.0.0.1:33418/callback"]);
    const localPage = await consentPage({ clientId: local.client_id, session: person.token, challenge, redirectUri: "http://127.0.0.1:33418/callback" });
    expect(formAction(localPage.page)).toBe("'self' http://127.0.0.1:33418");
    // Shown again with a form error, it still may.
    const again = await submitConsent({ clientId: local.client_id, session: person.token, challenge }, localPage, { identity: "new", new_bot_name: "" });
    expect(again.status).toBe(400);
    expect(formAction(again)).toBe("'self' http://127.0.0.1:33418");
    expect(again.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    // Every other page: its own origin alone.
    for (const path of ["/", "/me/apps", "/me/bots", "/login"]) expect(formAction(await get(path, person.token)), path).toBe("'self'");
  });

  it("an authorization request the library refuses is a page whose forms stay on the site", async () => {
    const person = await registerHuman();
    const client = await registerClient();
    const { challenge } = await pkce();
    const refused = await consentPage({ clientId: client.client_id, session: person.token, challenge, redirectUri: "https://evil.example/cb" });
    expect(refused.page.status).toBe(400);
    expect(formAction(refused.page)).toBe("'self'");
  });
});

const grantIdsListed = async (session: string) => [...(await get("/me/apps", session)).text.matchAll(/action="\/me\/apps\/([^/]+)\/revoke"/g)].map((m) => m[1]);

describe("Connected apps lists only grants an app holds tokens for", () => {
  it("an approval whose code was never exchanged is not listed (pending, or lapsed); once exchanged, it is", async () => {
    const person = await registerHuman();
    const client = await registerClient("Never Reached");
    const { verifier, challenge } = await pkce();
    const lost = await authorize({ clientId: client.client_id, session: person.token, challenge });
    const lostGrant = lost.split(":")[1];
    // Its code lapsed (the library's record is gone with it).
    await env.OAUTH_KV.delete(`grant:${person.id}:${lostGrant}`);
    await env.DB.prepare("DELETE FROM oauth_kv WHERE key = ?").bind(`grant:${person.id}:${lostGrant}`).run();
    expect(await grantIdsListed(person.token)).toEqual([]);
    // Another approval, its code not yet exchanged: not listed either.
    const code = await authorize({ clientId: client.client_id, session: person.token, challenge });
    expect(await grantIdsListed(person.token)).toEqual([]);
    // Exchanged: listed, before any call to /mcp ("last used never").
    const tokens = await exchange(client.client_id, code, verifier);
    expect(await grantIdsListed(person.token)).toEqual([code.split(":")[1]]);
    expect((await get("/me/apps", person.token)).text).toContain("last used never");
    expect((await mcpPost(tokens.access_token)).status).toBe(200);
    // Revoke still works on it.
    expect((await post(`/me/apps/${code.split(":")[1]}/revoke`, {}, person.token)).status).toBe(303);
    expect(await grantIdsListed(person.token)).toEqual([]);
  });
});

describe("the resource advertises both scopes", () => {
  it("in its metadata and its 401 challenge, so a host asks for writing too", async () => {
    const meta = await workerFetch()(`${ORIGIN}/.well-known/oauth-protected-resource/mcp`);
    expect(((await meta.json()) as { scopes_supported: string[] }).scopes_supported).toEqual(["stories:read", "stories:write"]);
    const res = await mcpPost(null);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('scope="stories:read stories:write"');
  });

  it("the consent page ticks what the app asked for, and offers writing in words when it asked to read only", async () => {
    const person = await registerHuman();
    const client = await registerClient("Reader App");
    const { challenge } = await pkce();
    const readOnly = await consentPage({ clientId: client.client_id, session: person.token, challenge, scope: "stories:read" });
    expect(readOnly.html).toMatch(/<input type="checkbox" id="scope-write"(?![^>]*checked)[^>]*aria-describedby="scope-write-hint"/);
    expect(readOnly.html).toContain("Reader App asked to read only. Tick this to let it write too");
    const both = await consentPage({ clientId: client.client_id, session: person.token, challenge, scope: "stories:read stories:write" });
    expect(both.html).toMatch(/<input type="checkbox" id="scope-write"[^>]*checked/);
    expect(both.html).not.toContain("asked to read only");
  });
});

describe("a grant whose account is refused", () => {
  it("is 401 with the challenge at /mcp, and is not counted as a failed OAuth request of its address (a host serving many people)", async () => {
    const admin = await registerAdmin();
    const person = await registerHuman();
    const app = await connectedApp(person.token, { identity: "new", new_bot_name: unique("theirs") });
    expect((await call(`/admin/accounts/${person.id}/suspend`, { token: admin.token, body: { reason: "spam" } })).status).toBe(200);
    const address = `2001:db8:64:${Math.floor(Math.random() * 0xffff).toString(16)}::1`;
    const fetch = workerFetch({ LIMIT_OAUTH_FAILURES_PER_ADDRESS_PER_HOUR: "1" } as Partial<Env>);
    const here = (url: string | URL | Request, init?: RequestInit) => {
      const request = new Request(url, init);
      request.headers.set("CF-Connecting-IP", address);
      return fetch(request);
    };
    for (let i = 0; i < 3; i++) {
      const res = await mcpPost(app.access_token, undefined, here);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(((await res.json()) as any).error.details).toMatchObject({ refusal: "ACCOUNT_SUSPENDED", owner_suspended: true });
    }
    // A token that is not ours still counts: the first is answered, the next refused at the limit.
    expect((await mcpPost("a:b:c", undefined, here)).status).toBe(401);
    expect((await mcpPost("a:b:d", undefined, here)).status).toBe(429);
  });
});
