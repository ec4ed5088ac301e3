import type { Context } from "hono";
import type { AppEnv } from "../context";
import type { Actor } from "../domain/actor";
import { ApiError } from "../lib/errors";
import { readCredential, resolveActor } from "../middleware/auth";
import { checkHost, checkOrigin } from "../middleware/origin";
import { watchStanding } from "../middleware/standing";
import { doorOf } from "./door";
import { mcpHandler } from "./server";
import { TOOL_NAMES } from "./tools";

/** The 401 of an invalid credential carries the challenge MCP clients look for. */
const CHALLENGE = { "WWW-Authenticate": 'Bearer realm="storyloom", error="invalid_token"' };

/**
 * The caller: none without a credential (read tools only), the actor for one the REST API accepts, and an
 * invalid one is HTTP 401 with `WWW-Authenticate: Bearer` (the host then asks its user for a new one). A key or
 * token whose account is suspended (its own look-up says so) is the refusal every tool call then answers, as a
 * suspended JWT's is (its standing rides in the call's first D1 trip): one answer whatever the credential.
 */
async function callerOf(c: Context<AppEnv>): Promise<{ actor: Actor | null; refusal?: ApiError }> {
  try {
    const credential = readCredential(c);
    return { actor: credential ? await resolveActor(c.get("db"), c.get("config"), credential) : null };
  } catch (err) {
    if (err instanceof ApiError && err.code === "ACCOUNT_SUSPENDED") return { actor: null, refusal: err };
    if (err instanceof ApiError && err.status === 401) throw new ApiError(err.code, err.message, err.details, { ...err.headers, ...CHALLENGE });
    throw err;
  }
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

/**
 * `{origin}/mcp`: the Streamable HTTP MCP endpoint, mounted behind the same request id, access log and services
 * as the API. In order: the Host and the Origin (403 for another site's name or page), the credential (401 when
 * invalid), then the SDK's handler with this request's door. An SSE answer to a call that asked for no progress is
 * read to its end here, so the access log and Server-Timing cover the whole call; one that asked for progress
 * streams as it goes.
 */
export async function serveMcp(c: Context<AppEnv>): Promise<Response> {
  c.set("logRoute", "/mcp");
  checkHost(c, "The MCP endpoint");
  checkOrigin(c, "The MCP endpoint");
  const { actor, refusal } = await callerOf(c);
  if (actor) {
    c.set("actor", actor);
    watchStanding(c, actor); // as over REST: the account's standing rides in the call's first D1 trip
  }
  const { json: body, request } = await bodyOf(c);
  c.set("logRoute", logRoute(body));
  const door = { ...doorOf(c, actor), call: toolCalled(body), refusal };
  const authInfo = { token: "", clientId: actor ? `${actor.type}:${actor.id}` : "anonymous", scopes: [], extra: { door } };
  const progress = wantsProgress(body);
  const res = await mcpHandler.fetch(request, { authInfo, wantsProgress: progress, ...(body === undefined ? {} : { parsedBody: body }) });
  if (!res.body || progress || !res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
  return new Response(await res.text(), { status: res.status, headers: res.headers });
}
