import { env } from "cloudflare:workers";
import {
  Client,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { describe, expect, it, vi } from "vitest";
import { call, createStory, registerAdmin, registerHuman, unique, words } from "./helpers";
import {
  ORIGIN,
  REDIRECT,
  authorize,
  authorizeQuery,
  callTool,
  connectedApp,
  consentPage,
  exchange,
  laggingKv,
  mcpPost,
  pkce,
  registerClient,
  submitConsent,
  token,
  toolResult,
  workerFetch,
} from "./oauth-flow";
import { COOKIE, get, post, shown } from "./pages";

/** A bot `owner` registered: its id. */
const ownedBotOf = async (owner: { token: string }) =>
  (await call("/auth/bot/register", { token: owner.token, body: { name: unique("theirs"), model: "m" } })).body.data.bot_id as string;

/** OAuth 2.1 for /mcp: discovery, DCR, sign-in → consent → code → token → refresh, and each refusal. */

const fetchAt = (path: string) => workerFetch()(`${ORIGIN}${path}`);

describe("discovery", () => {
  it("serves RFC 8414 metadata: the endpoints, PKCE S256 only, DCR, CIMD, the scopes", async () => {
    const res = await fetchAt("/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      revocation_endpoint: `${ORIGIN}/oauth/token`,
      code_challenge_methods_supported: ["S256"],
      scopes_supported: ["stories:read", "stories:write"],
      client_id_metadata_document_supported: true,
      protected_resources: [`${ORIGIN}/mcp`],
    });
  });

  it("serves RFC 9728 metadata at the path form and the root form", async () => {
    for (const path of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
      const res = await fetchAt(path);
      expect(res.status, path).toBe(200);
      // Both scopes: a host asks for what the resource advertises (the person may still untick writing).
      expect(await res.json()).toMatchObject({
        resource: `${ORIGIN}/mcp`,
        authorization_servers: [ORIGIN],
        scopes_supported: ["stories:read", "stories:write"],
      });
    }
  });

  it("answers /mcp without a credential 401 with the challenge naming the metadata and both scopes", async () => {
    const res = await mcpPost(null);
    expect(res.status).toBe(401);
    const challenge = res.headers.get("www-authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`);
    expect(challenge).toContain('scope="stories:read stories:write"');
    expect(res.headers.get("x-request-id")).toBeTruthy();
    // An invalid credential of ours is challenged the same way.
    const bad = await mcpPost("sl_nothing");
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toContain('scope="stories:read stories:write"');
  });
});

describe("sign-in, consent, code, token, refresh (DCR)", () => {
  it("connects as the person: the token calls tools as them; refresh rotates", async () => {
    const person = await registerHuman();
    const story = await createStory(person.token);
    const app = await connectedApp(person.token);
    expect(app.token_type.toLowerCase()).toBe("bearer");
    expect(app.scope.split(" ").sort()).toEqual(["stories:read", "stories:write"]);
    const read = await toolResult(await callTool(app.access_token, "get_story", { story_id: story.id }));
    expect(read.result.isError ?? false, JSON.stringify(read)).toBe(false);
    const wrote = await toolResult(await callTool(app.access_token, "comment", { branch_id: story.main_branch_id, content: "from my assistant" }));
    expect(wrote.result.isError ?? false, JSON.stringify(wrote)).toBe(false);
    const comments = (await call(`/branches/${story.main_branch_id}/comments`)).body.data.comments;
    expect(comments.some((c: any) => c.content === "from my assistant")).toBe(true);

    const refreshed = await token({
      grant_type: "refresh_token",
      client_id: app.client.client_id,
      refresh_token: app.refresh_token,
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.refresh_token).not.toBe(app.refresh_token);
    const again = await toolResult(await callTool(refreshed.body.access_token, "get_story", { story_id: story.id }));
    expect(again.result.isError ?? false).toBe(false);
  });

  it("connects as a new bot made on the consent page, which then writes its segments", async () => {
    const person = await registerHuman();
    const story = await createStory(person.token);
    const name = unique("assist");
    const app = await connectedApp(person.token, { identity: "new", new_bot_name: name, new_bot_model: "gpt" });
    const mine = (await call("/me/bots", { token: person.token })).body.data.bots;
    expect(mine.map((b: any) => b.name)).toEqual([name]);
    const joined = await toolResult(await callTool(app.access_token, "join_branch", { branch_id: story.main_branch_id }));
    expect(joined.result.isError ?? false, JSON.stringify(joined)).toBe(false);
    const wrote = await toolResult(await callTool(app.access_token, "write_segment", { branch_id: story.main_branch_id, content: words(5) }));
    expect(wrote.result.isError ?? false, JSON.stringify(wrote)).toBe(false);
    const segments = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments;
    expect(segments.at(-1)).toMatchObject({ bot_id: mine[0].id, author_type: "bot", author_name: name });
  });
});

describe("refusals", () => {
  it("a wrong PKCE verifier, a replayed code, an unregistered redirect: refused", async () => {
    const person = await registerHuman();
    const client = await registerClient();
    const { verifier, challenge } = await pkce();
    const code = await authorize({ clientId: client.client_id, session: person.token, challenge });
    const wrong = await token({
      grant_type: "authorization_code",
      client_id: client.client_id,
      code,
      code_verifier: `${verifier}x`,
      redirect_uri: "https://host.example/oauth/callback",
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_grant");
    const code2 = await authorize({ clientId: client.client_id, session: person.token, challenge });
    await exchange(client.client_id, code2, verifier);
    const replay = await token({
      grant_type: "authorization_code",
      client_id: client.client_id,
      code: code2,
      code_verifier: verifier,
      redirect_uri: "https://host.example/oauth/callback",
    });
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
  });
});

describe("refusals, continued", () => {
  it("an unregistered redirect URI is a page here (400), never a redirect", async () => {
    const person = await registerHuman();
    const client = await registerClient();
    const { challenge } = await pkce();
    const consent = await consentPage({ clientId: client.client_id, session: person.token, challenge, redirectUri: "https://evil.example/steal" });
    expect(consent.page.status).toBe(400);
    expect(consent.page.headers.get("location")).toBeNull();
    expect(consent.handle).toBeUndefined();
    // An unknown client likewise.
    const unknown = await consentPage({ clientId: "no-such-client", session: person.token, challenge });
    expect(unknown.page.status).toBe(400);
    expect(unknown.page.headers.get("location")).toBeNull();
  });

  it("a token is bound to {origin}/mcp: another resource is invalid_target, another deployment's /mcp refuses it", async () => {
    const person = await registerHuman();
    const client = await registerClient();
    const { verifier, challenge } = await pkce();
    const code = await authorize({ clientId: client.client_id, session: person.token, challenge });
    const other = await token({
      grant_type: "authorization_code",
      client_id: client.client_id,
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      resource: `${ORIGIN}/other`,
    });
    expect(other.status).toBe(400);
    expect(other.body.error).toBe("invalid_target");
    const app = await connectedApp(person.token);
    const elsewhere = workerFetch({ PUBLIC_ORIGIN: "https://elsewhere.test" });
    const res = await elsewhere("https://elsewhere.test/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", Authorization: `Bearer ${app.access_token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("invalid_token");
  });

  it("a read-only grant reads, and a write tool is 403 insufficient_scope with the step-up challenge (nothing written)", async () => {
    const person = await registerHuman();
    const story = await createStory(person.token);
    const app = await connectedApp(person.token, { write: "0" });
    expect(app.scope).toBe("stories:read");
    const read = await toolResult(await callTool(app.access_token, "read_branch", { branch_id: story.main_branch_id }));
    expect(read.result.isError ?? false).toBe(false);
    const res = await callTool(app.access_token, "comment", { branch_id: story.main_branch_id, content: "no" });
    expect(res.status).toBe(403);
    const challenge = res.headers.get("www-authenticate") ?? "";
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="stories:read stories:write"');
    expect(challenge).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`);
    // In a batch too.
    const batch = await mcpPost(app.access_token, [{ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "vote", arguments: {} } }]);
    expect(batch.status).toBe(403);
    expect((await call(`/branches/${story.main_branch_id}/comments`)).body.data.comments).toHaveLength(0);
  });

  it("a revoked grant is 401 with the challenge on its next call; Connected apps listed it, then no more", async () => {
    const person = await registerHuman();
    const app = await connectedApp(person.token);
    expect((await toolResult(await callTool(app.access_token, "list_stories"))).result.isError ?? false).toBe(false);
    const list = await get("/me/apps", person.token);
    const html = shown(list);
    expect(html).toContain("Test Host");
    expect(html).toContain("acts as you");
    const grantId = /action="\/me\/apps\/([^/]+)\/revoke"/.exec(html)?.[1];
    const revoked = await post(`/me/apps/${grantId}/revoke`, {}, person.token);
    expect(revoked.status).toBe(303);
    const res = await callTool(app.access_token, "list_stories");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("resource_metadata=");
    expect(shown(await get("/me/apps", person.token))).not.toContain("Test Host");
    // Its refresh token is gone with it.
    expect((await token({ grant_type: "refresh_token", client_id: app.client.client_id, refresh_token: app.refresh_token })).status).toBe(400);
    // Someone else's grant is not theirs to revoke.
    const other = await registerHuman();
    const app2 = await connectedApp(other.token);
    const id2 = /action="\/me\/apps\/([^/]+)\/revoke"/.exec((await get("/me/apps", other.token)).text)?.[1];
    expect((await post(`/me/apps/${id2}/revoke`, {}, person.token)).status).toBe(404);
    expect((await toolResult(await callTool(app2.access_token, "list_stories"))).result.isError ?? false).toBe(false);
  });

  it("a revoke KV has not seen everywhere is refused all the same: the standing statement reads the grant's row", async () => {
    const person = await registerHuman();
    const app = await connectedApp(person.token);
    const grantId = app.access_token.split(":")[1];
    await env.DB.prepare("UPDATE oauth_grants SET revoked_at = ? WHERE id = ?").bind(new Date().toISOString(), grantId).run();
    const res = await callTool(app.access_token, "list_stories");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(((await res.json()) as any).error.details.refusal).toBe("UNAUTHORIZED");
  });

  it("a suspended person's grants, and a grant acting as their bot, are 401 with the challenge (ACCOUNT_SUSPENDED); a retired bot's too, and its refresh ends", async () => {
    const admin = await registerAdmin();
    const person = await registerHuman();
    const asMe = await connectedApp(person.token);
    const bot = (await call("/auth/bot/register", { token: person.token, body: { name: unique("own"), model: "m" } })).body.data;
    const asBot = await connectedApp(person.token, { identity: `bot:${bot.bot_id}` });
    expect((await toolResult(await callTool(asBot.access_token, "list_stories"))).result.isError ?? false).toBe(false);
    expect((await call(`/admin/accounts/${person.id}/suspend`, { token: admin.token, body: { reason: "spam" } })).status).toBe(200);
    for (const app of [asMe, asBot]) {
      // A tool call, and a call that reads nothing of D1 (tools/list): the host is told to sign in again.
      for (const res of [await callTool(app.access_token, "list_stories"), await mcpPost(app.access_token)]) {
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
        expect(res.headers.get("www-authenticate")).toContain("resource_metadata=");
        expect(((await res.json()) as any).error.details.refusal).toBe("ACCOUNT_SUSPENDED");
      }
    }
    expect((await call(`/admin/accounts/${person.id}/restore`, { token: admin.token, body: {} })).status).toBe(200);
    expect((await mcpPost(asBot.access_token)).status).toBe(200);
    expect((await call(`/bots/${bot.bot_id}/retire`, { method: "POST", token: person.token })).status).toBe(200);
    for (const res of [await callTool(asBot.access_token, "list_stories"), await mcpPost(asBot.access_token)]) {
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
    }
    // Its grant ended in the library's store too: its refresh token is refused.
    const refreshed = await token({ grant_type: "refresh_token", client_id: asBot.client.client_id, refresh_token: asBot.refresh_token });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe("invalid_grant");
    expect(shown(await get("/me/apps", person.token))).not.toContain(`the bot ${bot.name}`);
    // The person's own grant is untouched.
    expect((await mcpPost(asMe.access_token)).status).toBe(200);
  });

  it("names the OAuth client in the access log", async () => {
    const person = await registerHuman();
    const app = await connectedApp(person.token);
    const lines: string[] = [];
    const spy = vi.spyOn(console, "info").mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      await callTool(app.access_token, "list_stories", {}, workerFetch({ LOG_REQUESTS: "true" }));
      await vi.waitFor(() => expect(lines.some((l) => l.includes("list_stories"))).toBe(true));
    } finally {
      spy.mockRestore();
    }
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.route === "/mcp tools/call list_stories");
    expect(line).toMatchObject({ actor: "human", oauth_client: app.client.client_id });
  });
});

describe("KV seen from another location", () => {
  it("the first calls after authorization find the code and the token though KV there has not seen them yet (D1 has)", async () => {
    const person = await registerHuman();
    const near = laggingKv(env.OAUTH_KV);
    const here = workerFetch({ OAUTH_KV: near.kv });
    const client = await registerClient("Far Host", [REDIRECT], here);
    const { verifier, challenge } = await pkce();
    const code = await authorize({ clientId: client.client_id, session: person.token, challenge, fetch: here });
    // The host's backend exchanges the code elsewhere, and calls /mcp from there at once.
    const far = workerFetch({ OAUTH_KV: near.elsewhere() });
    const tokens = await exchange(client.client_id, code, verifier, far);
    const farther = workerFetch({ OAUTH_KV: near.elsewhere() });
    const res = await callTool(tokens.access_token, "list_stories", {}, farther);
    expect(res.status).toBe(200);
    expect((await toolResult(res)).result.isError ?? false).toBe(false);
    expect(near.hidden()).toBeGreaterThan(0);
  });
});

describe("the consent page", () => {
  it("sends a visitor to sign in first, and back to the same request", async () => {
    const client = await registerClient();
    const { challenge } = await pkce();
    const query = authorizeQuery({ clientId: client.client_id, challenge });
    const res = await workerFetch()(`${ORIGIN}/oauth/authorize?${query}`, { redirect: "manual" });
    expect(res.status).toBe(303);
    const to = new URL(res.headers.get("location") ?? "", ORIGIN);
    expect(to.pathname).toBe("/login");
    expect(to.searchParams.get("next")).toBe(`/oauth/authorize?${query}`);
  });

  it("names the app (escaped), where its access goes, the scopes in words and the identities; may not be framed", async () => {
    const person = await registerHuman();
    const bot = (await call("/auth/bot/register", { token: person.token, body: { name: unique("mine"), model: "m" } })).body.data;
    const client = await registerClient('<script>alert("x")</script>');
    const { challenge } = await pkce();
    const consent = await consentPage({ clientId: client.client_id, session: person.token, challenge });
    expect(consent.page.status).toBe(200);
    expect(consent.html).not.toContain("<script>alert");
    expect(consent.html).toContain("&lt;script&gt;");
    expect(consent.html).toContain("host.example");
    expect(consent.html).toContain("write: join queues");
    expect(consent.html).toContain(`value="bot:${bot.bot_id}"`);
    expect(consent.html).toContain('value="new"');
    expect(consent.page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(consent.page.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    expect(consent.page.headers.get("cache-control")).toBe("no-store");
    expect(consent.binding).toMatch(/__Host-oauth-consent/);
  });

  it("refuses a form from another site, from another browser, and a bot the person does not own; Deny goes back with access_denied", async () => {
    const person = await registerHuman();
    const stranger = await ownedBotOf(await registerHuman());
    const client = await registerClient();
    const { challenge } = await pkce();
    const a = { clientId: client.client_id, session: person.token, challenge };
    const consent = await consentPage(a);
    const foreign = await workerFetch()(consent.url, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        Origin: "https://evil.example",
        Cookie: `${COOKIE}=${person.token}; ${consent.binding}`,
      },
      body: new URLSearchParams({ handle: consent.handle!, decision: "approve", identity: "me", write: "1" }),
    });
    expect(foreign.status).toBe(403);
    const otherBrowser = await submitConsent(a, { ...consent, binding: "" }, {});
    expect(otherBrowser.status).toBe(400);
    expect(otherBrowser.headers.get("location")).toBeNull();
    const notMine = await submitConsent(a, await consentPage(a), { identity: `bot:${stranger}` });
    expect(notMine.status).toBe(403);
    expect(notMine.headers.get("location")).toBeNull();
    const denied = await submitConsent(a, await consentPage(a), { decision: "deny" });
    expect(denied.status).toBe(302);
    const back = new URL(denied.headers.get("location") ?? "");
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("code")).toBeNull();
  });
});

describe("Client ID Metadata Documents", () => {
  it("an app whose client_id is its metadata document's URL connects; the page names its domain", async () => {
    const clientId = "https://assistant.example/oauth/client.json";
    const document = {
      client_id: clientId,
      client_name: "Assistant",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    };
    const realFetch = globalThis.fetch;
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url === clientId) return Response.json(document, { headers: { "cache-control": "max-age=60" } });
      return realFetch(input, init);
    });
    try {
      const person = await registerHuman();
      const { verifier, challenge } = await pkce();
      const consent = await consentPage({ clientId, session: person.token, challenge });
      expect(consent.page.status, consent.html.slice(0, 300)).toBe(200);
      expect(consent.html).toContain("Published by <strong>assistant.example</strong>");
      const code = await authorize({ clientId, session: person.token, challenge });
      const tokens = await exchange(clientId, code, verifier);
      expect((await toolResult(await callTool(tokens.access_token, "list_stories"))).result.isError ?? false).toBe(false);
    } finally {
      spy.mockRestore();
    }
  });
});

/** The official MCP client's own OAuth: an `OAuthClientProvider` whose `redirectToAuthorization` plays the person's browser. */
class BrowserProvider implements OAuthClientProvider {
  info?: StoredOAuthClientInformation;
  saved?: StoredOAuthTokens;
  verifier = "";
  callback?: URLSearchParams;
  discovery?: OAuthDiscoveryState;
  constructor(
    private session: string,
    private fields: Record<string, string>,
  ) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: "SDK Host",
      redirect_uris: [REDIRECT],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  /** The browser: the consent page with the person's session, Approve, and the redirect back. */
  async redirectToAuthorization(url: URL) {
    const fetch = workerFetch();
    const session = `${COOKIE}=${this.session}`;
    const consentUrl = `${ORIGIN}${url.pathname}${url.search}`;
    const res = await fetch(consentUrl, { headers: { Cookie: session }, redirect: "manual" });
    const html = await res.text();
    expect(res.status, html.slice(0, 300)).toBe(200);
    const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1] ?? "";
    const binding = res.headers.getSetCookie().map((c) => c.split(";")[0]);
    const sent = await fetch(consentUrl, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", Origin: ORIGIN, Cookie: [session, ...binding].join("; ") },
      body: new URLSearchParams({ handle, decision: "approve", write: "1", ...this.fields }),
    });
    expect(sent.status).toBe(302);
    this.callback = new URL(sent.headers.get("location") ?? "").searchParams;
  }
}

describe("the official MCP client's OAuth", () => {
  for (const era of ["legacy", "modern"] as const) {
    it(`signs in, approves as the chosen bot, connects and writes a segment (${era} era)`, async () => {
      const person = await registerHuman();
      const story = await createStory(person.token);
      const botId = await ownedBotOf(person);
      const provider = new BrowserProvider(person.token, { identity: `bot:${botId}` });
      const transport = () => new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), { authProvider: provider, fetch: workerFetch() });
      const options = era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" as const } } } : {};
      const first = new Client({ name: "sdk-host", version: "1.0.0" }, options);
      const pending = transport();
      await expect(first.connect(pending)).rejects.toThrow(UnauthorizedError);
      expect(provider.callback?.get("code")).toBeTruthy();
      await pending.finishAuth(provider.callback!);
      expect(provider.saved?.access_token).toBeTruthy();
      const client = new Client({ name: "sdk-host", version: "1.0.0" }, options);
      await client.connect(transport());
      try {
        const joined = (await client.callTool({ name: "join_branch", arguments: { branch_id: story.main_branch_id } })) as any;
        expect(joined.isError ?? false, JSON.stringify(joined)).toBe(false);
        expect(joined.structuredContent.bot_id).toBe(botId);
        const wrote = (await client.callTool({ name: "write_segment", arguments: { branch_id: story.main_branch_id, content: words(5, "sdk") } })) as any;
        expect(wrote.isError ?? false, JSON.stringify(wrote)).toBe(false);
        const last = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments.at(-1);
        expect(last).toMatchObject({ bot_id: botId, author_type: "bot", content: words(5, "sdk") });
      } finally {
        await client.close();
      }
    });
  }
});
