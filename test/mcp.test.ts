import { createExecutionContext, runDurableObjectAlarm, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { app } from "../src/app";
import type { Env } from "../src/env";
import { ERROR_STATUS } from "../src/lib/errors";
import { BASE, branchRoom, call, createStory, join, leave, registerBot, registerHuman, storyWithSegments, submit, words } from "./helpers";
import { ORIGIN } from "./pages";

const MCP_URL = `${ORIGIN}/mcp`;
const ERAS = ["legacy", "modern"] as const;
type Era = (typeof ERAS)[number];

const TOOL_NAMES = [
  "list_stories",
  "search",
  "get_story",
  "read_branch",
  "reader_view",
  "list_bookmarks",
  "join_branch",
  "wait_for_turn",
  "write_segment",
  "leave_branch",
  "create_story",
  "create_branch",
  "vote",
  "comment",
  "bookmark_segment",
  "remove_bookmark",
  "follow",
  "unfollow",
  "list_follows",
  "read_inbox",
  "mark_inbox_read",
];

/** The Worker's own fetch (or `app.request` with some bindings changed), as the SDK's transport calls it. */
function workerFetch(bindings?: Partial<Env>) {
  return async (url: string | URL, init?: RequestInit): Promise<Response> => {
    if (!bindings) return exports.default.fetch(String(url), init);
    const ctx = createExecutionContext();
    const res = await app.request(String(url), init, { ...env, ...bindings }, ctx);
    await waitOnExecutionContext(ctx);
    return res;
  };
}

interface Connect {
  token?: string;
  era?: Era;
  bindings?: Partial<Env>;
}

const clients: Client[] = [];

let readerKey: Promise<string> | undefined;
/** A bot's key for the calls that only read: `/mcp` takes no call without a credential. */
const reader = () => (readerKey ??= registerBot().then((b) => b.apiKey as string));

/** An MCP client as a host runs it: the SDK's Client over its Streamable HTTP transport, pointed at the Worker (a reader's key unless `token`). */
async function connect({ token, era = "legacy", bindings }: Connect = {}): Promise<Client> {
  const headers: Record<string, string> = { "CF-Connecting-IP": `203.0.113.${Math.floor(Math.random() * 250)}` };
  headers.Authorization = `Bearer ${token ?? (await reader())}`;
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: workerFetch(bindings), requestInit: { headers } });
  const client = new Client({ name: "storyloom-test", version: "1.0.0" }, era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {});
  await client.connect(transport);
  clients.push(client);
  return client;
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
});

interface Result {
  isError?: boolean;
  structuredContent?: any;
  content: { type: string; text?: string }[];
}

const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as Result;

/** A successful result's structured content. */
async function ok(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await callTool(client, name, args);
  expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
  expect(result.content[0].type).toBe("text");
  return result.structuredContent;
}

/** An error result: `isError`, the REST error as structured content, and a text saying what to do. */
async function failed(client: Client, name: string, args: Record<string, unknown>, code: string) {
  const result = await callTool(client, name, args);
  expect(result.isError, JSON.stringify(result)).toBe(true);
  expect(result.structuredContent.error.code, JSON.stringify(result)).toBe(code);
  expect(typeof result.structuredContent.error.message).toBe("string");
  expect(result.content[0].text).toContain(code);
  expect(result.content[0].text).toContain("What to do:");
  return result.structuredContent.error as { code: string; message: string; details?: any };
}

/**
 * A raw JSON-RPC POST to /mcp (a host's first request: no session, 2025 revision), or to `url` with some bindings
 * changed; with a reader's key unless `headers` say `authorization` (an empty one: none).
 */
const rawPost = async (
  headers: Record<string, string>,
  body: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list" },
  { url = MCP_URL, bindings }: { url?: string; bindings?: Partial<Env> } = {},
) => {
  const { authorization = `Bearer ${await reader()}`, ...rest } = headers;
  return workerFetch(bindings)(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...rest,
      ...(authorization ? { authorization } : {}),
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
};

/** A 2026-07-28 request's `_meta` envelope, as the SDK's client sends it. */
const envelope = (protocolVersion = "2026-07-28") => ({
  "io.modelcontextprotocol/protocolVersion": protocolVersion,
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
});

describe("the MCP door: listing", () => {
  for (const era of ERAS) {
    it(`lists every tool with an input schema (with descriptions) and an output schema, and the prompt (${era} era)`, async () => {
      const client = await connect({ era });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES);
      for (const tool of tools) {
        expect(tool.description?.length, tool.name).toBeGreaterThan(40);
        expect(tool.inputSchema.type).toBe("object");
        expect(tool.outputSchema?.type, tool.name).toBe("object");
        for (const [field, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
          expect((schema as { description?: string }).description, `${tool.name}.${field}`).toBeTruthy();
        }
      }
      const write = tools.find((t) => t.name === "write_segment")!;
      expect(write.inputSchema.required).toEqual(expect.arrayContaining(["branch_id", "content"]));
      expect(write.annotations?.readOnlyHint).toBe(false);
      expect(tools.find((t) => t.name === "read_branch")!.annotations?.readOnlyHint).toBe(true);
      // Numbers in descriptions come from the config.
      expect(write.description).toContain(`${env.LIMIT_SEGMENTS_PER_HOUR} segments per hour`);
      const { prompts } = await client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(["continue_story"]);
      expect(prompts[0].arguments?.map((a) => a.name)).toEqual(["branch_id"]);
    });
  }

  it("every tool is named in the OpenAPI document's description", async () => {
    const doc = (await call("/openapi.json")).body;
    expect(doc.info.description).toContain("/mcp");
    expect(doc.info.description).toContain("/llms.txt");
    for (const name of TOOL_NAMES) expect(doc.info.description).toContain(name);
  });
});

describe("the MCP door: round trips", () => {
  it("each read tool takes one D1 round trip with a JWT, two with a key (its look-up), as over REST (get_story's three reads share one batch)", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    const calls: [string, Record<string, unknown>][] = [
      ["list_stories", { limit: 5 }],
      ["search", { q: "once upon" }],
      ["get_story", { story_id: story.id }],
      ["read_branch", { branch_id: story.main_branch_id }],
      ["list_bookmarks", {}],
    ];
    for (const [name, args] of calls) {
      for (const [credential, trips] of [
        [bot.token, "1 round trip"],
        [bot.apiKey, "2 round trips"],
      ]) {
        const res = await rawPost(
          { authorization: `Bearer ${credential}` },
          { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
        );
        const body = await res.text();
        expect(res.status, body).toBe(200);
        expect(body, name).toContain('"result"');
        expect(body, name).not.toContain('"isError":true');
        expect(res.headers.get("server-timing"), `${name} ${credential.slice(0, 4)}`).toMatch(new RegExp(`^d1;desc="${trips}";`));
      }
    }
  });
});

describe("the MCP door: credentials and origin", () => {
  it("without a credential: 401 with the OAuth challenge (a host then signs in); anonymous reading is the REST API's", async () => {
    const res = await rawPost({ authorization: "" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`);
    expect((await call("/stories")).status).toBe(200);
  });

  it("a human's credential uses the read tools; a write tool's refusal is the REST API's", async () => {
    const { story, segments } = await storyWithSegments();
    const client = await connect({ token: (await registerHuman()).token });
    const list = await ok(client, "list_stories", { limit: 100 });
    expect(list.stories.length).toBeGreaterThan(0);
    expect(list).toHaveProperty("count");
    const got = await ok(client, "get_story", { story_id: story.id });
    expect(got.story.id).toBe(story.id);
    expect(got.story.main_branch_id).toBe(story.main_branch_id);
    expect(got.branches[0].id).toBe(story.main_branch_id);
    expect(got.tree[0].id).toBe(story.main_branch_id);
    const read = await ok(client, "read_branch", { branch_id: story.main_branch_id });
    expect(read.segments.map((s: any) => s.id)).toEqual(segments.map((s) => s.id));
    expect(read.queue).toEqual({ turn_mode: false, current_turn: null, resumes_at: null, members: [] });
    expect(read.story.language).toBe("en");
    await failed(client, "join_branch", { branch_id: story.main_branch_id }, "FORBIDDEN");
    await failed(client, "create_story", { title: "x" }, "VALIDATION_ERROR");
    expect((await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments).toHaveLength(segments.length);
  });

  it("an invalid credential is HTTP 401 with WWW-Authenticate: Bearer (and the host's connect fails)", async () => {
    for (const credential of ["garbage", "slk_not_a_key", "slt_not_a_token", "a.b.c"]) {
      const res = await rawPost({ authorization: `Bearer ${credential}` });
      expect(res.status, credential).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
    }
    const res = await rawPost({ authorization: "Basic abc" });
    expect(res.status).toBe(401);
    await expect(connect({ token: "garbage" })).rejects.toThrow();
  });

  it("every credential the REST API takes works: a bot's key and JWT, a human's JWT", async () => {
    const bot = await registerBot();
    const human = await registerHuman();
    for (const token of [bot.apiKey, bot.token, human.token]) {
      const client = await connect({ token });
      await ok(client, "list_stories");
    }
  });

  it("a page on another site may not drive /mcp; the site's own pages and clients without Origin may", async () => {
    for (const origin of ["https://evil.example", "null", "https://storyloom.test.evil.example"]) {
      const res = await rawPost({ origin });
      expect(res.status, origin).toBe(403);
      expect(((await res.json()) as any).error.code).toBe("FORBIDDEN");
    }
    expect((await rawPost({ origin: ORIGIN })).status).toBe(200);
    const plain = await rawPost({});
    expect(plain.status).toBe(200);
    // A 2025-era call that asked for no progress is one JSON body (no SSE stream to frame and read back).
    expect(plain.headers.get("content-type")).toMatch(/^application\/json/);
    expect(((await plain.json()) as { result: { tools: unknown[] } }).result.tools.length).toBe(TOOL_NAMES.length);
  });

  it("a request sent to another host is refused (DNS rebinding), with or without its Origin; the site's own host passes", async () => {
    const refused = [
      rawPost({ host: "evil.example.com", origin: "http://evil.example.com" }), // the conformance suite's rebinding request
      rawPost({ origin: "http://evil.example.com" }, undefined, { url: "http://evil.example.com/mcp" }),
      rawPost({}, undefined, { url: "http://evil.example.com/mcp" }),
      rawPost({ host: "localhost:8787" }), // loopback names are the site's only in development
    ];
    for (const res of await Promise.all(refused)) {
      expect(res.status).toBe(403);
      expect(((await res.json()) as any).error).toMatchObject({ code: "FORBIDDEN", message: `The MCP endpoint answers at ${ORIGIN} only` });
    }
    expect((await rawPost({ host: "Storyloom.TEST", origin: ORIGIN })).status).toBe(200);
    // The API and the pages answer at any host (only /mcp checks it: docs/decisions.md).
    expect((await exports.default.fetch("http://evil.example.com/api/v1/health")).status).toBe(200);
  });

  it("in development (a loopback PUBLIC_ORIGIN) any loopback name and port is the site's; other names are refused", async () => {
    const bindings = { PUBLIC_ORIGIN: "http://127.0.0.1:8787" };
    for (const url of ["http://127.0.0.1:8787/mcp", "http://localhost:9000/mcp", "http://[::1]:8787/mcp"]) {
      expect((await rawPost({ origin: new URL(url).origin }, undefined, { url, bindings })).status, url).toBe(200);
    }
    // A rebound page: its own name in the address, the Host and the Origin alike.
    for (const host of ["evil.example.com:8787", "127.0.0.1.evil.example.com", "localhost.evil.example.com:8787"]) {
      const res = await rawPost({ origin: `http://${host}` }, undefined, { url: `http://${host}/mcp`, bindings });
      expect(res.status, host).toBe(403);
    }
  });

  it("bad input is an answer, never a crash: not JSON, not JSON-RPC, unknown tool, wrong argument types", async () => {
    for (const body of ["{not json", "[]", '{"jsonrpc":"2.0"}', '"text"']) {
      const res = await rawPost({}, body);
      expect(res.status, body).toBeGreaterThanOrEqual(400);
      expect(res.status, body).toBeLessThan(500);
    }
    const client = await connect();
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow();
    const error = await failed(client, "read_branch", { branch_id: 5, after: "x" }, "VALIDATION_ERROR");
    expect(error.details.fields.map((f: any) => f.field).sort()).toEqual(["after", "branch_id"]);
    await failed(client, "read_branch", { branch_id: "not-a-uuid" }, "NOT_FOUND");
    await failed(client, "get_story", { story_id: crypto.randomUUID() }, "NOT_FOUND");
  });
});

describe("the MCP door: subscriptions/listen (2026-07-28)", () => {
  it("is acknowledged with nothing to notify (the lists never change), then ended; the connection serves on", async () => {
    const client = await connect({ era: "modern" });
    expect(client.getServerCapabilities()).toMatchObject({ tools: { listChanged: false }, prompts: { listChanged: false } });
    // The SDK's client resolves listen() on the acknowledgment only, and `closed` on the stream's end.
    const subscription = await client.listen({ toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true });
    expect(subscription.honoredFilter).toEqual({});
    expect(await subscription.closed).toBe("graceful");
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(TOOL_NAMES);
  });
});

describe("the MCP door: each tool", () => {
  it("create_story, get_story, create_branch, join_branch, wait_for_turn, write_segment, read_branch, vote, comment, leave_branch", async () => {
    const human = await registerHuman();
    const bot = await registerBot();
    const h = await connect({ token: human.token, era: "modern" });
    const b = await connect({ token: bot.apiKey });
    const story = await ok(h, "create_story", {
      title: "The tide",
      background: "A harbour town where the tide never comes back.",
      starter: "The sea left on a Tuesday.",
      initial_segments: [words(4, "a"), words(4, "b"), words(4, "c")],
      language: "en",
      min_length: 3,
      max_length: 40,
    });
    expect(story.main_branch_id).toBeTruthy();
    expect((await call(`/stories/${story.id}`)).body.data.title).toBe("The tide");
    const branch = await ok(h, "create_branch", { story_id: story.id, title: "The other shore", description: "where the sea went" });
    expect(branch.story_id).toBe(story.id);
    expect(branch.parent_branch_id).toBe(story.main_branch_id);

    const joined = await ok(b, "join_branch", { branch_id: story.main_branch_id, role: "narrator" });
    expect(joined).toMatchObject({ branch_id: story.main_branch_id, bot_id: bot.id, your_turn_order: 1, current_turn: bot.id, already_queued: false });
    expect((await ok(b, "join_branch", { branch_id: story.main_branch_id })).already_queued).toBe(true);

    const turn = await ok(b, "wait_for_turn", { branch_id: story.main_branch_id });
    expect(turn).toMatchObject({ your_turn: true, branch_id: story.main_branch_id, estimated_wait: 0 });
    expect(turn.current_turn.bot_id).toBe(bot.id);
    expect(turn.context).toMatchObject({ story_background: story.background, language: "en", min_length: 3, max_length: 40 });
    expect(turn.context.length_rule).toContain("between 3 and 40 words");
    expect(turn.context.previous_segments.at(-1).content).toBe(words(4, "c"));

    const written = await ok(b, "write_segment", { branch_id: story.main_branch_id, content: words(6, "tide") });
    expect(written).toMatchObject({ sequence_order: 5, bot_id: bot.id, next_bot: { id: bot.id } });
    const read = await ok(h, "read_branch", { branch_id: story.main_branch_id, after: 4 });
    expect(read.segments.map((s: any) => s.id)).toEqual([written.id]);
    expect(read.queue.current_turn.bot_id).toBe(bot.id);

    const voted = await ok(h, "vote", { target_type: "segment", target_id: written.id, vote: 1 });
    expect(voted.vote).toMatchObject({ target_id: written.id, vote: 1 });
    expect(voted.new_score).toBe(1);
    const comment = await ok(h, "comment", { branch_id: story.main_branch_id, content: "Lovely." });
    expect(comment).toMatchObject({ branch_id: story.main_branch_id, content: "Lovely.", author_id: human.id });

    const left = await ok(b, "leave_branch", { branch_id: story.main_branch_id });
    expect(left).toMatchObject({ left: true, queue_length: 0, current_turn: null });

    const prompt = await h.getPrompt({ name: "continue_story", arguments: { branch_id: story.main_branch_id } });
    const text = (prompt.messages[0].content as { text: string }).text;
    expect(text).toContain(story.background);
    expect(text).toContain("between 3 and 40 words");
    expect(text).toContain(words(6, "tide"));
    await expect(h.getPrompt({ name: "continue_story", arguments: { branch_id: crypto.randomUUID() } })).rejects.toThrow(/NOT_FOUND/);
  });

  it("error codes come back as error results: NOT_YOUR_TURN, SEGMENT_TOO_SHORT, VALIDATION_ERROR, FORBIDDEN, NOT_FOUND", async () => {
    const { story } = await storyWithSegments();
    const [a, bBot] = [await registerBot(), await registerBot()];
    const human = await registerHuman();
    const ca = await connect({ token: a.token });
    const cb = await connect({ token: bBot.apiKey, era: "modern" });
    await ok(ca, "join_branch", { branch_id: story.main_branch_id });
    await ok(cb, "join_branch", { branch_id: story.main_branch_id });
    const notYours = await failed(cb, "write_segment", { branch_id: story.main_branch_id, content: words(5) }, "NOT_YOUR_TURN");
    expect(notYours.details).toMatchObject({ current_turn: a.id, your_bot_id: bBot.id });
    const short = await failed(ca, "write_segment", { branch_id: story.main_branch_id, content: "too short" }, "SEGMENT_TOO_SHORT");
    expect(short.details).toMatchObject({ current_length: 2, min_length: 3 });
    const invalid = await failed(ca, "vote", { target_type: "segment", target_id: story.main_branch_id, vote: 5 }, "VALIDATION_ERROR");
    expect(invalid.details.fields.map((f: any) => f.field)).toEqual(["vote"]);
    await failed(ca, "write_segment", { branch_id: story.main_branch_id }, "VALIDATION_ERROR");
    const h = await connect({ token: human.token });
    await failed(h, "join_branch", { branch_id: story.main_branch_id }, "FORBIDDEN");
    await failed(h, "wait_for_turn", { branch_id: story.main_branch_id }, "FORBIDDEN");
    const other = await registerBot();
    await failed(await connect({ token: other.token }), "wait_for_turn", { branch_id: story.main_branch_id }, "NOT_FOUND");
    await failed(ca, "wait_for_turn", { branch_id: story.main_branch_id, timeout_seconds: 56 }, "VALIDATION_ERROR");
  });
});

describe("the MCP door: limits shared with REST", () => {
  it("a bot at its REST vote limit is refused over MCP with RATE_LIMIT_EXCEEDED and retry_after, and the reverse", async () => {
    const { story, segments } = await storyWithSegments();
    const bot = await registerBot();
    const bindings = { LIMIT_VOTES_PER_HOUR: "1" };
    const rest = await call("/votes", { token: bot.token, body: { target_type: "segment", target_id: segments[1].id, vote: 1 }, env: bindings });
    expect(rest.status, rest.text).toBe(201);
    const client = await connect({ token: bot.token, bindings });
    const refused = await failed(client, "vote", { target_type: "segment", target_id: segments[2].id, vote: 1 }, "RATE_LIMIT_EXCEEDED");
    expect(refused.details.retry_after).toBeGreaterThan(0);
    expect(refused.details.limit).toBe("1 per hour");
    // The other way round: a write over MCP counts against REST.
    const other = await registerBot();
    const c2 = await connect({ token: other.token, bindings });
    await ok(c2, "vote", { target_type: "segment", target_id: segments[1].id, vote: -1 });
    const again = await call("/votes", { token: other.token, body: { target_type: "segment", target_id: segments[2].id, vote: 1 }, env: bindings });
    expect(again.status).toBe(429);
    expect(story.id).toBeTruthy();
  });

  it("segment limits are the room's, whichever door: a bot at its hourly segment limit over REST is refused over MCP", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const bot = await registerBot();
    const bindings = { LIMIT_SEGMENTS_PER_HOUR: "1" };
    const first = await call(`/branches/${story.main_branch_id}/segments`, { token: bot.token, body: { content: words(4) }, env: bindings });
    expect(first.status, first.text).toBe(201);
    const client = await connect({ token: bot.token, bindings });
    const refused = await failed(client, "write_segment", { branch_id: story.main_branch_id, content: words(4) }, "RATE_LIMIT_EXCEEDED");
    expect(refused.details.retry_after).toBeGreaterThan(0);
  });

  it("a person writes at their own pace over MCP too (3 segments on one branch, 3 forks); a bot's second fork of the hour is refused", async () => {
    const human = await registerHuman();
    const story = await createStory(human.token);
    const bot = await registerBot();
    const bindings = { LIMIT_SEGMENTS_PER_BRANCH_PER_HOUR: "2", LIMIT_BRANCHES_PER_HOUR: "1", LIMIT_HUMAN_BRANCHES_PER_HOUR: "10" };
    const person = await connect({ token: human.token, bindings });
    for (let i = 0; i < 3; i++) await ok(person, "write_segment", { branch_id: story.main_branch_id, content: words(4, `p${i}`) });
    for (let i = 0; i < 3; i++) await ok(person, "create_branch", { story_id: story.id, title: `what if ${i}` });
    const client = await connect({ token: bot.token, bindings });
    await ok(client, "create_branch", { story_id: story.id, title: "a bot's fork" });
    const refused = await failed(client, "create_branch", { story_id: story.id, title: "another" }, "RATE_LIMIT_EXCEEDED");
    expect(refused.details.limit).toBe("1 per hour");
  });

  it("a join that finds the bot already queued counts nothing, over MCP as over REST", async () => {
    const { story } = await storyWithSegments();
    const bot = await registerBot();
    const bindings = { LIMIT_JOINS_PER_HOUR: "2" };
    const client = await connect({ token: bot.token, bindings });
    await ok(client, "join_branch", { branch_id: story.main_branch_id });
    expect((await ok(client, "join_branch", { branch_id: story.main_branch_id })).already_queued).toBe(true);
    const [second, third] = [(await storyWithSegments()).story, (await storyWithSegments()).story];
    const joined = await call(`/branches/${second.main_branch_id}/join`, { token: bot.token, body: {}, env: bindings });
    expect(joined.status, joined.text).toBe(201);
    await failed(client, "join_branch", { branch_id: third.main_branch_id }, "RATE_LIMIT_EXCEEDED");
  });
});

describe("the MCP door: idempotency as over REST", () => {
  it("a repeated idempotency_key answers the first result and writes nothing; another call under it is IDEMPOTENCY_KEY_REUSED", async () => {
    const { story, segments } = await storyWithSegments();
    const human = await registerHuman();
    const client = await connect({ token: human.token });
    const args = { branch_id: story.main_branch_id, content: "Keep the lantern lit.", idempotency_key: "comment-1" };
    const first = await ok(client, "comment", args);
    const again = await ok(client, "comment", args);
    expect(again.id).toBe(first.id);
    const listed = await call(`/branches/${story.main_branch_id}/comments`);
    expect(listed.body.data.comments.filter((c: { content: string }) => c.content === args.content)).toHaveLength(1);
    await failed(client, "comment", { ...args, content: "Another comment" }, "IDEMPOTENCY_KEY_REUSED");
    await failed(client, "vote", { target_type: "segment", target_id: segments[1].id, vote: 1, idempotency_key: "comment-1" }, "IDEMPOTENCY_KEY_REUSED");
    await failed(client, "comment", { ...args, idempotency_key: "" }, "VALIDATION_ERROR");
  });

  it("write_segment: a retry with the key answers the same segment, even after the turn has passed", async () => {
    const { story } = await storyWithSegments();
    const [a, b] = [await registerBot(), await registerBot()];
    await join(a.token, story.main_branch_id);
    await join(b.token, story.main_branch_id);
    const client = await connect({ token: a.token });
    const args = { branch_id: story.main_branch_id, content: words(4), idempotency_key: "seg-1" };
    const first = await ok(client, "write_segment", args);
    const again = await ok(client, "write_segment", args);
    expect(again.id).toBe(first.id);
    expect(again.sequence_order).toBe(first.sequence_order);
    const listed = await call(`/branches/${story.main_branch_id}/segments?limit=100`);
    expect(listed.body.data.segments.filter((s: { id: string }) => s.id === first.id)).toHaveLength(1);
    expect(listed.body.data.segments.at(-1).id).toBe(first.id);
  });

  it("create_story and join_branch take the key too (the limit counts the first call only)", async () => {
    const human = await registerHuman();
    const client = await connect({ token: human.token, bindings: { LIMIT_STORIES_PER_HOUR: "1" } });
    const body = {
      title: "Keyed",
      background: "A story told once, however often it is asked for.",
      starter: "It began.",
      initial_segments: [words(4), words(4), words(4)],
      language: "en",
      min_length: 1,
      max_length: 50,
      idempotency_key: "story-1",
    };
    const first = await ok(client, "create_story", body);
    expect((await ok(client, "create_story", body)).id).toBe(first.id);
    const bot = await registerBot();
    const botClient = await connect({ token: bot.token });
    const joined = await ok(botClient, "join_branch", { branch_id: first.main_branch_id, idempotency_key: "join-1" });
    expect((await ok(botClient, "join_branch", { branch_id: first.main_branch_id, idempotency_key: "join-1" })).your_turn_order).toBe(joined.your_turn_order);
  });
});

describe("the MCP door: wait_for_turn", () => {
  it("two agents alternate through wait_for_turn and write_segment, with contiguous sequences", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const bots = [await registerBot(), await registerBot()];
    const agents = [await connect({ token: bots[0].apiKey }), await connect({ token: bots[1].token, era: "modern" })];
    for (const agent of agents) await ok(agent, "join_branch", { branch_id: branch });
    const written: number[] = [];
    const agent = async (i: number) => {
      for (let turn = 0; turn < 3; turn++) {
        let wait = await ok(agents[i], "wait_for_turn", { branch_id: branch, timeout_seconds: 20 });
        while (!wait.your_turn) wait = await ok(agents[i], "wait_for_turn", { branch_id: branch, timeout_seconds: 20 });
        const seg = await ok(agents[i], "write_segment", { branch_id: branch, content: words(5, `agent${i}turn${turn}`) });
        written.push(seg.sequence_order);
        expect(seg.next_bot.id).toBe(bots[1 - i].id);
      }
    };
    await Promise.all([agent(0), agent(1)]);
    expect(written).toEqual([5, 6, 7, 8, 9, 10]);
    const read = await ok(agents[0], "read_branch", { branch_id: branch, after: 4 });
    expect(read.segments.map((s: any) => s.author_name)).toEqual([0, 1, 0, 1, 0, 1].map((i) => bots[i].name));
  });

  it("returns when the holder leaves, at the timeout with your_turn false, and when a turn times out to the caller", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const [a, b, c] = [await registerBot(), await registerBot(), await registerBot()];
    await join(a.token, branch);
    const cb = await connect({ token: b.token });
    await ok(cb, "join_branch", { branch_id: branch });

    let started = Date.now();
    const timedOut = await ok(cb, "wait_for_turn", { branch_id: branch, timeout_seconds: 1 });
    expect(timedOut).toMatchObject({ your_turn: false, queued: true, context: null });
    expect(timedOut.current_turn.bot_id).toBe(a.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    started = Date.now();
    const waiting = ok(cb, "wait_for_turn", { branch_id: branch, timeout_seconds: 20 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await leave(a.token, branch)).status).toBe(200);
    const woken = await waiting;
    expect(woken.your_turn).toBe(true);
    expect(Date.now() - started).toBeLessThan(5000);

    // c queues behind b; b's turn times out (the room's alarm) and c's wait returns.
    const cc = await connect({ token: c.token });
    await ok(cc, "join_branch", { branch_id: branch });
    const waitingC = ok(cc, "wait_for_turn", { branch_id: branch, timeout_seconds: 20 });
    await new Promise((r) => setTimeout(r, 200));
    expect(await runDurableObjectAlarm(branchRoom(branch))).toBe(true);
    const timedTo = await waitingC;
    expect(timedTo.your_turn).toBe(true);
    expect(timedTo.current_turn.bot_id).toBe(c.id);
    expect((await submit(c.token, branch, words(4))).status).toBe(201);
  });

  it("a bot sitting out (a limit refused it at its turn) is told until when; while all sit out, when the turn resumes", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const bot = await registerBot();
    await join(bot.token, branch);
    const refused = await call(`/branches/${branch}/segments`, { token: bot.token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } });
    const until = refused.body.error.details.sits_out_until;
    const client = await connect({ token: bot.token });
    const result = await callTool(client, "wait_for_turn", { branch_id: branch, timeout_seconds: 1 });
    expect(result.structuredContent).toMatchObject({
      your_turn: false,
      queued: true,
      current_turn: null,
      sits_out_until: until,
      resumes_at: until,
      context: null,
    });
    expect((result.content[0] as { text: string }).text).toContain(`you sit out until ${until}`);
  });

  it("a bot that leaves while it waits is answered at once (not queued)", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const [a, b] = [await registerBot(), await registerBot()];
    await join(a.token, branch);
    await join(b.token, branch);
    const cb = await connect({ token: b.token });
    const waiting = ok(cb, "wait_for_turn", { branch_id: branch, timeout_seconds: 20 });
    await new Promise((r) => setTimeout(r, 200));
    await leave(b.token, branch);
    expect(await waiting).toMatchObject({ your_turn: false, queued: false });
  });

  it("sends progress while it waits when the client asked for it", { timeout: 30_000 }, async () => {
    const { story } = await storyWithSegments();
    const [a, b] = [await registerBot(), await registerBot()];
    await join(a.token, story.main_branch_id);
    await join(b.token, story.main_branch_id);
    const cb = await connect({ token: b.token });
    const updates: { progress: number; total?: number }[] = [];
    const result = (await cb.callTool(
      { name: "wait_for_turn", arguments: { branch_id: story.main_branch_id, timeout_seconds: 11 } },
      { onprogress: (p) => void updates.push(p) },
    )) as Result;
    expect(result.structuredContent.your_turn).toBe(false);
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates[0].total).toBe(11);
  });
});

describe("the agents' guide", () => {
  it("GET /llms.txt and /api/v1/guide.md: the same Markdown, with the MCP URL and every error code, cached by ETag", async () => {
    const res = await exports.default.fetch(`${ORIGIN}/llms.txt`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/markdown/);
    const text = await res.text();
    const etag = res.headers.get("etag")!;
    expect(etag).toBeTruthy();
    expect(text).toContain(MCP_URL);
    for (const code of Object.keys(ERROR_STATUS)) expect(text).toContain(`\`${code}\``);
    for (const name of TOOL_NAMES) expect(text).toContain(`\`${name}\``);
    const again = await exports.default.fetch(`${ORIGIN}/llms.txt`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    const api = await call("/guide.md");
    expect(api.status).toBe(200);
    expect(api.headers.get("content-type")).toMatch(/^text\/markdown/);
    expect(api.text).toBe(text);
  });

  it("states no number that differs from the config", async () => {
    const text = await (await exports.default.fetch(`${ORIGIN}/llms.txt`)).text();
    const rows = [...text.matchAll(/^\| [^|]+ \| (\d+) \| `([A-Z_]+)` \|$/gm)];
    expect(rows.length).toBeGreaterThanOrEqual(17);
    for (const [, n, name] of rows) expect(n, name).toBe((env as unknown as Record<string, string>)[name]);
    expect(text).toContain(`\`TURN_TIMEOUT_SECONDS\` = ${env.TURN_TIMEOUT_SECONDS}`);
    expect(text).toContain(`${Math.round(Number(env.JWT_TTL_SECONDS) / 3600)}-hour access token`);
    // With other numbers in the config, the guide says those.
    const ctx = createExecutionContext();
    const changed = await app.request(`${ORIGIN}/llms.txt`, {}, { ...env, LIMIT_VOTES_PER_HOUR: "7", TURN_TIMEOUT_SECONDS: "120" }, ctx);
    const other = await changed.text();
    expect(other).toContain("| votes, per account per hour | 7 | `LIMIT_VOTES_PER_HOUR` |");
    expect(other).toContain("A turn lasts 2 minutes");
  });
});

describe("the MCP door: logged like every other request", () => {
  it("one access-log line per request, its route /mcp with the method and tool, the caller kind and the error code", async () => {
    const bot = await registerBot();
    const client = await connect({ token: bot.token, bindings: { LOG_REQUESTS: "true" } });
    const lines: string[] = [];
    const spy = vi.spyOn(console, "info").mockImplementation((line: unknown) => void lines.push(String(line)));
    try {
      await ok(client, "list_stories");
      await failed(client, "read_branch", { branch_id: crypto.randomUUID() }, "NOT_FOUND");
      // Written once each response is out.
      await vi.waitFor(() => expect(lines.some((l) => l.includes("tools/call read_branch"))).toBe(true));
    } finally {
      spy.mockRestore();
    }
    const logged = lines.map((l) => JSON.parse(l));
    const list = logged.find((l) => l.route === "/mcp tools/call list_stories");
    expect(list).toMatchObject({ actor: "bot", error: null });
    expect(list.request_id).toBeTruthy();
    expect(logged.find((l) => l.route === "/mcp tools/call read_branch")).toMatchObject({ actor: "bot", error: "NOT_FOUND" });
  });

  it("a malformed or version-mismatched request is the client's error: a warning, not an error", async () => {
    const warned: string[] = [];
    const errors: unknown[] = [];
    const warn = vi.spyOn(console, "warn").mockImplementation((line: unknown) => void warned.push(String(line)));
    const error = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args));
    const modern = (version: string, headers: Record<string, string> = {}) =>
      rawPost(
        { "mcp-protocol-version": version, "mcp-method": "tools/list", ...headers },
        { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope(version) } },
      );
    try {
      const answers = [
        await rawPost({}, "[]"), // an empty batch
        await rawPost(
          { "mcp-protocol-version": "2026-07-28" },
          { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } } },
        ),
        await modern("2099-01-01"), // a revision we do not serve
        await rawPost({ "mcp-protocol-version": "2025-11-25" }, { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: envelope() } }),
        await modern("2026-07-28", { "content-type": "text/plain" }),
      ];
      expect(answers.map((r) => r.status)).toEqual([400, 400, 400, 400, 415]);
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
    expect(errors).toEqual([]);
    expect(warned.map((l) => JSON.parse(l))).toEqual(
      Array.from({ length: 5 }, () => expect.objectContaining({ event: "mcp request refused", message: expect.any(String) })),
    );
  });

  it("adds nothing to the API's own answers (no MCP headers on REST reads)", async () => {
    const res = await call("/health");
    expect(res.status).toBe(200);
    expect(BASE.endsWith("/api/v1")).toBe(true);
  });
});
