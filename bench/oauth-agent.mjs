// An agent that connects to `/mcp` the way ChatGPT or Claude does: the official MCP client's own OAuth
// (`StreamableHTTPClientTransport` with an `OAuthClientProvider`: discovery from the 401, Dynamic Client
// Registration, PKCE), its person signing in and approving in headless Chromium, the consent page driven by its
// labels (never by its markup), and the code handed back with `finishAuth`. Used by `npm run e2e:mcp -- --oauth`.
// The browser is Debian's Chromium (never downloaded); every request it makes off this machine is aborted.
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { chromium } from "playwright-core";

/** Where the host's sign-in comes back: a path of the dev server itself (a loopback address, as a local host app's; a 404 page). */
const callbackOf = (origin) => `${origin}/e2e-host/callback`;
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

export const launchChromium = () =>
  chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"] });

/**
 * The host's side of OAuth, kept in memory; `redirectToAuthorization` is the person's browser (`approve`). Its
 * callback is a path of Storyloom's own origin unless `redirect` names another (test/browser/oauth-host.mjs).
 */
export class HostProvider {
  constructor(origin, approve, { redirect = callbackOf(origin), name = "e2e host" } = {}) {
    this.redirect = redirect;
    this.name = name;
    this.approve = approve;
    this.info = undefined;
    this.saved = undefined;
    this.verifier = "";
    this.callback = undefined;
  }
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata() {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  async redirectToAuthorization(url) {
    this.callback = await this.approve(url);
  }
}

/**
 * The person in the browser: the authorize URL sends them to log in, back to the consent page, where they choose
 * "A new bot of mine, made now", name it, keep writing ticked and press Approve; answers the callback's query.
 */
export function personInBrowser(browser, person, botName) {
  return async (authorizeUrl) => {
    const context = await browser.newContext();
    await context.route("**/*", (route) => (new URL(route.request().url()).hostname === "127.0.0.1" ? route.continue() : route.abort("blockedbyclient")));
    const page = await context.newPage();
    try {
      await page.goto(String(authorizeUrl));
      await page.getByLabel("Email").fill(person.email);
      await page.getByLabel("Password").fill(person.password);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("heading", { name: /^Connect e2e host/ }).waitFor();
      await page.getByLabel("A new bot of mine, made now").check();
      await page.getByLabel("New bot's name").fill(botName);
      await page.getByLabel(/^write:/).check();
      await Promise.all([page.waitForURL(/\/e2e-host\/callback\?/), page.getByRole("button", { name: "Approve" }).click()]);
      const callback = new URL(page.url()).searchParams;
      if (!callback.get("code")) throw new Error(`no code came back for ${botName}`);
      return callback;
    } finally {
      await context.close();
    }
  };
}

/** An MCP client signed in through OAuth (the first connect is refused with 401, the browser approves, then it connects). */
export async function oauthClient(origin, name, era, approve) {
  const provider = new HostProvider(origin, approve);
  const options = { versionNegotiation: era === "modern" ? { mode: { pin: "2026-07-28" } } : { mode: "legacy" } };
  const transport = () => new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { authProvider: provider });
  const first = transport();
  try {
    await new Client({ name, version: "1.0.0" }, options).connect(first);
    throw new Error("/mcp took a call without a credential");
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
  }
  await first.finishAuth(provider.callback);
  const client = new Client({ name, version: "1.0.0" }, options);
  await client.connect(transport());
  return client;
}

const b64url = (bytes) => Buffer.from(bytes).toString("base64url");

/**
 * An OAuth access token for `/mcp` without a browser (for the benchmark): DCR, the consent page fetched with the
 * person's session cookie (`storyloom_session` on 127.0.0.1), Approve as the person, the code exchanged with PKCE.
 */
export async function oauthToken(origin, session, fields = {}) {
  const redirect = callbackOf(origin);
  const client = await (
    await fetch(`${origin}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "bench host", redirect_uris: [redirect], token_endpoint_auth_method: "none" }),
    })
  ).json();
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  const query = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: redirect,
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource: `${origin}/mcp`,
    scope: "stories:read stories:write",
  });
  const url = `${origin}/oauth/authorize?${query}`;
  const cookie = `storyloom_session=${session}`;
  const page = await fetch(url, { headers: { cookie }, redirect: "manual" });
  const handle = /name="handle" value="([^"]+)"/.exec(await page.text())?.[1];
  const binding = page.headers.getSetCookie().map((c) => c.split(";")[0]);
  const approved = await fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", origin, cookie: [cookie, ...binding].join("; ") },
    body: new URLSearchParams({ handle, decision: "approve", identity: "me", write: "1", ...fields }),
  });
  const code = new URL(approved.headers.get("location") ?? "").searchParams.get("code");
  if (!code) throw new Error(`no code: ${approved.status}`);
  const tokens = await (
    await fetch(`${origin}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", client_id: client.client_id, code, code_verifier: verifier, redirect_uri: redirect }),
    })
  ).json();
  if (!tokens.access_token) throw new Error(`no token: ${JSON.stringify(tokens)}`);
  return tokens.access_token;
}
