// `npm run bench`: starts `npm run dev` on a fresh local state and a trivial Worker (the ceiling) under the
// same `wrangler dev`, creates data through the API, drives load with autocannon from this process, and
// writes bench/RESULTS.md. Options: --duration S (default 10), --connections N (default 10).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { NO_LIMITS, api, asClient, load, startServer, words } from "./lib.mjs";

const { values } = parseArgs({
  options: { duration: { type: "string", default: "10" }, connections: { type: "string", default: "10" } },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const PORT = 8791;
const CEILING_PORT = 8792;
const BASE = `http://127.0.0.1:${PORT}/api/v1`;
const STATE = "bench/.tmp/state";

rmSync("bench/.tmp", { recursive: true, force: true });
mkdirSync(STATE, { recursive: true });

const app = await startServer("npm", ["run", "dev", "--", "--port", String(PORT), "--persist-to", STATE, ...NO_LIMITS], `${BASE}/health`);
const ceiling = await startServer(
  "wrangler",
  ["dev", "--config", "bench/ceiling/wrangler.toml", "--port", String(CEILING_PORT), "--ip", "127.0.0.1", "--persist-to", STATE + "-ceiling"],
  `http://127.0.0.1:${CEILING_PORT}/`,
);

try {
  const call = api(BASE);
  console.log("seeding data through the API…");
  const human = (await call("/auth/register", { body: { username: "bench", email: "bench@example.com", password: "bench password", user_type: "human" } })).access_token;
  const writers = [];
  for (let i = 0; i < 10; i++) {
    writers.push((await call("/auth/register", { body: { username: `w${i}`, email: `w${i}@example.com`, password: "bench password", user_type: "human" } })).access_token);
  }
  const story = (i) => ({
    title: `Bench story ${i}`, background: "A benchmark story that never ends.", starter: "It begins.",
    initial_segments: [words(10), words(10), words(10)], language: "en", min_length: 5, max_length: 200,
  });
  const branchIds = [];
  for (let i = 0; i < 40; i++) branchIds.push((await call("/stories", { token: human, body: story(i) })).data.main_branch_id);
  const hot = branchIds[0];
  for (let i = 0; i < 100; i++) await call(`/branches/${hot}/segments`, { token: writers[i % 10], body: { content: words(20) } });

  let n = 0;
  const spread = (req) => ({
    ...req,
    method: "POST",
    path: `/api/v1/branches/${branchIds[n % branchIds.length]}/segments`,
    headers: { ...req.headers, "content-type": "application/json", authorization: `Bearer ${writers[n++ % writers.length]}` },
    body: JSON.stringify({ content: words(20) }),
  });
  const one = (req) => ({
    ...req,
    method: "POST",
    path: `/api/v1/branches/${hot}/segments`,
    headers: { ...req.headers, "content-type": "application/json", authorization: `Bearer ${writers[n++ % writers.length]}` },
    body: JSON.stringify({ content: words(20) }),
  });

  const base = { duration, connections };
  const cases = [
    ["ceiling: trivial Worker GET /", { ...base, url: `http://127.0.0.1:${CEILING_PORT}/` }],
    ["GET /stories", { ...base, url: `${BASE}/stories`, requests: [{ setupRequest: asClient }] }],
    ["GET /branches/{id}/segments", { ...base, url: `${BASE}/branches/${hot}/segments`, requests: [{ setupRequest: asClient }] }],
    ["POST /branches/{id}/segments, 40 branches", { ...base, url: `http://127.0.0.1:${PORT}`, requests: [{ setupRequest: spread }] }],
    ["POST /branches/{id}/segments, one branch", { ...base, url: `http://127.0.0.1:${PORT}`, requests: [{ setupRequest: one }] }],
  ];
  const results = [];
  for (const [name, opts] of cases) {
    console.log(`load: ${name}`);
    results.push([name, await load(opts)]);
  }
  const ceilingRps = results[0][1].rps;
  const rows = results.map(([name, r]) =>
    `| ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${(r.rps / ceilingRps * 100).toFixed(1)} % | ${r.non2xx} | ${JSON.stringify(r.statuses)} |`,
  );
  const report = [
    "# Benchmark results",
    "",
    `Run ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? "unknown CPU"}), autocannon ${connections} connections × ${duration} s per case,`,
    "against `npm run dev` (wrangler dev, local D1 and Durable Objects) and a trivial Worker under the same wrangler dev.",
    "",
    "| case | req/s | p50 ms | p99 ms | of ceiling | non-2xx | statuses |",
    "|---|---|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
  writeFileSync("bench/RESULTS.md", report);
  console.log(report);
} finally {
  app.stop();
  ceiling.stop();
}
process.exit(0);
