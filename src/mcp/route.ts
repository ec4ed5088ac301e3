import type { Context } from "hono";
import type { AppEnv } from "../context";
import type { Actor } from "../domain/shared/actor";
import { ApiError, apiErrorIn } from "../lib/errors";
import { flushPrelude } from "../db/metered";
import { renderError } from "../middleware/render-error";
import { insufficientScope, type OAuthResourceAuth } from "@cloudflare/workers-oauth-provider";
import { readCredential, resolveActor } from "../middleware/auth";
import { executionContextOf } from "../middleware/access-log";
import { grantJti } from "../domain/standing/rule";
import { ALL_SCOPES, RESOURCE_METADATA_PATH, SCOPES } from "../oauth/paths";
import { stampGrantUse } from "../oauth/use";
import { type OAuthCall, grantIdOf, mcpContext, oauthEnv, oauthServers } from "../oauth/servers";
import { checkHost, checkOrigin } from "../middleware/origin";
import { watchStanding } from "../middleware/standing";
import { doorOf } from "./door";
import { mcpHandler } from "./server";
import { TOOLS, TOOL_NAMES } from "./tools";

const WRITE_TOOLS = new Set(TOOLS.filter((t) => !t.readOnly).map((t) => t.name));

/** The 401 of an invalid credential carries the challenge MCP clients look for, naming the resource's metadata. */
const challenge = (c: Context<AppEnv>) => ({
  "WWW-Authenticate": `Bearer resource_metadata="${c.get("config").publicOrigin}${RESOURCE_METADATA_PATH}/mcp", scope="${ALL_SCOPES.join(" ")}", error="invalid_token"`,
});

/**
 * The caller for a credential the REST API accepts (a key, an API token, a JWT), and an invalid one is HTTP 401
 * with `WWW-Authenticate: Bearer` (the host then asks its user for a new one). A key or token whose account is
 * suspended (its own look-up says so) is the refusal every tool call then answers, as a suspended JWT's is (its
 * standing rides in the call's first D1 trip): one answer whatever the credential.
 */
async function callerOf(c: Context<AppEnv>, credential: string): Promise<McpCaller> {
  try {
    return { actor: await resolveActor(c.get("db"), c.get("config"), credential) };
  } catch (err) {
    if (err instanceof ApiError && err.code === "ACCOUNT_SUSPENDED") return { actor: null, refusal: err };
    if (err instanceof ApiError && err.status === 401) throw new ApiError(err.code, err.message, err.details, { ...err.headers, ...challenge(c) });
    throw err;
  }
}

interface McpCaller {
  actor: Actor | null;
  refusal?: ApiError;
  /** The OAuth token's verified facts (its scopes), for a call through a grant. */
  auth?: OAuthResourceAuth;
}

/** The grant's account is the caller: its limits, standing (the grant's own row too), idempotency and logs. */
function grantCaller({ props, auth }: OAuthCall): McpCaller {
  const session = { jti: grantJti(grantIdOf(auth.token)), exp: auth.expiresAt ?? 0 };
  return { actor: { id: props.actorId, type: props.actorType, name: props.actorName, credential: "oauth", session, oauthClient: auth.clientId }, auth };
}

interface JsonRpcMessage {
  method?: unknown;
  params?: { name?: unknown; _meta?: { progressToken?: unknown } };
}

/**
 * The JSON-RPC body, parsed once here (for the log's route) and handed to the SDK parsed. A body that is not JSON
 * goes to the SDK as it came (in a new request: this one's body is read), for its own JSON-RPC parse error.
 */
async function bodyOf(c: Context<AppEnv>): Promise<{ json: unknown; request: Request }> {
  if (c.req.method !== "POST") return { json: undefined, request: c.req.raw };
  const text = await c.req.text();
  try {
    return { json: JSON.parse(text), request: c.req.raw };
  } catch {
    return { json: undefined, request: new Request(c.req.url, { method: "POST", headers: c.req.raw.headers, body: text }) };
  }
}

/** The access log's route: `/mcp`, the JSON-RPC method and, for a tool call, the tool's name (only names we have). */
function logRoute(body: unknown): string {
  if (Array.isArray(body)) return "/mcp batch";
  const message = body as JsonRpcMessage | undefined;
  const method = typeof message?.method === "string" && /^[a-z/]{1,40}$/i.test(message.method) ? message.method : null;
  if (!method) return "/mcp";
  const tool = message?.params?.name;
  if (method === "tools/call") return `/mcp tools/call ${typeof tool === "string" && TOOL_NAMES.has(tool) ? tool : "(unknown tool)"}`;
  return `/mcp ${method}`;
}

/** The tool a single `tools/call` names, when it is one of ours (otherwise the server registers every tool, and answers as the SDK does). */
function toolCalled(body: unknown): string | undefined {
  const message = body as JsonRpcMessage | undefined;
  const name = message?.method === "tools/call" ? message.params?.name : undefined;
  return typeof name === "string" && TOOL_NAMES.has(name) ? name : undefined;
}

const wantsProgress = (body: unknown) => (body as JsonRpcMessage | undefined)?.params?._meta?.progressToken !== undefined;

/** A tool that writes, anywhere in the body (a batch too): a grant without the write scope may not call it. */
function callsWriteTool(body: unknown): boolean {
  const messages = (Array.isArray(body) ? body : [body]) as (JsonRpcMessage | undefined)[];
  return messages.some((m) => m?.method === "tools/call" && typeof m.params?.name === "string" && WRITE_TOOLS.has(m.params.name));
}

/** The request on the site's own origin (its Host was checked): the OAuth library compares URLs with its issuer's. */
const canonical = (c: Context<AppEnv>) => {
  const url = new URL(c.req.url);
  // Without the body: the library reads the URL and the headers; the body stays this request's, for the SDK.
  return new Request(`${c.get("config").publicOrigin}${url.pathname}${url.search}`, { method: c.req.method, headers: c.req.raw.headers });
};

/**
 * `{origin}/mcp`: the Streamable HTTP MCP endpoint, mounted behind the same request id, access log and services
 * as the API. In order: the Host and the Origin (403 for another site's name or page); then a credential of ours
 * (a key, an API token, a JWT: none has a `:`) is resolved as the REST API resolves it, at today's cost; anything
 * else (no credential, an OAuth access token) goes through the OAuth library's resource server (src/oauth/): the
 * 401 challenge, the token's KV record and audience. Then the SDK's handler with this request's door.
 */
export async function serveMcp(c: Context<AppEnv>): Promise<Response> {
  c.set("logRoute", "/mcp");
  checkHost(c, "The MCP endpoint");
  checkOrigin(c, "The MCP endpoint");
  let credential: string | null;
  try {
    credential = readCredential(c);
  } catch (err) {
    const e = err as ApiError;
    throw new ApiError(e.code, e.message, e.details, challenge(c));
  }
  if (credential && !credential.includes(":")) return answer(c, await callerOf(c, credential));
  const { resource } = oauthServers(c.get("config").publicOrigin);
  return resource.fetch(
    canonical(c),
    oauthEnv(c.env, c.get("meter")),
    mcpContext(executionContextOf(c), (call) => answer(c, grantCaller(call))),
  );
}

/**
 * The call itself, for its caller: a write tool through a grant without the write scope is 403 with the step-up
 * challenge (the host asks its person for more). An SSE answer to a call that asked for no progress is read to its
 * end here, so the access log and Server-Timing cover the whole call; one that asked for progress streams as it goes.
 */
async function answer(c: Context<AppEnv>, { actor, refusal, auth }: McpCaller): Promise<Response> {
  if (actor) {
    c.set("actor", actor);
    watchStanding(c, actor); // as over REST: the account's standing rides in the call's first D1 trip
  }
  const { json: body, request } = await bodyOf(c);
  c.set("logRoute", logRoute(body));
  const writes = !auth || auth.scope.includes(SCOPES.write);
  if (auth && !writes && callsWriteTool(body)) {
    c.set("errorCode", "insufficient_scope");
    return insufficientScope(auth, ALL_SCOPES, "This app may only read: approve writing to let it write");
  }
  const door = { ...doorOf(c, actor), writes, call: toolCalled(body), refusal };
  const authInfo = { token: "", clientId: actor ? `${actor.type}:${actor.id}` : "anonymous", scopes: auth?.scope ?? [], extra: { door } };
  const progress = wantsProgress(body);
  // A stream that reports progress is under way before its end is known: its grant's standing is checked first.
  const early = auth && progress ? await grantRefused(c) : null;
  if (early) return early;
  const res = await mcpHandler.fetch(request, { authInfo, wantsProgress: progress, ...(body === undefined ? {} : { parsedBody: body }) });
  const whole =
    !res.body || progress || !res.headers.get("content-type")?.startsWith("text/event-stream")
      ? res
      : new Response(await res.text(), { status: res.status, headers: res.headers });
  const late = auth && !progress ? await grantRefused(c) : null;
  if (late) return late;
  if (auth) stampGrantUse(c, grantIdOf(auth.token));
  return whole;
}

/**
 * A grant whose account's standing refuses it (its bot retired, its account or the bot's owner suspended, the grant
 * revoked) is HTTP 401 with the challenge, as an unknown token is: the host then asks its person to sign in again,
 * where a 200 whose every tool errs looks like a working connection. The verdict rides in the call's own D1 trip;
 * a call that made none (initialize, tools/list) makes one for it. `details.refusal` is the standing's code, with its details.
 */
async function grantRefused(c: Context<AppEnv>): Promise<Response | null> {
  try {
    await flushPrelude(c.get("db").$client);
    return null;
  } catch (err) {
    const refused = apiErrorIn(err);
    if (!refused) throw err;
    // Answered here, not thrown: the error handler would answer the standing's own refusal (403 for a suspension).
    return renderError(c, new ApiError("UNAUTHORIZED", refused.message, { ...refused.details, refusal: refused.code }, challenge(c)));
  }
}
