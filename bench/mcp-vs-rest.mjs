// `npm run bench:mcp [-- --rounds 3 --seconds 2 --write --port P --inspector-port I]`: what an MCP tool call costs against the REST request it
// wraps, under `wrangler dev` on this machine: `list_stories` against `GET /stories` (the same data), `read_branch`
// against `GET /branches/{id}` (one D1 round trip each; read_branch also answers the queue and 23 segments), and `write_segment` against `POST /branches/{id}/segments` (a human's segment on
// one of 20 branches: one room call each). Every pair runs A/B/A/B under wrk (REST, then MCP, `--rounds` times,
// `--seconds` each), with a credential (no anonymous read limit) and the micro-cache off (READ_CACHE_MS=0, so the REST read is
// not answered from memory); the result is the median of the per-round ratios of CPU per request (the workerd
// processes' user+system time over the run divided by its requests) and of requests per second. MCP requests are
// the 2025-11-25 revision, stateless (no initialize first: the handler serves every request on its own), as hosts
// send them. "list stories (OAuth)" is the same pair with the MCP side signed in through OAuth (an access
// token the library validates: one KV read more than a bearer key or JWT). Prints the figures; writes
// bench/MCP-COST.md only with --write. 127.0.0.1, a free port.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { api, ensureWrk, freePort, load, median, NO_LIMITS, sleep, startDev, words, workerdCpuMs } from "./lib.mjs";
import { oauthToken } from "./oauth-agent.mjs";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "2" },
    write: { type: "boolean", default: false },
    // A port (and the inspector's) of one's own, where several people share the machine; a free one by default.
    port: { type: "string" },
    "inspector-port": { type: "string" },
  },
});
ensureWrk();
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const PORT = values.port ? Number(values.port) : await freePort();
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASE = `${ORIGIN}/api/v1`;
const tmp = mkdtempSync(path.join(tmpdir(), "storyloom-mcp-cost-"));

const inspector = values["inspector-port"] ? ["--inspector-port", values["inspector-port"]] : [];
const server = await startDev(PORT, path.join(tmp, "state"), ["--var", "LOG_REQUESTS:false", "--var", "READ_CACHE_MS:0", ...inspector, ...NO_LIMITS]);
let exitCode = 0;
try {
  for (let i = 0; i < 50 && !server.log().includes(`Ready on ${ORIGIN}`); i++) await sleep(100);
  if (!server.log().includes(`Ready on ${ORIGIN}`)) throw new Error(`port ${PORT} answered, but not from this run's server`);
  const call = api(BASE);
  const stamp = Date.now();
  const token = (
    await call("/auth/register", { body: { username: `cost${stamp}`, email: `cost${stamp}@example.com`, password: "bench password", user_type: "human" } })
  ).access_token;
  const story = (
    await call("/stories", {
      token,
      body: {
        title: "Cost of a door",
        background: "A story written to measure what a door costs.",
        starter: "It began.",
        initial_segments: [words(8, "a"), words(8, "b"), words(8, "c")],
        language: "en",
        min_length: 3,
        max_length: 60,
      },
    })
  ).data;
  const branches = [story.main_branch_id];
  for (let i = 1; i < 20; i++) branches.push((await call(`/stories/${story.id}/branches`, { token, body: { title: `b${i}` } })).data.id);
  for (let i = 0; i < 20; i++) await call(`/branches/${story.main_branch_id}/segments`, { token, body: { content: words(20, `s${i}w`) } });

  const auth = { authorization: `Bearer ${token}` };
  const mcpHeaders = { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25" };
  const tool = (name, args) => JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });
  const oauthHeaders = { ...mcpHeaders, authorization: `Bearer ${await oauthToken(ORIGIN, token)}` };
  const pairs = [
    {
      // The exact twin: list_stories answers GET /stories' data (the same domain read, one D1 round trip each).
      name: "list stories",
      rest: { url: `${BASE}/stories?limit=20`, headers: auth },
      mcp: { url: `${ORIGIN}/mcp`, method: "POST", headers: mcpHeaders, body: tool("list_stories", { limit: 20 }) },
    },
    {
      // The same pair, the MCP side with an OAuth access token (the library's KV read, then the same call).
      name: "list stories (OAuth)",
      rest: { url: `${BASE}/stories?limit=20`, headers: auth },
      mcp: { url: `${ORIGIN}/mcp`, method: "POST", headers: oauthHeaders, body: tool("list_stories", { limit: 20 }) },
    },
    {
      // read_branch answers more than GET /branches/{id}: the story's rule, the queue and a page of up to 50
      // segments of the reading path (4 statements in its one round trip; here 23 segments): not only the door.
      name: "read a branch",
      rest: { url: `${BASE}/branches/${story.main_branch_id}`, headers: auth },
      mcp: { url: `${ORIGIN}/mcp`, method: "POST", headers: mcpHeaders, body: tool("read_branch", { branch_id: story.main_branch_id }) },
    },
    {
      // A human's segment on each of the 20 branches in turn: one room call each.
      name: "write a segment",
      rest: {
        url: ORIGIN,
        requests: branches.map((branch) => ({
          method: "POST",
          path: `/api/v1/branches/${branch}/segments`,
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ content: words(10) }),
        })),
      },
      mcp: {
        url: ORIGIN,
        requests: branches.map((branch) => ({
          method: "POST",
          path: "/mcp",
          headers: mcpHeaders,
          body: tool("write_segment", { branch_id: branch, content: words(10) }),
        })),
      },
    },
  ];
  const pgid = server.child.pid;
  const measure = async (opts) => {
    const before = workerdCpuMs(pgid);
    const r = await load({ ...opts, duration: SECONDS, connections: 10 });
    const cpu = workerdCpuMs(pgid) - before;
    return { ...r, cpuPerRequest: cpu / Math.max(1, r.total) };
  };
  // A check first: each request answers 200 with what it should.
  const probe = await fetch(`${ORIGIN}/mcp`, { method: "POST", headers: mcpHeaders, body: tool("read_branch", { branch_id: story.main_branch_id }) });
  const probeText = await probe.text();
  if (probe.status !== 200 || probeText.includes('"isError":true')) throw new Error(`MCP probe: ${probe.status} ${probeText.slice(0, 300)}`);

  const results = [];
  for (const pair of pairs) {
    await measure(pair.rest); // warm both paths
    await measure(pair.mcp);
    const cpuRatios = [];
    const rpsRatios = [];
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const rest = await measure(pair.rest);
      const mcp = await measure(pair.mcp);
      if (rest.non2xx || mcp.non2xx || rest.errors || mcp.errors) {
        exitCode = 1;
        console.error(pair.name, "non-2xx or errors", rest.statuses, mcp.statuses);
      }
      cpuRatios.push(mcp.cpuPerRequest / rest.cpuPerRequest);
      rpsRatios.push(mcp.rps / rest.rps);
      rounds.push({ rest, mcp });
    }
    const row = {
      name: pair.name,
      rest_cpu_ms: +median(rounds.map((x) => x.rest.cpuPerRequest)).toFixed(2),
      mcp_cpu_ms: +median(rounds.map((x) => x.mcp.cpuPerRequest)).toFixed(2),
      cpu_ratio: +median(cpuRatios).toFixed(2),
      rest_rps: Math.round(median(rounds.map((x) => x.rest.rps))),
      mcp_rps: Math.round(median(rounds.map((x) => x.mcp.rps))),
      rps_ratio: +median(rpsRatios).toFixed(2),
      rest_p50_ms: median(rounds.map((x) => x.rest.p50)),
      mcp_p50_ms: median(rounds.map((x) => x.mcp.p50)),
    };
    results.push(row);
    console.log(JSON.stringify(row));
  }
  if (values.write) {
    const md = `# What an MCP tool call costs: \`npm run bench:mcp\`

${new Date().toISOString().slice(0, 10)}, \`wrangler dev\` on this machine (${ROUNDS} rounds of ${SECONDS} s per side, wrk with 10 connections, A/B/A/B,
medians of the per-round ratios). CPU per request is the workerd processes' user+system time over a run divided by its
requests. With a credential, the micro-cache off (READ_CACHE_MS=0), request logs off.

| pair | REST CPU ms/req | MCP CPU ms/req | MCP/REST CPU | REST req/s | MCP req/s | MCP/REST req/s | p50 REST / MCP ms |
|---|---|---|---|---|---|---|---|
${results.map((r) => `| ${r.name} | ${r.rest_cpu_ms} | ${r.mcp_cpu_ms} | ${r.cpu_ratio} | ${r.rest_rps} | ${r.mcp_rps} | ${r.rps_ratio} | ${r.rest_p50_ms} / ${r.mcp_p50_ms} |`).join("\n")}
`;
    writeFileSync("bench/MCP-COST.md", md);
    console.log("wrote bench/MCP-COST.md");
  }
} catch (e) {
  console.error(e);
  exitCode = 1;
} finally {
  server.stop();
  await sleep(500);
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(exitCode);
