// `npm run e2e:mcp [-- --turns 10 --write]`: two agents take turns on one branch through MCP tool calls only
// (join_branch, wait_for_turn, write_segment) against `npm run dev` (wrangler dev: real workerd, where a `new
// Function` in the bundle would be refused), one in each protocol era (2025-11-25 and 2026-07-28). A human creates
// the story through the API; each agent registers a bot over REST (the one step before a credential exists).
// Reports the time from a segment's acceptance (write_segment's answer) to the other agent's wait_for_turn
// returning with its turn (median, p95), and checks the read-back: contiguous sequence_order, strict alternation.
// Prints the figures; writes bench/MCP.md only with --write. Listens on 127.0.0.1 only; every wait is bounded.
// --inspector: also drives the MCP Inspector's CLI (pinned, fetched by npx) in both eras.
// --oauth: each agent signs in as ChatGPT or Claude would, through OAuth (the official client's own
// OAuthClientProvider, DCR, PKCE), its person registering over REST and approving in headless Chromium (Debian's:
// the consent page driven by its labels), which makes the bot the agent writes as; then the two take turns as above.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { api, freePort, NO_LIMITS, sleep, startDev, words } from "./lib.mjs";
import { launchChromium, oauthClient, personInBrowser } from "./oauth-agent.mjs";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "10" },
    write: { type: "boolean", default: false },
    port: { type: "string" },
    inspector: { type: "boolean", default: false },
    oauth: { type: "boolean", default: false },
  },
});
/** The MCP Inspector's command line (`--inspector`; fetched by npx, so it needs the network), pinned. */
const INSPECTOR = "@modelcontextprotocol/inspector@2.12.0";
const TURNS = Number(values.turns);
const PORT = values.port ? Number(values.port) : await freePort();
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASE = `${ORIGIN}/api/v1`;
const tmp = mkdtempSync(path.join(tmpdir(), "storyloom-mcp-e2e-"));
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function agent(name, apiKey, era, oauthSignIn) {
  let client;
  if (oauthSignIn) client = await oauthSignIn(name, era);
  else {
    client = new Client({ name, version: "1.0.0" }, { versionNegotiation: era === "modern" ? { mode: { pin: "2026-07-28" } } : { mode: "legacy" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } }));
  }
  const call = async (tool, args) => {
    const r = await client.callTool({ name: tool, arguments: args }, { timeout: 70_000 });
    if (r.isError) throw new Error(`${name} ${tool}: ${JSON.stringify(r.structuredContent)}`);
    return r.structuredContent;
  };
  return { name, client, call, era: client.getProtocolEra() };
}

/**
 * The Inspector's CLI in both eras (`--protocol-era legacy`: the 2025-11-25 `initialize` handshake; `modern`: the
 * 2026-07-28 `server/discover`, after which it once hung on a `subscriptions/listen` never acknowledged): `tools/list`,
 * then `tools/call read_branch`, each bounded. Each era's handshake is confirmed from the server's access log.
 */
function inspect(branch) {
  const cli = (era, ...args) => {
    const r = spawnSync("npx", ["-y", INSPECTOR, "--cli", `${ORIGIN}/mcp`, "--transport", "http", "--protocol-era", era, ...args], {
      encoding: "utf8",
      timeout: 120_000,
    });
    if (r.status !== 0) throw new Error(`${INSPECTOR} --protocol-era ${era} ${args[1]}: ${r.error ?? `exit ${r.status}`}\n${r.stderr}`);
    return JSON.parse(r.stdout);
  };
  const eras = [
    ["legacy", "initialize"],
    ["modern", "server/discover"],
  ].map(([era, handshake]) => {
    const logged = server.log().length;
    const listed = cli(era, "--method", "tools/list").tools.map((t) => t.name);
    const read = cli(era, "--method", "tools/call", "--tool-name", "read_branch", "--tool-arg", `branch_id=${branch}`, "--tool-arg", "limit=1");
    const shook = server.log().slice(logged).includes(`"route":"/mcp ${handshake}"`);
    const ok = shook && listed.length === 11 && !read.isError && read.structuredContent.branch.id === branch;
    return `${era} (${handshake} ${shook ? "answered" : "not seen"}): tools/list ${listed.length} tools, tools/call read_branch ${read.isError ? "failed" : "answered"}${ok ? "" : " (**unexpected**)"}`;
  });
  return `${INSPECTOR}: ${eras.join("; ")}`;
}

const server = await startDev(PORT, path.join(tmp, "state"), [...NO_LIMITS, "--var", `PUBLIC_ORIGIN:${ORIGIN}`]);
for (let i = 0; i < 50 && !server.log().includes(`Ready on ${ORIGIN}`); i++) await sleep(100);
let exitCode = 0;
const agents = [];
let browser;
try {
  if (!server.log().includes(`Ready on ${ORIGIN}`) || server.child.exitCode !== null) throw new Error(`port ${PORT} answered, but not from this run's server`);
  const call = api(BASE);
  const stamp = Date.now();
  const human = (
    await call("/auth/register", { body: { username: `e2emcp${stamp}`, email: `e2emcp${stamp}@example.com`, password: "e2e password", user_type: "human" } })
  ).access_token;
  const story = (
    await call("/stories", {
      token: human,
      body: {
        title: "Two agents, one branch",
        background: "Two writers reach the story only through its MCP server, and take turns.",
        starter: "The signal came back on the hour.",
        initial_segments: [words(8, "static"), words(8, "signal"), words(8, "harbour")],
        language: "en",
        min_length: 8,
        max_length: 40,
      },
    })
  ).data;
  const branch = story.main_branch_id;
  for (const [i, era] of [
    [0, "legacy"],
    [1, "modern"],
  ]) {
    if (values.oauth) {
      // A person per agent, who approves in the browser and makes the agent's bot on the consent page.
      browser ??= await launchChromium();
      const person = { email: `e2eoauth${i}${stamp}@example.com`, password: "e2e password" };
      await call("/auth/register", { body: { username: `e2eoauth${i}${stamp}`, ...person, user_type: "human" } });
      const signIn = (name, era) => oauthClient(ORIGIN, name, era, personInBrowser(browser, person, `e2e-oauth-${i}-${stamp}`));
      agents.push(await agent(`agent-${i}`, null, era, signIn));
      continue;
    }
    const bot = (await call("/auth/bot/register", { body: { name: `e2e-mcp-${i}-${stamp}`, model: "e2e" } })).data;
    agents.push(await agent(`agent-${i}`, bot.api_key, era));
  }
  for (const a of agents) await a.call("join_branch", { branch_id: branch });

  const written = []; // {seq, by, turnAt, createdAt}: each turn, when its wait returned and when its segment was accepted
  const started = Date.now();
  const run = async (a, i) => {
    let mine = 0;
    const share = Math.ceil(TURNS / 2) - (i === 1 && TURNS % 2 ? 1 : 0);
    while (mine < share) {
      const wait = await a.call("wait_for_turn", { branch_id: branch, timeout_seconds: 30 });
      if (!wait.your_turn) continue;
      const turnAt = Date.now();
      const seg = await a.call("write_segment", { branch_id: branch, content: words(10, `${a.name.replace("-", "")}t${mine}w`) });
      written.push({ seq: seg.sequence_order, by: i, turnAt, createdAt: Date.parse(seg.created_at) });
      mine++;
    }
  };
  await Promise.race([Promise.all(agents.map(run)), sleep(3 * 60_000).then(() => Promise.reject(new Error("timed out after 3 minutes")))]);
  const elapsed = Date.now() - started;
  // A segment's acceptance (its created_at, the Worker's clock: the same machine) → the other agent's wait_for_turn returning.
  written.sort((x, y) => x.seq - y.seq);
  const latencies = written.slice(1).map((cur, k) => cur.turnAt - written[k].createdAt);
  const segments = (await call(`/branches/${branch}/segments?limit=100`)).data.segments;
  const orders = segments.map((s) => s.sequence_order);
  const contiguous = orders.every((o, i) => o === i + 1);
  const bots = segments.filter((s) => s.author_type === "bot");
  const alternating = bots.every((s, i) => i === 0 || s.bot_id !== bots[i - 1].bot_id);
  // The MCP Inspector's command line, as a developer would check the server, in each era: list the tools, call one.
  let inspector = "not run (pass --inspector)";
  if (values.inspector) inspector = inspect(branch);
  if (inspector.includes("**unexpected**")) exitCode = 1;
  const figures = {
    inspector,
    sign_in: values.oauth ? "OAuth (DCR, PKCE, consent in Chromium)" : "bot keys",
    eras: agents.map((a) => a.era),
    bot_segments: bots.length,
    contiguous,
    strict_alternation: alternating,
    accept_to_other_wait_return_ms: { n: latencies.length, median: pct(latencies, 50), p95: pct(latencies, 95), max: Math.max(...latencies) },
    wall_seconds: +(elapsed / 1000).toFixed(1),
  };
  console.log(JSON.stringify(figures, null, 2));
  if (!contiguous || !alternating || bots.length < TURNS) exitCode = 1;
  if (values.write && !values.oauth) {
    writeFileSync(
      "bench/MCP.md",
      `# Two agents through MCP: \`npm run e2e:mcp\`

${new Date().toISOString().slice(0, 10)}: two agents on one main line (min_length 8, max_length 40 words) against \`npm run dev\`, using only
the MCP tools \`join_branch\`, \`wait_for_turn\` and \`write_segment\` (agent 0 on the ${figures.eras[0]} era, agent 1 on the ${figures.eras[1]} era),
per-account limits lifted (the legacy era is the 2025-11-25 revision, the modern era 2026-07-28). Latency: from a segment's
acceptance (its \`created_at\`, set by the Worker) to the other agent's \`wait_for_turn\` returning with its turn, on one
machine's clock.

| figure | value |
|---|---|
| bot segments written | ${figures.bot_segments} |
| sequence_order read back | ${orders[0]}..${orders.at(-1)}, contiguous: ${contiguous ? "yes" : "**no**"} |
| strict alternation | ${alternating ? "yes" : "**no**"} |
| segment accepted → other agent's \`wait_for_turn\` returns | median ${figures.accept_to_other_wait_return_ms.median} ms, p95 ${figures.accept_to_other_wait_return_ms.p95} ms, max ${figures.accept_to_other_wait_return_ms.max} ms (n = ${latencies.length}) |
| wall time | ${figures.wall_seconds} s |
| MCP Inspector CLI | ${inspector} |
`,
    );
    console.log("wrote bench/MCP.md");
  }
} catch (e) {
  console.error(e);
  console.error(server.log().slice(-3000));
  exitCode = 1;
} finally {
  await Promise.all(agents.map((a) => a.client.close().catch(() => {})));
  await browser?.close();
  server.stop();
  await sleep(500);
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(exitCode);
