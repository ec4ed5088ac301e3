import { env } from "cloudflare:workers";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker";
import { describe, expect, it } from "vitest";
import { APP_MIME_TYPE, READER_URI } from "../src/mcp/app/resource";
import { DATA_TABLES, call, createBranch, registerBot, registerHuman, storyWithSegments, vote, words } from "./helpers";
import { connectedApp, mcpPost, toolResult, workerFetch } from "./oauth-flow";
import { ORIGIN } from "./pages";
import { recordingD1, unindexedScans } from "./recording-d1";

/**
 * The reader app (MCP Apps): the tools that show a story or a branch point hosts at its one HTML resource in every
 * `tools/list`; every tool is annotated and has an output schema its results and its errors both meet; the resource
 * is listed and read with the app's MIME type and an empty policy; and the app's own read (`reader_view`) answers
 * what the app shows: the path with its forks' choices, scores, the caller's marks, and whether it may write.
 */

const SHOWS = ["search", "get_story", "read_branch"];
const APP_ONLY = ["reader_view"];

type Rpc = { result?: any; error?: { code: number; message: string } };

const rpc = async (bearer: string, method: string, params: Record<string, unknown> = {}) => {
  const res = await mcpPost(bearer, { jsonrpc: "2.0", id: 1, method, params });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await toolResult(res)) as Rpc;
};

/** A tool call's result (the JSON-RPC answer's `result`). */
const tool = async (bearer: string, name: string, args: Record<string, unknown> = {}) => (await rpc(bearer, "tools/call", { name, arguments: args })).result;

const listTools = async (bearer: string) => (await rpc(bearer, "tools/list")).result.tools as any[];

/** The same listing in the 2026-07-28 revision (no initialize; each request carries its envelope). */
async function listToolsModern(bearer: string) {
  const res = await workerFetch()(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "tools/list",
      authorization: `Bearer ${bearer}`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1.0.0" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }),
  });
  return (await toolResult(res)).result.tools as any[];
}

/** A story whose main line is forked after its second segment, the fork with a segment of its own. */
async function forkedStory() {
  const { owner, story, segments } = await storyWithSegments();
  const fork = await createBranch(owner.token, story.id, { fork_at_segment_id: segments[1].id, initial_segment: words(4, "fork") });
  return { owner, story, segments, fork };
}

describe("the reader app: tools/list", () => {
  it("the tools that show a story or a branch carry the app's address; reader_view is the app's alone; no other tool has one", async () => {
    const bot = await registerBot();
    for (const tools of [await listTools(bot.apiKey), await listToolsModern(bot.apiKey)]) {
      for (const t of tools) {
        if (SHOWS.includes(t.name)) {
          expect(t._meta, t.name).toEqual({ ui: { resourceUri: READER_URI }, "ui/resourceUri": READER_URI });
        } else if (APP_ONLY.includes(t.name)) {
          expect(t._meta, t.name).toEqual({ ui: { resourceUri: READER_URI, visibility: ["app"] }, "ui/resourceUri": READER_URI });
        } else {
          expect(t._meta?.ui, t.name).toBeUndefined();
        }
      }
      expect(tools.filter((t) => t._meta?.ui).map((t) => t.name)).toEqual(["search", "get_story", "read_branch", "reader_view"]);
    }
  });

  it("every tool is annotated: reads readOnlyHint, writes destructiveHint false; every tool has an object output schema", async () => {
    const bot = await registerBot();
    const tools = await listTools(bot.apiKey);
    const writes = ["join_branch", "write_segment", "leave_branch", "create_story", "create_branch", "vote", "comment", "bookmark_segment", "follow"];
    for (const t of tools) {
      expect(t.annotations, t.name).toMatchObject({ destructiveHint: false, openWorldHint: false });
      expect(t.outputSchema?.type, t.name).toBe("object");
      if (writes.includes(t.name)) expect(t.annotations.readOnlyHint, t.name).toBe(false);
    }
    for (const name of ["list_stories", "search", "get_story", "read_branch", "reader_view", "list_bookmarks", "list_follows", "read_inbox"]) {
      expect(tools.find((t) => t.name === name)?.annotations.readOnlyHint, name).toBe(true);
    }
  });

  it("the output schema takes each tool's real results and its error results (hosts validate both)", async () => {
    const { owner, story, segments, fork } = await forkedStory();
    const tools = await listTools(owner.token);
    const validator = new CfWorkerJsonSchemaValidator();
    const schemaOf = (name: string) => validator.getValidator(tools.find((t) => t.name === name).outputSchema);
    const results: [string, any][] = [
      ["list_stories", await tool(owner.token, "list_stories", { limit: 2 })],
      ["search", await tool(owner.token, "search", { q: "harbour" })],
      ["get_story", await tool(owner.token, "get_story", { story_id: story.id })],
      ["read_branch", await tool(owner.token, "read_branch", { branch_id: fork.id })],
      ["reader_view", await tool(owner.token, "reader_view", { branch_id: fork.id })],
      ["write_segment", await tool(owner.token, "write_segment", { branch_id: story.main_branch_id, content: words(5, "next") })],
      ["bookmark_segment", await tool(owner.token, "bookmark_segment", { segment_id: segments[0].id })],
      ["follow", await tool(owner.token, "follow", { target_type: "branch", target_id: fork.id })],
      // Errors: a validation error with its fields, a missing branch, a refused vote (on one's own writing).
      ["write_segment", await tool(owner.token, "write_segment", { branch_id: story.main_branch_id, content: "" })],
      ["read_branch", await tool(owner.token, "read_branch", { branch_id: crypto.randomUUID() })],
      ["reader_view", await tool(owner.token, "reader_view", {})],
      ["vote", await tool(owner.token, "vote", { target_type: "segment", target_id: segments[0].id, vote: 1 })],
    ];
    expect(results.filter(([, r]) => r.isError).length).toBe(4);
    for (const [name, result] of results) {
      const checked = schemaOf(name)(result.structuredContent);
      expect(checked.valid, `${name}: ${checked.errorMessage} ${JSON.stringify(result.structuredContent).slice(0, 300)}`).toBe(true);
    }
  });

  it("the text results stay complete for hosts without MCP Apps: the same sentence as before, the data beside it", async () => {
    const { owner, story } = await storyWithSegments();
    const readBranch = (await listTools(owner.token)).find((t) => t.name === "read_branch");
    expect(readBranch._meta.ui.resourceUri).toBe(READER_URI);
    const result = await tool(owner.token, "read_branch", { branch_id: story.main_branch_id });
    expect(result.content).toEqual([{ type: "text", text: `"main line": 4 segments after 0; no bot's turn.` }]);
    expect(result.structuredContent.segments).toHaveLength(4);
  });
});

describe("the reader app: its resource", () => {
  it("resources/list names the app with its MIME type and its policy", async () => {
    const bot = await registerBot();
    const { resources } = (await rpc(bot.apiKey, "resources/list")).result;
    expect(resources).toEqual([
      expect.objectContaining({
        uri: READER_URI,
        name: "storyloom-reader",
        mimeType: APP_MIME_TYPE,
        _meta: { ui: expect.objectContaining({ csp: expect.any(Object) }) },
      }),
    ]);
  });

  it("resources/read gives one self-contained HTML file: nothing remote, no frame, an empty policy and the frame's domain", async () => {
    const bot = await registerBot();
    const { contents } = (await rpc(bot.apiKey, "resources/read", { uri: READER_URI })).result;
    expect(contents).toHaveLength(1);
    const [app] = contents;
    expect(app).toMatchObject({ uri: READER_URI, mimeType: "text/html;profile=mcp-app" });
    expect(app._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
    expect(app._meta.ui.domain).toMatch(/^[0-9a-f]{32}\.claudemcpcontent\.com$/);
    expect(app._meta["openai/widgetDomain"]).toBe(ORIGIN);
    const html: string = app.text;
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain("ui/initialize");
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|<iframe|<frame|@import|url\(\s*["']?https?:/i);
    expect(html.length).toBeLessThan(100_000);
  });

  it("an unknown ui:// address is a JSON-RPC error, not a 500", async () => {
    const bot = await registerBot();
    const answer = await rpc(bot.apiKey, "resources/read", { uri: "ui://storyloom/other.html" });
    // Invalid params (the SDK's "resource not found"), not an unknown method: the server has resources, not this one.
    expect(answer.error).toMatchObject({ code: -32602, message: expect.stringContaining("not found") });
  });
});

describe("the reader app: reader_view", () => {
  it("a page of the path with the choices at the fork, each segment's score, and the caller's votes, bookmarks and follows", async () => {
    const { story, segments, fork } = await forkedStory();
    const reader = await registerHuman();
    expect((await vote(reader.token, "segment", segments[1].id, 1)).status).toBe(201);
    const mark = await call("/me/bookmarks", { token: reader.token, body: { segment_id: segments[0].id } });
    expect(mark.status, mark.text).toBe(201);
    expect((await call("/follows", { token: reader.token, body: { target_type: "story", target_id: story.id } })).status).toBe(201);

    const result = await tool(reader.token, "reader_view", { story_id: story.id });
    expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
    const view = result.structuredContent;
    expect(view.story).toMatchObject({
      id: story.id,
      language: "en",
      min_length: 3,
      max_length: 50,
      tags: [],
      rating: "general",
      main_branch_id: story.main_branch_id,
    });
    expect(view.branch.id).toBe(story.main_branch_id);
    expect(view).toMatchObject({ page: 1, pages: 1, length: 4 });
    const second = view.segments[1];
    expect(second).toMatchObject({ id: segments[1].id, score: 1, my_vote: 1, bookmark_id: null });
    expect(second.choices).toEqual([expect.objectContaining({ id: fork.id, segments_count: 1, fork_sequence: 2 })]);
    expect(view.segments[0]).toMatchObject({ bookmark_id: mark.body.data.id, score: 0, my_vote: 0, author_type: "human" });
    expect(view.following).toEqual({ branch: null, story: expect.any(String) });
    expect(view.viewer).toEqual({ can_write: true, why_not: null });
    expect(result.content[0].text).toContain("page 1 of 1, 4 segments");
  });

  it("the fork's own path: the main line up to the fork, crossing into the branch, and the way the main line goes on", async () => {
    const { owner, fork, segments } = await forkedStory();
    const view = (await tool(owner.token, "reader_view", { branch_id: fork.id })).structuredContent;
    expect(view.segments.map((s: any) => s.sequence_order)).toEqual([1, 2, 3]);
    expect(view.segments[2].crossing).toMatchObject({ title: fork.title });
    expect(view.segments[1].id).toBe(segments[1].id);
    expect(view.segments[1].choices.map((c: any) => c.segments_count)).toEqual([2]);
  });

  it("a grant approved to read only may read, and is told it may not write (and why)", async () => {
    const { story } = await storyWithSegments();
    const person = await registerHuman();
    const app = await connectedApp(person.token, { write: "0" });
    expect(app.scope).toBe("stories:read");
    const view = (await tool(app.access_token, "reader_view", { branch_id: story.main_branch_id })).structuredContent;
    expect(view.viewer.can_write).toBe(false);
    expect(view.viewer.why_not).toMatch(/read only/);
    // Its writes are refused at the door, as before: the host is asked to step up.
    const write = await mcpPost(app.access_token, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "write_segment", arguments: { branch_id: story.main_branch_id, content: words(5) } },
    });
    expect(write.status).toBe(403);
    const writer = await connectedApp(person.token, { write: "1" }, "stories:read stories:write");
    const writable = (await tool(writer.access_token, "reader_view", { branch_id: story.main_branch_id })).structuredContent;
    expect(writable.viewer).toEqual({ can_write: true, why_not: null });
  });

  it("every statement it runs walks an index", async () => {
    const { story, fork } = await forkedStory();
    const reader = await registerHuman();
    const seen = new Set<string>();
    const fetch = workerFetch({ DB: recordingD1(env.DB, (q) => seen.add(q)) });
    for (const args of [{ story_id: story.id }, { branch_id: fork.id }]) {
      const res = await mcpPost(reader.token, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "reader_view", arguments: args } }, fetch);
      expect((await toolResult(res)).result.isError ?? false).toBe(false);
    }
    expect([...seen].some((q) => q.includes("json_each"))).toBe(true);
    expect(await unindexedScans(env.DB, seen, DATA_TABLES)).toEqual([]);
  });

  it("errors in the API's codes: neither id, a missing branch or story, a page past the end, a bad page", async () => {
    const { owner, story } = await storyWithSegments();
    const code = async (args: Record<string, unknown>) => (await tool(owner.token, "reader_view", args)).structuredContent.error.code;
    expect(await code({})).toBe("VALIDATION_ERROR");
    expect(await code({ branch_id: crypto.randomUUID() })).toBe("NOT_FOUND");
    expect(await code({ branch_id: "not-a-uuid" })).toBe("NOT_FOUND");
    expect(await code({ story_id: crypto.randomUUID() })).toBe("NOT_FOUND");
    expect(await code({ branch_id: story.main_branch_id, page: 2 })).toBe("NOT_FOUND");
    expect(await code({ branch_id: story.main_branch_id, page: 0 })).toBe("VALIDATION_ERROR");
    expect(await code({ branch_id: story.main_branch_id, page: "x" })).toBe("VALIDATION_ERROR");
  });
});
