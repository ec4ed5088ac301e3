import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { app } from "../src/app";
import type { Env } from "../src/env";

/** OAuth from a host's side: register a client, sign its person in and approve, exchange the code. */

import { COOKIE, ORIGIN } from "./pages";

export { ORIGIN };
export const MCP_URL = `${ORIGIN}/mcp`;
export const REDIRECT = "https://host.example/oauth/callback";

/** The Worker's own fetch, or `app.request` with some bindings changed (a KV seen from another location). */
export function workerFetch(bindings?: Partial<Env>) {
  return async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(url, init);
    if (!request.headers.has("CF-Connecting-IP")) request.headers.set("CF-Connecting-IP", `203.0.113.${Math.floor(Math.random() * 250)}`);
    if (!bindings) return exports.default.fetch(request);
    const ctx = createExecutionContext();
    const res = await app.request(request, undefined, { ...env, ...bindings }, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  };
}

/** Requests from one client address (its own /64), with some bindings changed (a limit's number). */
export function oneAddress(bindings?: Partial<Env>) {
  const address = `2001:db8:57:${Math.floor(Math.random() * 0xffff).toString(16)}::1`;
  const fetch = workerFetch(bindings);
  return (url: string | URL | Request, init?: RequestInit) => {
    const request = new Request(url, init);
    request.headers.set("CF-Connecting-IP", address);
    return fetch(request);
  };
}

const b64url = (bytes: ArrayBuffer | Uint8Array) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

export async function pkce() {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return { verifier, challenge };
}

/** The metadata an MCP host registers a public client with. */
export const publicClient = (name = "Test Host", redirect_uris = [REDIRECT]) => ({
  client_name: name,
  redirect_uris,
  token_endpoint_auth_method: "none",
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
});

/**
 * Dynamic Client Registration (RFC 7591) of a public client, as MCP hosts register: a client of its own each time
 * (a `software_id` of its own, as identical registrations answer one client).
 */
export async function registerClient(name = "Test Host", redirect_uris = [REDIRECT], fetch = workerFetch()) {
  const res = await fetch(`${ORIGIN}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...publicClient(name, redirect_uris), software_id: crypto.randomUUID() }),
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { client_id: string; client_name: string };
}

export interface Authorize {
  clientId: string;
  /** The person's session (their JWT, as the reader's cookie holds it). */
  session: string;
  scope?: string;
  redirectUri?: string;
  challenge: string;
  /** The consent form's fields: `identity` (me, bot:<id>, new), `write` ("1" or absent), `decision`. */
  fields?: Record<string, string>;
  fetch?: ReturnType<typeof workerFetch>;
}

export const authorizeQuery = (a: Pick<Authorize, "clientId" | "scope" | "redirectUri" | "challenge">, state = "st4te") =>
  new URLSearchParams({
    response_type: "code",
    client_id: a.clientId,
    redirect_uri: a.redirectUri ?? REDIRECT,
    code_challenge: a.challenge,
    code_challenge_method: "S256",
    state,
    resource: MCP_URL,
    ...(a.scope ? { scope: a.scope } : {}),
  });

const cookies = (res: Response) => res.headers.getSetCookie().map((c) => c.split(";")[0]);

/** The consent page for a signed-in person: its HTML, the form's handle and the browser-binding cookie. */
export async function consentPage(a: Authorize) {
  const fetch = a.fetch ?? workerFetch();
  const url = `${ORIGIN}/oauth/authorize?${authorizeQuery(a)}`;
  const page = await fetch(url, { headers: { Cookie: `${COOKIE}=${a.session}` }, redirect: "manual" });
  const html = await page.text();
  const handle = /name="handle" value="([^"]+)"/.exec(html)?.[1];
  return { page, html, handle, url, binding: cookies(page).join("; ") };
}

/** Sends the consent form as the page's browser would; answers the redirect. */
export async function submitConsent(a: Authorize, consent: Awaited<ReturnType<typeof consentPage>>, fields: Record<string, string>) {
  const fetch = a.fetch ?? workerFetch();
  return fetch(consent.url, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      Origin: ORIGIN,
      Cookie: [`${COOKIE}=${a.session}`, consent.binding].filter(Boolean).join("; "),
    },
    body: new URLSearchParams({ handle: consent.handle ?? "", decision: "approve", identity: "me", write: "1", ...fields }),
  });
}

/** The whole browser part: consent page, Approve; answers the code from the redirect (and checks `state` and `iss`). */
export async function authorize(a: Authorize): Promise<string> {
  const consent = await consentPage(a);
  expect(consent.page.status, consent.html.slice(0, 500)).toBe(200);
  expect(consent.handle).toBeTruthy();
  const res = await submitConsent(a, consent, a.fields ?? {});
  const location = res.headers.get("location") ?? "";
  expect(res.status, await res.text()).toBe(302);
  const back = new URL(location);
  expect(`${back.origin}${back.pathname}`).toBe(a.redirectUri ?? REDIRECT);
  expect(back.searchParams.get("state")).toBe("st4te");
  expect(back.searchParams.get("iss")).toBe(ORIGIN);
  return back.searchParams.get("code") ?? "";
}

export async function token(body: Record<string, string>, fetch = workerFetch()) {
  const res = await fetch(`${ORIGIN}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

/** Code for tokens (PKCE): `{access_token, refresh_token, scope, …}`. */
export async function exchange(clientId: string, code: string, verifier: string, fetch = workerFetch()) {
  const res = await token(
    { grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: REDIRECT, resource: MCP_URL },
    fetch,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { access_token: string; refresh_token: string; scope: string; token_type: string; expires_in: number };
}

/** One person's whole sign-in for a fresh client: its access and refresh tokens. */
export async function connectedApp(session: string, fields: Record<string, string> = {}, scope?: string) {
  const client = await registerClient();
  const { verifier, challenge } = await pkce();
  const code = await authorize({ clientId: client.client_id, session, challenge, fields, scope });
  return { client, ...(await exchange(client.client_id, code, verifier)) };
}

/** A raw JSON-RPC POST to /mcp with a bearer (or none). */
export const mcpPost = (bearer: string | null, body: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list" }, fetch = workerFetch()) =>
  fetch(MCP_URL, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
    },
    body: JSON.stringify(body),
  });

/** A tool call's result from a raw POST (JSON or an SSE stream's one message). */
export async function toolResult(res: Response): Promise<any> {
  const text = await res.text();
  const json = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "null");
  return JSON.parse(json);
}

export const callTool = (bearer: string, name: string, args: Record<string, unknown> = {}, fetch = workerFetch()) =>
  mcpPost(bearer, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } }, fetch);

/**
 * KV as two locations see it: `kv` writes (to the real binding) and reads as the writer's location does; each
 * `elsewhere()` is another location, where nothing written through either is visible yet (KV's propagation lag).
 */
export function laggingKv(real: KVNamespace) {
  const written = new Set<string>();
  let misses = 0;
  const put = async (key: string, value: string, options?: KVNamespacePutOptions) => {
    written.add(key);
    await real.put(key, value, options);
  };
  const base = {
    put,
    delete: (key: string) => real.delete(key),
    list: (options?: KVNamespaceListOptions) => real.list(options),
    get: (key: string, options?: any) => real.get(key, options),
    getWithMetadata: (key: string, options?: any) => real.getWithMetadata(key, options),
  };
  const elsewhere = () =>
    ({
      ...base,
      get: async (key: string, options?: any) => {
        if (!written.has(key)) return real.get(key, options);
        misses++;
        return null;
      },
      getWithMetadata: async (key: string, options?: any) => (written.has(key) ? { value: null, metadata: null } : real.getWithMetadata(key, options)),
    }) as unknown as KVNamespace;
  return { kv: base as unknown as KVNamespace, elsewhere, hidden: () => misses };
}
