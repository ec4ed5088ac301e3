import {
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isLegacyRequest,
} from "@modelcontextprotocol/server";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker";
import { refusalFirst } from "../db/metered";
import { sha256Hex } from "../lib/crypto";
import { ApiError } from "../lib/errors";
import { type McpDoor, callerOf } from "./door";
import { logMcpFault } from "./faults";
import { parseArguments } from "./input";
import { continueStoryArguments, continueStoryContext, continueStoryPrompt, continueStoryText } from "./prompts";
import { registerReaderApp, toolMeta } from "./app/resource";
import { errorResult, toolOutput } from "./results";
import type { Progress, Tool } from "./tool";
import { INSTRUCTIONS, SERVER_INFO, TOOLS } from "./tools";

/** Builds the JSON Schema validator once per isolate: `@cfworker/json-schema`, which compiles no code (ajv's `new Function` is refused by workerd). */
const jsonSchemaValidator = new CfWorkerJsonSchemaValidator();

const noProgress: Progress = async () => {};

/** A keyed call's claim: the key, and the fingerprint of the tool and its arguments (another call under the key is 422). */
const keyedCall = async (actorId: string, tool: string, key: string, args: unknown) => ({
  actorId,
  key,
  hash: await sha256Hex(`MCP ${tool}\n${JSON.stringify(args)}`),
});

/** One tool call at the door: access, arguments, the use case, the result or the error result. Never throws. */
async function call(door: McpDoor, tool: Tool, args: unknown, progress: Progress) {
  try {
    if (door.refusal) throw door.refusal;
    if (tool.access === "anyone") await door.chargeRead();
    else callerOf(door, tool.access === "bot" ? ["bot"] : undefined);
    const { idempotency_key: key, ...parsed } = parseArguments(tool.input, args) as { idempotency_key?: string };
    const idempotency = key && door.actor ? await keyedCall(door.actor.id, tool.name, key, parsed) : undefined;
    const result = await tool.run({ ...door, idempotency }, parsed, progress);
    if (!tool.readOnly) door.wrote();
    return result;
  } catch (err) {
    const { result, code } = await failure(door, err);
    door.failed(code);
    return result;
  }
}

/** A failed call's error result: the caller's own refusal first when its standing was still unsettled (as over REST). */
const failure = async (door: McpDoor, err: unknown) => errorResult(await refusalFirst(door.guest.db.$client, err), door.requestId);

/** A request's server: built per request by the SDK's handler (its rule), from definitions built once per isolate. */
function serverFor(door: McpDoor): McpServer {
  const server = new McpServer(SERVER_INFO, {
    // The lists never change at run time, so no list-change notification is ever sent: a `subscriptions/listen`
    // (2026-07-28) is acknowledged with nothing to notify and ended at once (the SDK's listen router), where an
    // advertised `listChanged` (McpServer's default) held it open, keep-alives only, and the route, which reads an
    // answer to its end, never answered (hosts hung on connect waiting for the acknowledgment).
    capabilities: { tools: { listChanged: false }, prompts: { listChanged: false }, resources: { listChanged: false } },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator,
  });
  const config = door.guest.config;
  // A tools/call needs its one tool (a request's server serves that request only); anything else gets them all.
  for (const tool of door.call ? TOOLS.filter((t) => t.name === door.call) : TOOLS) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description(config),
        inputSchema: tool.input.advertised,
        outputSchema: toolOutput,
        annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
        _meta: toolMeta(tool),
      },
      async (args: unknown, ctx) => {
        const token = ctx.mcpReq._meta?.progressToken;
        const progress: Progress =
          token === undefined
            ? noProgress
            : (value, total, message) =>
                ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: value, total, message } });
        return call(door, tool, args, progress);
      },
    );
  }
  // The prompt and the reader app's resource: for every request but a tool call, which needs its tool alone.
  if (!door.call) {
    registerPrompts(server, door);
    registerReaderApp(server, config);
  }
  return server;
}

function registerPrompts(server: McpServer, door: McpDoor) {
  server.registerPrompt(
    continueStoryPrompt.name,
    { title: continueStoryPrompt.title, description: continueStoryPrompt.description, argsSchema: continueStoryArguments },
    async ({ branch_id }) => {
      try {
        if (door.refusal) throw door.refusal;
        await door.chargeRead();
        const context = await continueStoryContext(door.guest, branch_id);
        if (!context) throw new ApiError("NOT_FOUND", "Branch not found");
        return {
          description: `Continue "${context.branch_title}"`,
          messages: [{ role: "user" as const, content: { type: "text" as const, text: continueStoryText(context) } }],
        };
      } catch (err) {
        // Prompts have no error result: the host gets a JSON-RPC error with the REST code in its data.
        const { result, code } = await failure(door, err);
        door.failed(code);
        throw new ProtocolError(
          code === "INTERNAL_ERROR" ? ProtocolErrorCode.InternalError : ProtocolErrorCode.InvalidParams,
          result.content[0].text,
          result.structuredContent,
        );
      }
    },
  );
}

/** The door the route put in `authInfo.extra` (every request to the handler comes through `serveMcp`). */
function doorIn(extra: Record<string, unknown> | undefined): McpDoor {
  const door = extra?.door as McpDoor | undefined;
  if (!door) throw new Error("an MCP request reached the handler without its door");
  return door;
}

const sdkHandler = createMcpHandler(({ authInfo }) => serverFor(doorIn(authInfo?.extra)), { onerror: logMcpFault });

interface HandleOptions {
  authInfo: { token: string; clientId: string; scopes: string[]; extra: { door: McpDoor } };
  parsedBody?: unknown;
}

/**
 * A 2025-era POST that asked for no progress, answered as one JSON body: the SDK's own legacy serving always
 * streams SSE (framed by the server, read back to its end by the route), which cost a one-query read ~1 ms of CPU.
 * The same stateless idiom (`sessionIdGenerator: undefined`, a fresh server per request), with JSON responses,
 * which the 2025-11-25 transport allows; a call that asked for progress keeps the SDK's stream.
 */
async function legacyAsJson(request: Request, options: HandleOptions): Promise<Response> {
  const server = serverFor(options.authInfo.extra.door);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  // Not closed afterwards: with the JSON answer in hand the exchange holds nothing open (no stream, no timer), and
  // closing cost ~0.25 ms of CPU (the protocol's `_onclose` builds a "connection closed" error for its handlers)
  // for a server that is garbage the moment this returns.
  return transport.handleRequest(request, options);
}

/**
 * The handler, built once per isolate: the SDK's stateless `createMcpHandler` answers both protocol eras
 * (2025-11-25 and 2026-07-28) from one factory, holds nothing between requests, and builds each request's server
 * from the door the route hands it in `authInfo.extra`; a 2025-era call without progress is answered as JSON.
 */
export const mcpHandler = {
  async fetch(request: Request, options: HandleOptions & { wantsProgress: boolean }): Promise<Response> {
    const { wantsProgress, ...handle } = options;
    const plain = request.method === "POST" && !wantsProgress && handle.parsedBody !== undefined;
    if (plain && (await isLegacyRequest(request, handle.parsedBody))) return legacyAsJson(request, handle);
    return sdkHandler.fetch(request, handle);
  },
};
