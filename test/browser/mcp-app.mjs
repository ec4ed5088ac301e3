// `npm run test:browser`, its fifth part (alone: `node test/browser/mcp-app.mjs [--port 8780] [--host-port 8781]
// [--inspector-port 9280]`): the reader app (MCP Apps) in a host, in a headless Debian Chromium, against `wrangler dev`.
//
// The host is a page on ANOTHER origin (its own port), as ChatGPT's and Claude's are: its script
// (test/browser/mcp-app-host.js, bundled here with esbuild) is the MCP Apps extension's own AppBridge, which speaks
// the `ui/*` bridge as the extension's reference host does. It finds the tool's app in tools/list
// (`_meta.ui.resourceUri`), reads the resource, frames its HTML in a sandboxed frame (scripts only) under the policy
// of its `_meta.ui.csp`, makes the model's tool call and hands the app its input and result; the app's own
// tools/call go to the host's server, which holds the person's token (a key of ours, or an OAuth grant approved to
// read only) and forwards them to /mcp.
//
// The walk: the handshake comes first; a branch's path shows its labels, writers and marks, and the choices at its
// fork; a vote changes the count; a segment too short is refused in words with the API's code; a good one appears
// as the next segment; follow and bookmark; a choice opens the fork; a long path pages; get_story and search open
// the app too; a host that hands over only the text (Claude) or only the structured content (ChatGPT) shows the
// same; a read-only grant shows the composer disabled, saying why; the host's theme is followed, also when it
// changes. Screenshots at 360 and 720 px, light and dark (test/browser/screenshots/mcp-app-*.png), axe clean in both
// themes; no page throws, nothing breaks the frame's policy, nothing leaves 127.0.0.1. Prints `N passed, M failed`.
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildSync } from "esbuild";
import { api as apiOf, NO_LIMITS, words } from "../../bench/lib.mjs";
import { oauthToken } from "../../bench/oauth-agent.mjs";
import { ROOT, assert, checkClean, checks, launchBrowser, screenshot, startWorker, walk } from "./harness.mjs";

const { values: opt } = parseArgs({
  options: {
    port: { type: "string", default: "8780" },
    "host-port": { type: "string", default: "8781" },
    "inspector-port": { type: "string", default: "9280" },
  },
});
const t = checks();
const TIMEOUT = 15_000;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const run = Math.random().toString(36).slice(2, 8);
const limits = Object.fromEntries(
  NO_LIMITS.filter((_, i) => i % 2 === 1).map((pair) => {
    const [name, value] = pair.split(":");
    return [name, value];
  }),
);

// ---- the host: its page, its script, and its server's proxy to /mcp -----------------------------------------

const HOST_SCRIPT = buildSync({
  entryPoints: [join(ROOT, "test/browser/mcp-app-host.js")],
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2022",
  write: false,
  logLevel: "error",
}).outputFiles[0].text;

const HOST_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Test host</title><style>body{margin:0;font-family:system-ui}iframe{display:block;border:0;width:100%;height:200px}#host-error:empty{display:none}</style></head>
<body><main><p id="host-error" role="alert"></p><iframe id="app" title="Storyloom reader" sandbox="allow-scripts"></iframe></main>
<script src="/host.js"></script></body></html>`;

await walk("the reader app in a host", t, async (open) => {
  const port = Number(opt.port);
  const origin = `http://127.0.0.1:${port}`;
  open.worker = await startWorker({ port, vars: { PUBLIC_ORIGIN: origin, ...limits }, inspectorPort: opt["inspector-port"] });
  const api = apiOf(`${origin}/api/v1`);

  // The people: a story's owner, and a reader whose host this is (a human's token; the same person's read-only grant).
  const register = async (name) =>
    (
      await api("/auth/register", {
        body: { username: `${name}_${run}`, email: `${name}_${run}@example.com`, password: "correct horse battery", user_type: "human" },
      })
    ).access_token;
  const owner = await register("owner");
  const reader = await register("app_reader");
  const tokens = { writer: reader, readonly: await oauthToken(origin, reader, { write: "0" }) };

  const story = (
    await api("/stories", {
      token: owner,
      body: {
        title: `The tide that stayed ${run}`,
        background: "A harbour town where the tide never comes back.",
        starter: "Once upon a time.",
        initial_segments: ["The harbour was quiet that morning.", "Mira counted the boats twice.", "One of them was missing."],
        language: "en",
        min_length: 3,
        max_length: 50,
        tags: ["sea", "mystery"],
        rating: "teen",
      },
    })
  ).data;
  const main = (await api(`/branches/${story.main_branch_id}/segments`)).data.segments;
  // Its fork after the second segment, with a segment of its own.
  await api(`/stories/${story.id}/branches`, {
    token: owner,
    body: { title: "The boat comes back", fork_at_segment_id: main[1].id, initial_segment: "A sail appeared on the horizon." },
  });
  // A long path, to page: 60 segments on a second story's main line.
  const long = (
    await api("/stories", {
      token: owner,
      body: {
        title: `A long night ${run}`,
        background: "A story long enough to need pages.",
        starter: "It began.",
        initial_segments: [words(4, "a"), words(4, "b"), words(4, "c")],
        language: "en",
        min_length: 3,
        max_length: 50,
      },
    })
  ).data;
  for (let i = 0; i < 57; i++) await api(`/branches/${long.main_branch_id}/segments`, { token: owner, body: { content: words(5, `n${i}w`) } });

  const hostPort = Number(opt["host-port"]);
  const hostOrigin = `http://127.0.0.1:${hostPort}`;
  const host = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", hostOrigin);
    if (req.method === "GET" && url.pathname === "/") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(HOST_PAGE);
    if (req.method === "GET" && url.pathname === "/host.js") return res.writeHead(200, { "content-type": "text/javascript" }).end(HOST_SCRIPT);
    if (req.method !== "POST" || url.pathname !== "/rpc") return res.writeHead(404).end();
    let body = "";
    for await (const chunk of req) body += chunk;
    const { as, method, params } = JSON.parse(body);
    const answer = await fetch(`${origin}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${tokens[as]}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const text = await answer.text();
    // A refusal at the HTTP level (a write through a read-only grant is 403 with the step-up challenge) is what
    // the host tells the app as an error; a real host would ask its person to approve writing.
    const json =
      answer.status === 200
        ? JSON.parse(text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "null"))
        : { error: { code: -32001, message: `HTTP ${answer.status}: ${answer.headers.get("www-authenticate") ?? text.slice(0, 200)}` } };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(json));
  });
  await new Promise((resolve, reject) => host.once("error", reject).listen(hostPort, "127.0.0.1", resolve));
  const closeHost = () => host.close();
  process.on("exit", closeHost);

  open.browser = await launchBrowser({ viewport: { width: 720, height: 900 } });
  const browser = open.browser;
  const page = await browser.page();
  page.setDefaultTimeout(TIMEOUT);
  const app = page.frameLocator("#app");
  const appFrame = () => page.frames().find((f) => f.parentFrame() === page.mainFrame());

  /** The host framing the app for one tool call (as whom, how it hands the result over, in which theme). */
  async function show(tool, args, { as = "writer", deliver = "both", theme = "light" } = {}) {
    const q = new URLSearchParams({ tool, args: JSON.stringify(args), as, deliver, theme });
    await page.goto(`${hostOrigin}/?${q}`);
    await page.waitForFunction(() => window.__initialized === true || document.getElementById("host-error").textContent);
    const hostError = await page.locator("#host-error").textContent();
    assert(!hostError, hostError);
  }
  const settle = () => page.evaluate(() => new Promise((r) => setTimeout(() => requestAnimationFrame(() => requestAnimationFrame(r)), 100)));
  /**
   * The whole app at `width`, in the viewport (a full-page capture leaves a framed document's part below the fold
   * blank): the frame first settles at that width (the app reports its new height, the host resizes the frame).
   */
  async function fullShot(width, name) {
    await page.setViewportSize({ width, height: 900 });
    await settle();
    await page.setViewportSize({ width, height: await page.evaluate(() => document.documentElement.scrollHeight) });
    await settle();
    return screenshot(page, name);
  }
  const segment = (n) => app.locator("li.segment").filter({ has: app.getByText(`#${n}`, { exact: true }) });

  await t.check("the host finds the app on read_branch and frames it; the app's first word is ui/initialize", async () => {
    await page.addInitScript(() => {
      window.__fromApp = [];
      window.addEventListener("message", (e) => {
        if (e.source !== window && e.data?.method) window.__fromApp.push(e.data.method);
      });
    });
    await show("read_branch", { branch_id: story.main_branch_id });
    await app.getByRole("heading", { level: 1, name: story.title }).waitFor();
    const said = await page.evaluate(() => window.__fromApp);
    assert(said[0] === "ui/initialize", `the app said first: ${said.join(", ")}`);
    assert(said.includes("ui/notifications/initialized") && said.includes("tools/call"), `the app said ${said.join(", ")}`);
    return said.slice(0, 4).join(" → ");
  });

  await t.check("the path as a reader sees it: labels, writers with their human mark, and the choices at the fork", async () => {
    await app.getByText("Rated teen").waitFor();
    await app.getByText("#sea").waitFor();
    assert((await app.locator("li.segment").count()) === 4, `${await app.locator("li.segment").count()} segments shown`);
    const second = segment(2);
    assert((await second.locator(".writer").textContent()) === `owner_${run}`, "the writer is not named");
    assert((await second.locator(".mark").textContent()) === "human", "no human mark");
    const choices = second.getByRole("navigation", { name: "Other ways on from segment 2" });
    await choices.getByRole("button", { name: /The boat comes back \(1 segment on\)/ }).waitFor();
    assert((await app.getByRole("navigation", { name: /Other ways on/ }).count()) === 1, "choices shown where there is no fork");
  });

  await t.check("a vote changes the count (and the server keeps it)", async () => {
    const up = app.getByRole("button", { name: "Vote up segment 2" });
    assert((await segment(2).locator(".score").textContent()) === "0", "the score was not 0");
    await up.click();
    await segment(2).locator(".score").filter({ hasText: /^1$/ }).waitFor();
    assert((await up.getAttribute("aria-pressed")) === "true", "the vote is not shown as mine");
    const again = await (
      await fetch(`${origin}/mcp`, { method: "POST", headers: mcpHeaders(tokens.writer), body: toolCall("reader_view", { branch_id: story.main_branch_id }) })
    ).json();
    const kept = again.result.structuredContent.segments[1];
    assert(kept.score === 1 && kept.my_vote === 1, `the server has ${JSON.stringify(kept)}`);
  });

  await t.check("the composer counts words as the story does; a segment too short is refused in words, with the API's code", async () => {
    const box = app.getByLabel("Your segment, in English");
    await box.fill("Too short");
    await app.getByText("2 words: too short (between 3 and 50 words)").waitFor();
    await app.getByRole("button", { name: "Publish" }).click();
    const alert = app.getByRole("alert");
    await alert.filter({ hasText: "SEGMENT_TOO_SHORT" }).waitFor();
    return (await alert.textContent()).slice(0, 120);
  });

  const written = "The missing boat drifted in at noon, empty.";
  await t.check("a write appears as the next segment", async () => {
    await app.getByLabel("Your segment, in English").fill(written);
    await app.getByText("8 words (between 3 and 50 words)").waitFor();
    await app.getByRole("button", { name: "Publish" }).click();
    await segment(5).getByText(written).waitFor();
    assert((await segment(5).locator(".writer").textContent()) === `app_reader_${run}`, "not written as the reader");
    assert((await app.getByLabel("Your segment, in English").inputValue()) === "", "the composer was not emptied");
    const last = (await api(`/branches/${story.main_branch_id}/segments`)).data.segments.at(-1);
    assert(last.content === written, `the branch ends with ${JSON.stringify(last)}`);
  });

  await t.check("follow the branch and bookmark a segment, through the server's tools", async () => {
    await app.getByRole("button", { name: "Follow this branch" }).click();
    await app.getByRole("button", { name: "Following this branch" }).waitFor();
    await segment(1).getByRole("button", { name: "Bookmark" }).click();
    await segment(1).getByRole("button", { name: "Bookmarked" }).waitFor();
    const marks = (await api("/me/bookmarks", { token: tokens.writer })).data;
    assert(marks.bookmarks.length === 1 && marks.bookmarks[0].sequence_order === 1, `bookmarks: ${JSON.stringify(marks).slice(0, 200)}`);
    const follows = (await api("/me/follows", { token: tokens.writer })).data;
    assert(
      follows.follows.some((f) => f.target_type === "branch" && f.target_id === story.main_branch_id),
      "the follow was not made",
    );
  });

  await t.check("a choice opens the fork: the main line up to it, then the path turns into the branch", async () => {
    await segment(2)
      .getByRole("button", { name: /The boat comes back/ })
      .click();
    await app.getByText("Branch: The boat comes back").waitFor();
    await app.getByText("The path turns here into “The boat comes back”.").waitFor();
    await segment(3).getByText("A sail appeared on the horizon.").waitFor();
  });

  await t.check("a long path pages: 50 segments a page, the next page from the pager", async () => {
    await show("read_branch", { branch_id: long.main_branch_id });
    await app.getByText("Page 1 of 2", { exact: true }).waitFor();
    assert((await app.locator("li.segment").count()) === 50, "not 50 on the first page");
    await app.getByRole("button", { name: "Next page" }).click();
    await app.getByText("Page 2 of 2", { exact: true }).waitFor();
    assert((await app.locator("li.segment").count()) === 11, `${await app.locator("li.segment").count()} on the second page`);
    await segment(61).waitFor();
  });

  await t.check("read_branch with `after` opens the page holding what the model read", async () => {
    await show("read_branch", { branch_id: long.main_branch_id, after: 55 });
    await app.getByText("Page 2 of 2", { exact: true }).waitFor();
  });

  await t.check("get_story opens its main line; search lists its hits, and a hit opens its story", async () => {
    await show("get_story", { story_id: story.id });
    await app.getByText("Main line · 5 segments").waitFor();
    await show("search", { q: "horizon" });
    await app.getByRole("heading", { level: 1, name: "1 result" }).waitFor();
    await app.getByRole("button", { name: /#3 of “The boat comes back”/ }).click();
    await app.getByText("Branch: The boat comes back").waitFor();
  });

  await t.check("a host that hands over only the text (Claude) shows the same path, read again from the call's arguments", async () => {
    await show("read_branch", { branch_id: story.main_branch_id }, { deliver: "content" });
    const handed = await page.evaluate(() => window.__toolResult.content[0].text);
    assert(handed.includes("5 segments"), `the text was ${handed}`);
    await segment(5).getByText(written).waitFor();
  });

  await t.check("a host that hands over only the structured content (ChatGPT) shows the same path", async () => {
    await show("read_branch", { branch_id: story.main_branch_id }, { deliver: "structured" });
    await segment(5).getByText(written).waitFor();
  });

  await t.check("a tool's error result is shown in words, with the API's code", async () => {
    await show("read_branch", { branch_id: "00000000-0000-4000-8000-000000000000" });
    await app.getByRole("alert").filter({ hasText: "NOT_FOUND" }).waitFor();
  });

  await t.check("a read-only grant shows the composer disabled, saying why; its votes, follow and bookmarks too", async () => {
    await show("read_branch", { branch_id: story.main_branch_id }, { as: "readonly" });
    await segment(1).waitFor();
    const box = app.getByLabel("Your segment, in English");
    assert(await box.isDisabled(), "the composer is enabled");
    assert(await app.getByRole("button", { name: "Publish" }).isDisabled(), "Publish is enabled");
    await app.getByText(/approved to read only/).waitFor();
    assert(await app.getByRole("button", { name: "Vote up segment 2" }).isDisabled(), "voting is enabled");
    assert(await app.getByRole("button", { name: /Follow/ }).isDisabled(), "following is enabled");
    const shot = await fullShot(360, "mcp-app-360-light-read-only");
    await page.setViewportSize({ width: 720, height: 900 });
    return shot;
  });

  const background = async () => appFrame().evaluate(() => getComputedStyle(document.body).backgroundColor);
  await t.check("the host's theme: dark from its context, and light again when the host changes it", async () => {
    await show("read_branch", { branch_id: story.main_branch_id }, { theme: "dark" });
    await segment(5).waitFor();
    assert((await appFrame().evaluate(() => document.documentElement.dataset.theme)) === "dark", "not dark");
    const dark = await background();
    await page.evaluate(() => window.__setTheme("light"));
    await appFrame().waitForFunction(() => document.documentElement.dataset.theme === "light");
    const light = await background();
    assert(dark !== light, `the background stayed ${dark}`);
    return `${dark} → ${light}`;
  });

  for (const theme of ["light", "dark"]) {
    for (const width of [360, 720]) {
      await t.check(`screenshot at ${width} px, ${theme}: the app fits the frame (no sideways scroll)`, async () => {
        await page.setViewportSize({ width, height: 900 });
        await show("read_branch", { branch_id: story.main_branch_id }, { theme });
        await segment(5).waitFor();
        await app.getByLabel("Your segment, in English").fill("The gulls went quiet");
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const { scrollWidth, clientWidth } = await appFrame().evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          clientWidth: document.documentElement.clientWidth,
        }));
        assert(scrollWidth <= clientWidth, `the app is ${scrollWidth} px wide in a ${clientWidth} px frame`);
        return fullShot(width, `mcp-app-${width}-${theme}`);
      });
    }
  }

  await t.check("axe in the frame, light and dark (the path, the fork's choices, the composer; and read-only)", async () => {
    await page.setViewportSize({ width: 720, height: 900 });
    const bad = [];
    let rules = 0;
    for (const [theme, as] of [
      ["light", "writer"],
      ["dark", "writer"],
      ["dark", "readonly"],
    ]) {
      await show("read_branch", { branch_id: story.main_branch_id }, { theme, as });
      await segment(5).waitFor();
      const frame = appFrame();
      await frame.evaluate(AXE_SOURCE);
      const result = await frame.evaluate(() => globalThis.axe.run(document, { resultTypes: ["violations"] }));
      rules = Math.max(rules, result.passes.length);
      for (const v of result.violations) bad.push(`[${v.impact}, ${theme}, ${as}] ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
    }
    assert(bad.length === 0, `violations:\n    ${bad.join("\n    ")}`);
    return `${rules} rules pass, light and dark`;
  });

  await t.check("the frame fetched nothing: every request is the host's own page, script and proxy", async () => {
    const hosts = new Set(browser.requests.map((r) => new URL(r.url).origin));
    assert(
      [...hosts].every((o) => o === hostOrigin || o === "null"),
      `requests went to ${[...hosts].join(", ")}`,
    );
  });

  await checkClean(t, browser);
  closeHost();
});

function mcpHeaders(token) {
  return {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
  };
}

function toolCall(name, args) {
  return JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });
}
