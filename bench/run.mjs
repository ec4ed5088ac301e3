// `npm run bench`: starts `npm run dev` on a fresh local state and a trivial Worker (the ceiling) under the
// same `wrangler dev`, creates data through the API, drives load with autocannon from this process, and
// prints the results (bench/RESULTS.md only with --write). Options: --duration S (default 10), --connections N
// (default 10), --write.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { NO_LIMITS, api, asClient, d1Trips, load, sleep, startServer, words, workerdCpuMs } from "./lib.mjs";

const { values } = parseArgs({
  options: { duration: { type: "string", default: "10" }, connections: { type: "string", default: "10" }, write: { type: "boolean", default: false } },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const PORT = 8791;
const CEILING_PORT = 8792;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASE = `${ORIGIN}/api/v1`;
const STATE = "bench/.tmp/state";

rmSync("bench/.tmp", { recursive: true, force: true });
mkdirSync(STATE, { recursive: true });

const app = await startServer("npm", ["run", "dev", "--", "--port", String(PORT), "--persist-to", STATE, ...NO_LIMITS], `${BASE}/health`);
const ceiling = await startServer(
  "wrangler",
  ["dev", "--config", "bench/ceiling/wrangler.toml", "--port", String(CEILING_PORT), "--ip", "127.0.0.1", "--persist-to", `${STATE}-ceiling`],
  `http://127.0.0.1:${CEILING_PORT}/`,
);

const call = api(BASE);
const register = async (i) =>
  (await call("/auth/register", { body: { username: `w${i}`, email: `w${i}@example.com`, password: "bench password", user_type: "human" } })).access_token;
const bot = async (name) => {
  const reg = (await call("/auth/bot/register", { body: { name, model: "bench" } })).data;
  const token = (await call("/auth/bot/login", { body: { api_key: reg.api_key } })).access_token;
  return { id: reg.bot_id, token };
};

async function seed() {
  console.log("seeding data through the API…");
  const writers = [];
  for (let i = 0; i < 10; i++) writers.push(await register(i));
  const story = (i) => ({
    title: `Bench story ${i}`,
    background: "A benchmark story that never ends.",
    starter: "It begins.",
    initial_segments: [words(10), words(10), words(10)],
    language: "en",
    min_length: 5,
    max_length: 200,
  });
  const stories = [];
  for (let i = 0; i < 40; i++) stories.push((await call("/stories", { token: writers[i % 10], body: story(i) })).data);
  const hot = stories[0];
  const hotSegments = [];
  for (let i = 0; i < 100; i++)
    hotSegments.push((await call(`/branches/${hot.main_branch_id}/segments`, { token: writers[i % 10], body: { content: words(20) } })).data);
  const segment = hotSegments[0].id;
  for (let i = 1; i < 6; i++) await call(`/segments/${segment}/rewrites`, { token: writers[i], body: { content: words(20), reason: "tighter" } });
  for (let i = 1; i < 6; i++) await call("/votes", { token: writers[i], body: { target_type: "segment", target_id: segment, vote: 1 } });
  for (let i = 0; i < 3; i++) await call(`/stories/${hot.id}/pins`, { token: writers[0], body: { title: `pin ${i}`, content: `pinned note ${i}` } });
  await call(`/branches/${hot.main_branch_id}/summary`, { method: "POST", token: writers[0] });
  for (let i = 0; i < 30; i++) await call(`/branches/${hot.main_branch_id}/comments`, { token: writers[i % 10], body: { content: `comment ${i}` } });
  for (let i = 0; i < 5; i++) await call(`/stories/${hot.id}/branches`, { token: writers[i], body: { title: `fork ${i}` } });
  await call("/votes", { token: writers[1], body: { target_type: "branch", target_id: hot.main_branch_id, vote: 1 } });
  const turns = (await call("/stories", { token: writers[0], body: story("turns") })).data.main_branch_id;
  const bots = [];
  for (let i = 0; i < 4; i++) {
    bots.push(await bot(`bench-bot-${i}`));
    await call(`/branches/${turns}/join`, { token: bots[i].token, body: {} });
  }
  return { writers, stories, hot, segment, turns, bots };
}

/** Four bots hammer one branch; each writes when it is its turn and retries on NOT_YOUR_TURN. */
async function fourBots(branch, bots) {
  const end = Date.now() + duration * 1000;
  const latencies = [];
  const statuses = {};
  let trips = 0;
  await Promise.all(
    bots.map(async (token) => {
      while (Date.now() < end) {
        const started = performance.now();
        const res = await fetch(`${BASE}/branches/${branch}/segments`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ content: words(20) }),
        });
        await res.text();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 201) {
          latencies.push(performance.now() - started);
          trips = d1Trips(res);
        } else await sleep(2);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const total = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    rps: latencies.length / duration,
    p50: Math.round(latencies[latencies.length >> 1]),
    p99: Math.round(latencies[Math.floor(latencies.length * 0.99)]),
    total,
    statuses,
    trips,
  };
}

/** Reads the branch back and checks sequence_order is contiguous and the bots wrote in strict rotation. */
async function checkOrder(branch) {
  const segs = [];
  for (let offset = 0; ; offset += 100) {
    const page = (await call(`/branches/${branch}/segments?limit=100&offset=${offset}`)).data;
    segs.push(...page.segments);
    if (!page.pagination.has_more) break;
  }
  const contiguous = segs.every((s, i) => s.sequence_order === i + 1);
  const botSegs = segs.filter((s) => s.author_type === "bot").map((s) => s.bot_id);
  const first = botSegs.slice(0, 4);
  const rotating = new Set(first).size === Math.min(4, botSegs.length) && botSegs.every((id, i) => id === first[i % 4]);
  return { segments: segs.length, contiguous, rotating };
}

async function sampleTrips(path, headers = {}) {
  const res = await fetch(ORIGIN + path, { headers: { "cf-connecting-ip": "10.255.0.1", ...headers } });
  await res.text();
  return d1Trips(res);
}

try {
  const { writers, stories, hot, segment, turns, bots } = await seed();
  const write = await fetch(`${BASE}/branches/${stories[1].main_branch_id}/segments`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${writers[1]}` },
    body: JSON.stringify({ content: words(20) }),
  });
  const bookmark = write.headers.get("x-d1-bookmark");
  const etag = (await fetch(`${BASE}/branches/${hot.main_branch_id}/segments`)).headers.get("etag");

  let n = 0;
  const spread = (req) => ({
    ...req,
    method: "POST",
    path: `/api/v1/branches/${stories[n % stories.length].main_branch_id}/segments`,
    headers: { ...req.headers, "content-type": "application/json", authorization: `Bearer ${writers[n++ % writers.length]}` },
    body: JSON.stringify({ content: words(20) }),
  });
  const read = (path, headers = {}) => ({
    url: ORIGIN + path,
    requests: [{ setupRequest: (req) => asClient({ ...req, headers: { ...req.headers, ...headers } }) }],
  });
  const cases = [
    ["ceiling: trivial Worker GET /", { url: `http://127.0.0.1:${CEILING_PORT}/` }, "ceiling"],
    ["GET /stories", read("/api/v1/stories"), "read"],
    ["GET /stories/{id}", read(`/api/v1/stories/${hot.id}`), "read"],
    ["GET /stories/{id}/branches", read(`/api/v1/stories/${hot.id}/branches`), "read"],
    ["GET /stories/{id}/branches/tree", read(`/api/v1/stories/${hot.id}/branches/tree`), "read"],
    ["GET /branches/{id}", read(`/api/v1/branches/${hot.main_branch_id}`), "read"],
    ["GET /branches/{id}/segments", read(`/api/v1/branches/${hot.main_branch_id}/segments`), "read"],
    ["GET /branches/{id}/comments", read(`/api/v1/branches/${hot.main_branch_id}/comments`), "read"],
    ["GET /branches/{id}/votes/summary", read(`/api/v1/branches/${hot.main_branch_id}/votes/summary`), "read"],
    ["GET /segments/{id}/votes/summary", read(`/api/v1/segments/${segment}/votes/summary`), "read"],
    ["GET /segments/{id}/rewrites", read(`/api/v1/segments/${segment}/rewrites`), "read"],
    ["GET /stories/{id}/pins", read(`/api/v1/stories/${hot.id}/pins`), "read"],
    ["GET /branches/{id}/summary", read(`/api/v1/branches/${hot.main_branch_id}/summary`), "read"],
    ["GET /bots/{id}/reputation", read(`/api/v1/bots/${bots[0].id}/reputation`), "read"],
    ["GET /dashboard/stats", read("/api/v1/dashboard/stats"), "read"],
    ["GET segments, If-None-Match (304)", read(`/api/v1/branches/${hot.main_branch_id}/segments`, { "if-none-match": etag }), "read"],
    [
      "GET segments as a bot (JWT: no anonymous limit)",
      read(`/api/v1/branches/${hot.main_branch_id}/segments`, { authorization: `Bearer ${bots[0].token}` }),
      "read",
    ],
    ["ceiling again, after the reads", { url: `http://127.0.0.1:${CEILING_PORT}/` }, "ceiling"],
    ["ceiling with one D1 round trip: trivial Worker GET /d1", { url: `http://127.0.0.1:${CEILING_PORT}/d1` }, "ceiling-d1"],
    ["GET /stories with x-d1-bookmark (uncached, D1)", read("/api/v1/stories", { "x-d1-bookmark": bookmark }), "uncached"],
    ["GET segments with x-d1-bookmark (uncached, D1)", read(`/api/v1/branches/${hot.main_branch_id}/segments`, { "x-d1-bookmark": bookmark }), "uncached"],
    ["POST segments, 40 branches, 10 writers", { url: ORIGIN, requests: [{ setupRequest: spread }] }, "write"],
  ];
  // Warm both servers (JIT, module caches) so the first measured case is not penalised.
  for (const [, opts] of cases.slice(0, 3)) await load({ duration: 3, connections, ...opts });
  const rows = [];
  for (const [name, opts, kind] of cases) {
    console.log(`load: ${name}`);
    const isCeiling = kind.startsWith("ceiling");
    const pgid = isCeiling ? ceiling.child.pid : app.child.pid;
    const cpuBefore = workerdCpuMs(pgid);
    const r = await load({ duration, connections, ...opts });
    const cpu = (workerdCpuMs(pgid) - cpuBefore) / r.total;
    const path = opts.url === ORIGIN ? null : new URL(opts.url).pathname;
    const trips =
      kind === "ceiling-d1"
        ? 1
        : isCeiling || !path
          ? kind === "write"
            ? "1–2"
            : "–"
          : await sampleTrips(path, kind === "uncached" ? { "x-d1-bookmark": bookmark } : {});
    rows.push({ name, kind, ...r, cpu, trips });
  }
  console.log("load: four bots taking turns on one branch");
  const cpuBefore = workerdCpuMs(app.child.pid);
  const t = await fourBots(
    turns,
    bots.map((b) => b.token),
  );
  rows.push({
    name: "POST segments, one branch, 4 bots taking turns (accepted)",
    kind: "turns",
    ...t,
    cpu: (workerdCpuMs(app.child.pid) - cpuBefore) / t.total,
    non2xx: t.total - (t.statuses[201] ?? 0),
  });
  const order = await checkOrder(turns);

  // The ceiling is measured before and after the reads; ratios use the mean of the two.
  const ceilings = rows.filter((r) => r.kind === "ceiling");
  const ceilingRps = ceilings.reduce((sum, r) => sum + r.rps, 0) / ceilings.length;
  const pct = (r) => `${((r.rps / ceilingRps) * 100).toFixed(0)} %`;
  const reads = rows.filter((r) => r.kind === "read" && !r.name.includes("as a bot"));
  const d1Ceiling = rows.find((r) => r.kind === "ceiling-d1");
  const uncached = rows.filter((r) => r.kind === "uncached");
  const fivexx = rows.reduce(
    (sum, r) =>
      sum +
      Object.entries(r.statuses)
        .filter(([s]) => Number(s) >= 500)
        .reduce((a, [, v]) => a + v, 0),
    0,
  );
  const report = [
    "# Benchmark results",
    "",
    `Run ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? "unknown CPU"}): autocannon, ${connections} connections × ${duration} s per case,`,
    "from this process against `npm run dev` (wrangler dev: local D1, Durable Objects, queues) and, as the local ceiling, a",
    "trivial Worker under the same `wrangler dev`. Anonymous reads come from rotating client addresses (so the 600/min read",
    "limit applies per address but is not hit); per-account limits are lifted. D1 round trips are read from each case's",
    "`Server-Timing`; CPU is the workerd processes' user+system time over the case divided by its requests.",
    "",
    "| case | req/s | p50 ms | p99 ms | of ceiling | D1 round trips | CPU ms/req | statuses |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) => `| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${pct(r)} | ${r.trips} | ${r.cpu.toFixed(2)} | ${JSON.stringify(r.statuses)} |`,
    ),
    "",
    "## Targets",
    "",
    `- Ceiling: ${ceilings.map((r) => r.rps.toFixed(0)).join(" and ")} req/s, mean ${ceilingRps.toFixed(0)}; ratios above are to the mean.`,
    `- Anonymous read endpoints at ≥ 70 % of the ceiling: ${reads.filter((r) => r.rps >= 0.7 * ceilingRps).length} of ${reads.length} (lowest ${Math.min(...reads.map((r) => (r.rps / ceilingRps) * 100)).toFixed(0)} %, median ${[
      ...reads,
    ]
      .map((r) => (r.rps / ceilingRps) * 100)
      .sort((a, b) => a - b)
      [reads.length >> 1].toFixed(0)} %).`,
    `- One contended branch, four bots: ${t.statuses[201] ?? 0} segments accepted, ${t.statuses[403] ?? 0} NOT_YOUR_TURN refusals, ${fivexx} responses ≥ 500 in the whole run; read back: ${order.segments} segments, sequence_order contiguous: ${order.contiguous}, bots in strict rotation: ${order.rotating}.`,
    "- Round-trip budget: reads 1 (0 on a micro-cache hit), writes ≤ 2 — asserted per endpoint by test/edge.test.ts; the figures above are samples.",
    `- Reads that must reach D1 (a bookmark bypasses the micro-cache): ${uncached.map((r) => r.rps.toFixed(0)).join(" and ")} req/s, ${uncached.map((r) => `${((r.rps / d1Ceiling.rps) * 100).toFixed(0)} %`).join(" and ")} of the trivial Worker making the same one D1 round trip (${d1Ceiling.rps.toFixed(0)} req/s).`,
    "- Anonymous reads pay for the 600/min read limit: locally each `limit()` of the rate-limiting binding is an HTTP call to a",
    "  simulated Durable Object, so each call buys a lease of 10 reads (src/lib/read-leases.ts); the bot's credentialed read of",
    "  the same page shows the service without the limit.",
    "",
  ].join("\n");
  if (values.write) writeFileSync("bench/RESULTS.md", report);
  console.log(report);
  if (fivexx || !order.contiguous || !order.rotating) process.exitCode = 1;
} finally {
  app.stop();
  ceiling.stop();
}
process.exit(process.exitCode ?? 0);
