// `npm run test:browser`, its third part (alone: `node test/browser/oauth-host.mjs [--port 8794] [--host-port 8795]`):
// an MCP host connecting to Storyloom through OAuth with its person in a headless Debian Chromium, where the host's
// callback is on ANOTHER origin than Storyloom (its own port), as Claude Code's, Cursor's or claude.ai's is. The
// consent page's Approve and Deny answer with a redirect there, and Chromium checks the page's CSP `form-action`
// against that redirect: a same-origin callback (test/browser/reader.mjs) could never show it blocked.
//
// The host is a tiny Node HTTP server (its callback) with the official MCP client (@modelcontextprotocol/client):
// it is refused with the 401 challenge, discovers the metadata, registers itself (DCR), starts the authorization
// with PKCE, receives the code at its callback, exchanges it, then lists the tools and writes a segment.
// The walk: the person signs in on the way and approves as themselves (the host asked for both scopes, writing is
// ticked); another host is approved as a new bot made on the consent page, which joins and writes; a third is
// denied and hears `error=access_denied` at its callback; a fourth is approved read-only, its first write is 403
// `insufficient_scope`, the client steps up, the person approves writing, and the write goes through. Connected
// apps then lists exactly the three approved apps. No page may break its CSP, throw, or reach past 127.0.0.1.
// Prints `N passed, M failed` last and exits non-zero on any failure.
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { api as apiOf, words } from "../../bench/lib.mjs";
import { HostProvider } from "../../bench/oauth-agent.mjs";
import { assert, checks, cleanup, launchBrowser, startWorker } from "./harness.mjs";

const { values: opt } = parseArgs({
  options: { port: { type: "string", default: "8794" }, "host-port": { type: "string", default: "8795" }, "inspector-port": { type: "string" } },
});
const started = Date.now();
const t = checks();
const TIMEOUT = 15_000;
const run = Math.random().toString(36).slice(2, 8);
const person = { username: `host_person_${run}`, email: `host_person_${run}@example.com`, password: "correct horse battery" };

// ---- the MCP host: its callback server, on its own origin ----------------------------------------------------

const hostOrigin = `http://127.0.0.1:${opt["host-port"]}`;
const CALLBACK = `${hostOrigin}/callback`;
/** Callbacks the host has received and not yet handed out, and those awaited. */
const received = [];
const awaiting = [];
const hostServer = createServer((req, res) => {
  const url = new URL(req.url ?? "/", hostOrigin);
  if (url.pathname !== "/callback") return res.writeHead(404).end();
  const next = awaiting.shift();
  next ? next(url.searchParams) : received.push(url.searchParams);
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end('<!doctype html><html lang="en"><title>Host</title><h1>Back at the host</h1><p>You can close this tab.</p></html>');
});
/** The next query the host's callback receives. */
const nextCallback = () =>
  new Promise((resolve, reject) => {
    if (received.length) return resolve(received.shift());
    const timer = setTimeout(() => reject(new Error("the host's callback was never reached")), TIMEOUT);
    awaiting.push((q) => {
      clearTimeout(timer);
      resolve(q);
    });
  });

// ---- Storyloom and the person's browser ---------------------------------------------------------------------

let worker;
let browser;
try {
  const port = Number(opt.port);
  const origin = `http://127.0.0.1:${port}`;
  await new Promise((resolve, reject) => hostServer.once("error", reject).listen(Number(opt["host-port"]), "127.0.0.1", resolve));
  // Its issuer and resource are its own address (the default is `npm run dev`'s port).
  worker = await startWorker({ port, vars: { PUBLIC_ORIGIN: origin }, inspectorPort: opt["inspector-port"] });
  browser = await launchBrowser();
  const page = await browser.page();
  page.setDefaultTimeout(TIMEOUT);
  const mcpUrl = new URL(`${origin}/mcp`);

  const api = apiOf(`${origin}/api/v1`);
  const token = (await api("/auth/register", { body: { ...person, user_type: "human" } })).access_token;
  const storyOf = async (title) =>
    (
      await api("/stories", {
        token,
        body: {
          title: `${title} ${run}`,
          background: "A harbour town where the tide never comes back.",
          starter: "Once upon a time.",
          initial_segments: [words(5, "a"), words(5, "b"), words(5, "c")],
          language: "en",
          min_length: 3,
          max_length: 50,
        },
      })
    ).data;
  const [mine, bots, stepped] = [await storyOf("Written by me"), await storyOf("Written by a bot"), await storyOf("Stepped up")];
  const lastSegment = async (branchId) => (await api(`/branches/${branchId}/segments`)).data.segments.at(-1);

  /** A host: its client, transport and provider. The first connect is refused (401) and leaves the authorize URL. */
  async function newHost(name) {
    // The person's browser is driven by the walk: the host only keeps where it was sent.
    const provider = new HostProvider(
      origin,
      (url) => {
        provider.authorizeUrl = new URL(url);
      },
      { redirect: CALLBACK, name },
    );
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    try {
      await new Client({ name, version: "1.0.0" }).connect(transport);
      throw new Error("/mcp took a call without a credential");
    } catch (e) {
      if (!(e instanceof UnauthorizedError)) throw e;
    }
    assert(provider.authorizeUrl, "the client was never sent to authorize");
    return { name, provider, transport };
  }
  /** The host, signed in: a connected client on a new transport. */
  async function connect(host) {
    const client = new Client({ name: host.name, version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: host.provider }));
    return client;
  }
  /** The person's browser opens the host's authorize URL and lands on its consent page (signing in on the way once). */
  async function consentFor(host) {
    await page.goto(String(host.provider.authorizeUrl));
    const heading = page.getByRole("heading", { level: 1, name: `Connect ${host.name} to Storyloom?` });
    const login = page.getByRole("button", { name: "Log in" });
    await heading.or(login).first().waitFor();
    if (await login.isVisible()) {
      await page.getByLabel("Email").fill(person.email);
      await page.getByLabel("Password").fill(person.password);
      await login.click();
    }
    await heading.waitFor();
  }
  /** Presses a button of the consent form; answers the query the host's callback received, once the browser is there. */
  async function press(button) {
    const callback = nextCallback();
    await Promise.all([page.waitForURL((u) => u.href.startsWith(CALLBACK)), page.getByRole("button", { name: button }).click()]);
    await page.getByRole("heading", { name: "Back at the host" }).waitFor();
    return callback;
  }
  const noFormActionViolations = () => {
    const blocked = browser.violations.filter((v) => v.directive === "form-action");
    assert(!blocked.length, `the browser blocked the form: ${JSON.stringify(blocked)}`);
  };
  const okResult = (result, what) => {
    assert(!result.isError, `${what} failed: ${JSON.stringify(result).slice(0, 400)}`);
    return result;
  };

  // ---- 1. as myself --------------------------------------------------------------------------------------------
  let me;
  await t.check("a host on another origin is challenged, registers itself and asks for both scopes (PKCE S256)", async () => {
    me = await newHost(`Desk Host ${run}`);
    const q = me.provider.authorizeUrl.searchParams;
    assert(me.provider.info?.client_id, "the host did not register (DCR)");
    assert(q.get("code_challenge_method") === "S256" && q.get("code_challenge"), `no PKCE: ${q}`);
    assert((q.get("scope") ?? "").split(" ").includes("stories:write"), `the host asked for ${q.get("scope")}`);
    return `scope=${q.get("scope")}`;
  });
  await t.check("sign in on the way; approve as myself: Chromium follows Approve to the host's callback, which gets its code", async () => {
    assert(me, "no host");
    await consentFor(me);
    assert(await page.getByLabel(/^write:/).isChecked(), "writing is not ticked though the host asked for it");
    await page.getByLabel(/^Me \(/).check();
    const back = await press("Approve");
    noFormActionViolations();
    assert(back.get("code"), `no code at the callback: ${back}`);
    assert(back.get("iss") === origin, `iss ${back.get("iss")}`);
    await me.transport.finishAuth(back);
    assert(me.provider.saved?.access_token, "the code was not exchanged");
    return `scope ${me.provider.saved.scope}`;
  });
  await t.check("the host lists the tools and writes a segment as me", async () => {
    assert(me?.provider.saved, "not signed in");
    const client = await connect(me);
    try {
      const { tools } = await client.listTools();
      assert(
        tools.some((x) => x.name === "write_segment"),
        "no write_segment tool",
      );
      const content = words(6, "mine");
      okResult(await client.callTool({ name: "write_segment", arguments: { branch_id: mine.main_branch_id, content } }), "write_segment");
      const last = await lastSegment(mine.main_branch_id);
      assert(last.content === content && last.author_type === "human", `the last segment is ${JSON.stringify(last)}`);
      return `${tools.length} tools`;
    } finally {
      await client.close();
    }
  });

  // ---- 2. as a new bot -----------------------------------------------------------------------------------------
  const botName = `host_bot_${run}`;
  await t.check("approve as a new bot made on the consent page: the host gets its code; the bot joins and writes", async () => {
    const host = await newHost(`Bot Host ${run}`);
    await consentFor(host);
    await page.getByLabel("A new bot of mine, made now").check();
    await page.getByLabel("New bot's name").fill(botName);
    const back = await press("Approve");
    noFormActionViolations();
    await host.transport.finishAuth(back);
    const client = await connect(host);
    try {
      const joined = okResult(await client.callTool({ name: "join_branch", arguments: { branch_id: bots.main_branch_id } }), "join_branch");
      const content = words(6, "bot");
      okResult(await client.callTool({ name: "write_segment", arguments: { branch_id: bots.main_branch_id, content } }), "write_segment");
      const last = await lastSegment(bots.main_branch_id);
      assert(
        last.content === content && last.author_type === "bot" && last.bot_id === joined.structuredContent.bot_id,
        `the last segment is ${JSON.stringify(last)}`,
      );
    } finally {
      await client.close();
    }
  });

  // ---- 3. Deny -------------------------------------------------------------------------------------------------
  await t.check("Deny goes back to the host's callback with error=access_denied (and its state)", async () => {
    const host = await newHost(`Denied Host ${run}`);
    await consentFor(host);
    const state = host.provider.authorizeUrl.searchParams.get("state");
    const back = await press("Deny");
    noFormActionViolations();
    assert(back.get("error") === "access_denied", `the callback got ${back}`);
    assert(!back.get("code"), "a code came with the denial");
    assert(back.get("state") === state, `state ${back.get("state")} ≠ ${state}`);
  });

  // ---- 4. read-only, then the step-up --------------------------------------------------------------------------
  await t.check("a read-only grant reads; its first write is refused for scope, the person approves writing, the write goes through", async () => {
    const host = await newHost(`Careful Host ${run}`);
    await consentFor(host);
    await page.getByLabel(/^Me \(/).check();
    await page.getByLabel(/^write:/).uncheck();
    await host.transport.finishAuth(await press("Approve"));
    assert(host.provider.saved?.scope === "stories:read", `granted ${host.provider.saved?.scope}`);
    const client = await connect(host);
    try {
      okResult(await client.callTool({ name: "read_branch", arguments: { branch_id: stepped.main_branch_id } }), "read_branch");
      const content = words(6, "stepped");
      const write = () => client.callTool({ name: "write_segment", arguments: { branch_id: stepped.main_branch_id, content } });
      host.provider.authorizeUrl = null;
      const refused = await write().then(
        () => null,
        (e) => e,
      );
      assert(refused instanceof UnauthorizedError, `the read-only write answered ${refused ?? "success"}`);
      assert(host.provider.authorizeUrl, "the client did not step up");
      assert((host.provider.authorizeUrl.searchParams.get("scope") ?? "").includes("stories:write"), "the step-up did not ask for writing");
      await consentFor(host);
      assert(await page.getByLabel(/^write:/).isChecked(), "writing is not ticked on the step-up");
      await page.getByLabel(/^Me \(/).check();
      await host.transport.finishAuth(await press("Approve"));
      assert(host.provider.saved?.scope.split(" ").includes("stories:write"), `granted ${host.provider.saved?.scope}`);
      const stepped2 = await connect(host);
      try {
        okResult(
          await stepped2.callTool({ name: "write_segment", arguments: { branch_id: stepped.main_branch_id, content } }),
          "write_segment after the step-up",
        );
      } finally {
        await stepped2.close();
      }
      const last = await lastSegment(stepped.main_branch_id);
      assert(last.content === content, `the last segment is ${JSON.stringify(last)}`);
    } finally {
      await client.close();
    }
  });

  // ---- 5. Connected apps ---------------------------------------------------------------------------------------
  await t.check("Connected apps lists the approved apps, once each (the denied one, and the replaced read-only grant, not)", async () => {
    await page.goto(`${origin}/me/apps`);
    await page.getByRole("heading", { level: 1, name: "Connected apps" }).waitFor();
    const names = await page.locator("ul.grants h2").allInnerTexts();
    const expected = [`Careful Host ${run}`, `Bot Host ${run}`, `Desk Host ${run}`];
    assert(JSON.stringify(names) === JSON.stringify(expected), `listed ${JSON.stringify(names)}`);
  });

  await t.check("no page broke its CSP, threw, or reached past 127.0.0.1", async () => {
    assert(!browser.violations.length, `CSP violations: ${JSON.stringify(browser.violations)}`);
    assert(!browser.errors.length, `page errors: ${browser.errors.join("; ")}`);
    assert(!browser.foreign().length, `foreign requests: ${JSON.stringify(browser.foreign())}`);
  });
} catch (err) {
  t.fail("the walk", err?.stack ?? err);
} finally {
  await browser?.stop();
  await worker?.stop();
  hostServer.close();
  cleanup();
}
console.log(`(${((Date.now() - started) / 1000).toFixed(1)} s)`);
process.exit(t.report() ? 1 : 0);
