// `npm run bench [-- --rounds N --seconds S --connections C --write --only REGEX --phase silent|shipped|both]`: Storyloom
// against its ceilings, both under `wrangler dev` on this machine, loaded by wrk (a separate process: bench/lib.mjs,
// `load`). Two phases: silent (Storyloom with LOG_REQUESTS off, against silent ceilings) and as shipped (its access
// log on, against ceilings that write the same one JSON line per request). In each, every case runs A/B/A/B: its
// ceiling, then the case, `--rounds` times (`--seconds` each), and each figure is the median of the per-round ones, so
// a noisy machine cannot fake a result. It leads with CPU per request (the workerd processes' user+system time over a
// run divided by its requests: what production bills) and its share, the ceiling's over the case's; the throughput
// share (requests per second, the case's over the ceiling's) stands beside it. The targets are judged on the CPU share.
// See bench/README.md. Prints the report; writes bench/RESULTS.md only with --write. Exits 1 when a target is missed,
// an answer was ≥ 500, a ceiling answered anything but 2xx, or the turn order broke.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import {
  NO_LIMITS,
  SEARCH_PATH,
  copyD1,
  countNon2xx,
  d1Reads,
  d1Trips,
  ensureWrk,
  freePorts,
  fromClients,
  load,
  median,
  startCeiling,
  startDev,
  workerdCpuMs,
} from "./lib.mjs";
import { seed, spreadCeiling, spreadWrites } from "./seed.mjs";
import { checkOrder, fourBots } from "./turns.mjs";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "2" },
    connections: { type: "string", default: "10" },
    write: { type: "boolean", default: false },
    only: { type: "string" },
    phase: { type: "string", default: "both" },
  },
});
/** Both phases (`--phase both`, the default) unless `--phase` names one (a longer run of one target's cases in the time of a full run's share). */
const PHASES = { silent: [false], shipped: [true], both: [false, true] };
const { phase } = values;
if (!Object.hasOwn(PHASES, phase)) throw new Error(`--phase must be silent, shipped or both, not ${phase}`);
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
if (!Number.isInteger(SECONDS) || SECONDS < 1) throw new Error(`--seconds must be a whole number of seconds (wrk's), not ${values.seconds}`);
const CONNECTIONS = Number(values.connections);
// Free ports, so a run never meets another server (other work on the machine may be serving 8787 and up).
const [PORT, CEILING_PORT, INSPECTOR_PORT, CEILING_INSPECTOR_PORT] = await freePorts(4);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const CEILING = `http://127.0.0.1:${CEILING_PORT}/api/v1`;
const BASE = `${ORIGIN}/api/v1`;
const STATE = "bench/.tmp/state";
const CEILING_STATE = `${STATE}-ceiling`;
const SEEDED = "bench/.tmp/seeded";
const selected = (name) => !values.only || new RegExp(values.only).test(name);

ensureWrk();
const WRK = /^wrk \S+/.exec(spawnSync("wrk", ["--version"], { encoding: "utf8" }).stdout)?.[0] ?? "wrk";
const LOAD_AT_START = loadavg()[0];

/** Storyloom on the seeded state, its access log on (`logged`) or off, the per-account limits lifted. */
const startApp = (logged) =>
  startDev(PORT, STATE, ["--inspector-port", String(INSPECTOR_PORT), ...(logged ? [] : ["--var", "LOG_REQUESTS:false"]), ...NO_LIMITS]);

/** Both servers of a phase: Storyloom, and the ceiling, logging or not, serving the uncached cases' statements. */
async function startPhase(logged, reads) {
  const app = await startApp(logged);
  const ceiling = await startCeiling(CEILING_PORT, CEILING_STATE, ["--inspector-port", String(CEILING_INSPECTOR_PORT), "--var", `LOG:${logged}`], reads).catch(
    (e) => {
      app.stop();
      throw e;
    },
  );
  const stop = () => {
    app.stop();
    ceiling.stop();
  };
  return { app, ceiling, stop };
}

/** One wrk run with the CPU the server's workerd processes spent on it, per request. */
async function measured(server, opts) {
  const before = workerdCpuMs(server.child.pid);
  const r = await load({ duration: SECONDS, connections: CONNECTIONS, ...opts });
  return { ...r, cpu: (workerdCpuMs(server.child.pid) - before) / Math.max(1, r.total) };
}

const addStatuses = (into, from) => {
  for (const [s, n] of Object.entries(from)) into[s] = (into[s] ?? 0) + n;
  return into;
};
/** A measured share, to a tenth of a point (so a share just under its target never prints as the target). */
const pct = (x) => `${(x * 100).toFixed(1)} %`;
const roundsOf = (xs) => xs.map((x) => (x * 100).toFixed(0)).join(", ");

/** A/B/A/B: the ceiling, then the case, ROUNDS times; the medians of the per-round figures and shares. */
async function versus(servers, name, ceilingOpts, caseOpts, extra = {}) {
  const rounds = [];
  for (let i = 0; i < ROUNDS; i++) {
    const a = await measured(servers.ceiling, ceilingOpts);
    const b = await measured(servers.app, caseOpts);
    rounds.push({ a, b, cpuShare: a.cpu / b.cpu, share: b.rps / a.rps });
  }
  const row = {
    name,
    ...extra,
    cpu: median(rounds.map((r) => r.b.cpu)),
    ceilingCpu: median(rounds.map((r) => r.a.cpu)),
    cpuShare: median(rounds.map((r) => r.cpuShare)),
    cpuShares: rounds.map((r) => r.cpuShare),
    rps: median(rounds.map((r) => r.b.rps)),
    ceilingRps: median(rounds.map((r) => r.a.rps)),
    share: median(rounds.map((r) => r.share)),
    shares: rounds.map((r) => r.share),
    p50: median(rounds.map((r) => r.b.p50)),
    p99: median(rounds.map((r) => r.b.p99)),
    // wrk's CPU per request, in µs: what the load generator took of the cores the servers run on.
    loadCpu: median(rounds.flatMap((r) => [r.a, r.b].map((x) => (x.loadCpu * 1000) / Math.max(1, x.total)))),
    statuses: rounds.reduce((s, r) => addStatuses(s, r.b.statuses), {}),
    ceilingStatuses: rounds.reduce((s, r) => addStatuses(s, r.a.statuses), {}),
  };
  console.log(
    `  ${name}: CPU ${row.cpu.toFixed(2)} vs ${row.ceilingCpu.toFixed(2)} ms, share ${pct(row.cpuShare)} (${roundsOf(row.cpuShares)}); throughput ${pct(row.share)} (${roundsOf(row.shares)})`,
  );
  return row;
}

/** A read from 256 client addresses in turn (`headers` added to each), and what `probe` needs to fetch it once. */
const read = (path, headers = {}, connections = CONNECTIONS) => ({
  url: ORIGIN,
  connections,
  probe: { path, headers },
  requests: fromClients({ path, headers }),
});

/** The body a read answers with, its type, its size and its D1 round trips (from a fresh client address). */
async function probe({ path, headers }) {
  const res = await fetch(ORIGIN + path, { headers: { "cf-connecting-ip": "10.255.0.1", ...headers } });
  const text = await res.text();
  return { text, type: res.headers.get("content-type") ?? "", bytes: Buffer.byteLength(text), trips: d1Trips(res) };
}

/**
 * A cached read's ceiling: the trivial Worker padded to the read's size; for a page or a feed (a read outside
 * `/api/v1/*`), its own bytes and type, at a path outside `/api/v1/*` too. Why: such a read passes the static-asset
 * look-up before the Worker (the ceiling's does too, deployed alike), and `wrangler dev`'s proxy runs every HTML answer
 * through HTMLRewriter (live reload), a dev-only cost that a JSON pad would have left to the page alone.
 */
async function trivialFor(ceiling, path, body) {
  if (path.startsWith("/api/v1/")) return { ...ceiling, url: `${ceiling.url}?bytes=${body.bytes}` };
  const res = await fetch(`${CEILING}/copy`, { method: "PUT", headers: { "content-type": body.type }, body: body.text });
  if (!res.ok) throw new Error(`the ceiling kept no copy of ${path}: ${res.status}`);
  return { ...ceiling, url: `${new URL(CEILING).origin}/copy?copy` };
}

/**
 * Every case of a phase, in order; `kind` says which target it counts for. A cached read's ceiling answers at once with
 * a body of the same size (`pad`: `?bytes=`), so both move the same bytes; a read that reaches D1 has the ceiling run
 * its own statement through raw D1 over the same rows (`GET /d1/{name}`).
 */
function casesOf(data, etag) {
  const { hot, segment, bots, bookmark } = data;
  const jwt = { authorization: `Bearer ${bots[0].token}` };
  const branch = hot.main_branch_id;
  const trivial = (connections = CONNECTIONS) => ({ url: `${CEILING}/`, connections, pad: true });
  const reads = [
    ["GET /stories", "/api/v1/stories"],
    ["GET /stories, filtered", "/api/v1/stories?tag=harbour&rating=general&sort=active"],
    ["GET /search", `/api/v1${SEARCH_PATH}`],
    ["GET /stories/{id}", `/api/v1/stories/${hot.id}`],
    ["GET /stories/{id}/branches", `/api/v1/stories/${hot.id}/branches`],
    ["GET /stories/{id}/branches/tree", `/api/v1/stories/${hot.id}/branches/tree`],
    ["GET /stories/{id}/map", `/api/v1/stories/${hot.id}/map`],
    ["page /stories/{id} (its map drawn)", `/stories/${hot.id}`],
    ["feed /feeds/stories/{id}.atom", `/feeds/stories/${hot.id}.atom`],
    ["GET /branches/{id}", `/api/v1/branches/${branch}`],
    ["GET /branches/{id}/segments", `/api/v1/branches/${branch}/segments`],
    ["GET /branches/{id}/comments", `/api/v1/branches/${branch}/comments`],
    ["GET /branches/{id}/votes/summary", `/api/v1/branches/${branch}/votes/summary`],
    ["GET /segments/{id}/votes/summary", `/api/v1/segments/${segment}/votes/summary`],
    ["GET /segments/{id}/rewrites", `/api/v1/segments/${segment}/rewrites`],
    ["GET /stories/{id}/pins", `/api/v1/stories/${hot.id}/pins`],
    ["GET /branches/{id}/summary", `/api/v1/branches/${branch}/summary`],
    ["GET /bots/{id}/reputation", `/api/v1/bots/${bots[0].id}/reputation`],
    ["GET /dashboard/stats", "/api/v1/dashboard/stats"],
  ].map(([name, path]) => ({ name, kind: "read", ceiling: trivial(), opts: read(path) }));
  return [
    ...reads,
    {
      name: "GET segments, If-None-Match (304)",
      kind: "read",
      ceiling: trivial(),
      opts: read(`/api/v1/branches/${branch}/segments`, { "if-none-match": etag }),
    },
    { name: "GET segments with a JWT", kind: "jwt", ceiling: trivial(), opts: read(`/api/v1/branches/${branch}/segments`, jwt) },
    { name: "GET /stories, 32 connections", kind: "c32", ceiling: trivial(32), opts: read("/api/v1/stories", {}, 32) },
    { name: "GET segments, 32 connections", kind: "c32", ceiling: trivial(32), opts: read(`/api/v1/branches/${branch}/segments`, {}, 32) },
    { name: "GET segments with a JWT, 32 connections", kind: "c32", ceiling: trivial(32), opts: read(`/api/v1/branches/${branch}/segments`, jwt, 32) },
    {
      name: "GET /stories with x-d1-bookmark (uncached, D1)",
      kind: "uncached",
      ceiling: { url: `${CEILING}/d1/stories` },
      opts: read("/api/v1/stories", { "x-d1-bookmark": bookmark }),
    },
    {
      name: "GET segments with x-d1-bookmark (uncached, D1)",
      kind: "uncached",
      ceiling: { url: `${CEILING}/d1/segments` },
      opts: read(`/api/v1/branches/${branch}/segments`, { "x-d1-bookmark": bookmark }),
    },
    {
      // Its D1 statement, then the search shard: the ceiling runs the D1 statement alone (no target; what the shard adds).
      name: "GET /search with x-d1-bookmark (uncached: D1, then its shard)",
      kind: "search",
      ceiling: { url: `${CEILING}/d1/search` },
      opts: read(`/api/v1${SEARCH_PATH}`, { "x-d1-bookmark": bookmark }),
    },
    {
      name: "POST segments, 40 branches, 10 writers",
      kind: "write",
      ceiling: { url: CEILING, requests: spreadCeiling() },
      opts: { url: ORIGIN, requests: spreadWrites(data) },
    },
  ].filter((c) => selected(c.name));
}

/**
 * The ceiling's read hands the Worker the very page the case's read does: each JSON text its rows carry (the page
 * SQLite wrote) is, byte for byte, in the case's answer, which splices it in. A read whose statement or binds drifted
 * from the case's fails here instead of measuring something else.
 */
async function checkSameRows(name, ceilingUrl, caseBody) {
  const text = await (await fetch(ceilingUrl)).text();
  const answer = JSON.parse(text);
  const pages = (answer.data ?? []).flat().flatMap((row) => Object.values(row).filter((v) => typeof v === "string" && v.startsWith("[")));
  if (!pages.length || !pages.every((page) => caseBody.includes(page))) {
    throw new Error(`${name}: the ceiling's rows are not the ones the case answers: ${text.slice(0, 300)}`);
  }
  return Buffer.byteLength(text);
}

async function runPhase(logged, data, reads) {
  console.log(logged ? "phase: as shipped (access log on; the ceilings log the same line)" : "phase: silent (LOG_REQUESTS off; silent ceilings)");
  restoreSeeded();
  const servers = await startPhase(logged, reads);
  try {
    // The hot branch's ETag as this phase's server has it (the 304 case sends it back).
    const etag = (await fetch(`${BASE}/branches/${data.hot.main_branch_id}/segments`)).headers.get("etag");
    const cases = casesOf(data, etag);
    // Warm both servers (JIT, module caches, the micro-cache) so the first measured case is not penalised.
    for (const c of cases.slice(0, 3)) await Promise.all([load({ duration: 2, ...c.ceiling }), load({ duration: 2, ...c.opts })]);
    const rows = [];
    for (const c of cases) {
      const body = c.opts.probe ? await probe(c.opts.probe) : null;
      // The ceiling's answer is bigger: its rows as JSON quote the page's JSON text, where the case splices it in.
      const ceilingBytes = c.kind === "uncached" ? await checkSameRows(c.name, c.ceiling.url, body.text) : null;
      const ceiling = c.ceiling.pad ? await trivialFor(c.ceiling, c.opts.probe.path, body) : c.ceiling;
      const row = await versus(servers, c.name, ceiling, c.opts, { kind: c.kind, logged });
      // Sampled after the load, so a cached read shows the micro-cache's 0 (a first request would miss it).
      const after = c.opts.probe ? await probe(c.opts.probe) : null;
      rows.push({ ...row, trips: after ? after.trips : "1–2", bytes: after?.bytes ?? null, ceilingBytes });
    }
    let turns = null;
    if (selected("four bots")) {
      console.log("  four bots taking turns on one branch");
      const before = workerdCpuMs(servers.app.child.pid);
      const t = await fourBots(
        BASE,
        data.turns,
        data.bots.map((b) => b.token),
        10,
      );
      turns = { ...t, cpu: (workerdCpuMs(servers.app.child.pid) - before) / t.total, order: await checkOrder(BASE, data.turns), logged };
    }
    return { rows, turns };
  } finally {
    servers.stop();
    await new Promise((r) => setTimeout(r, 1500));
  }
}

/**
 * Seeds a fresh state once (silent server), takes the uncached cases' statements from it, and keeps a copy: each phase
 * starts from it (`restoreSeeded`), Storyloom and the ceiling's reads alike. Why: what a phase writes would otherwise
 * weigh on the next one. A writer's segment limits are counted over their last day of segments
 * (src/domain/stories/segment-quota.ts), and a phase's write case has each of the ten writers write about 250, more than twice
 * the shipped daily limit (100): the second phase's writes each counted ~250 more rows than the first's (a write cost
 * ~0.6 ms more CPU once its writer had written 1,200 that day, measured on one server).
 */
async function prepare() {
  rmSync("bench/.tmp", { recursive: true, force: true });
  mkdirSync(STATE, { recursive: true });
  const app = await startApp(false);
  try {
    const data = await seed(BASE);
    await searchable(data.bookmark);
    return { data, reads: await d1Reads(BASE, data.hot.main_branch_id) };
  } finally {
    app.stop();
    await new Promise((r) => setTimeout(r, 1500));
    cpSync(STATE, SEEDED, { recursive: true });
  }
}

/**
 * Once the seeded writes reached the search shards (a story is handed to the search queue a window after its first
 * write, SEARCH_HAND_OVER_MS): the search case ranks every seeded story and segment, and the copy keeps the shards.
 */
async function searchable(bookmark) {
  // The same count for longer than a window and the queue's batch: the last story's last window was synced.
  let last = -1;
  let same = 0;
  for (let i = 0; i < 90; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const res = await fetch(`${BASE}${SEARCH_PATH}`, { headers: { "x-d1-bookmark": bookmark } });
    const count = (await res.json()).data.count;
    same = count === last ? same + 1 : 0;
    if (count > 0 && same >= 7) return;
    last = count;
  }
  throw new Error("the seeded stories did not reach the search shards in a minute");
}

/** Storyloom's state as seeded, and the ceiling's: a copy of the same D1 for its reads, nothing else. */
function restoreSeeded() {
  for (const dir of [STATE, CEILING_STATE]) rmSync(dir, { recursive: true, force: true });
  cpSync(SEEDED, STATE, { recursive: true });
  copyD1(SEEDED, CEILING_STATE);
}

const CACHED = ["read", "jwt", "c32"];
/** Each row's target on its CPU share, or none (the silent phase's writes). */
function targetOf(r) {
  if (CACHED.includes(r.kind)) return r.logged ? 0.9 : 0.8;
  if (r.kind === "uncached") return 0.85;
  if (r.kind === "write" && r.logged) return 0.7;
  return null;
}
const TARGETS = [
  ["cached reads, anonymous and with a JWT, 10 and 32 connections, silent: each ≥ 80 % of the trivial ceiling", (r) => !r.logged && CACHED.includes(r.kind)],
  ["the same, as shipped: each ≥ 90 % of the logging ceiling", (r) => r.logged && CACHED.includes(r.kind)],
  ["reads that reach D1: each ≥ 85 % of the ceiling running the same statement through raw D1", (r) => r.kind === "uncached"],
  ["POST segments over 40 branches, as shipped: ≥ 70 % of the (logging) write ceiling", (r) => r.logged && r.kind === "write"],
];
const verdict = (share, min) => (share >= min ? "met" : "MISSED");
const count5xx = (statuses) => Object.entries(statuses).reduce((n, [s, k]) => n + (Number(s) >= 500 ? k : 0), 0);

const spread = (xs) => (xs.length ? `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}` : "–");

function report(rows, turnsRuns) {
  const lines = [
    "# Benchmark results",
    "",
    `Run ${new Date().toISOString()} on ${cpus().length} cores (${cpus()[0]?.model ?? "unknown CPU"}), load average ${LOAD_AT_START.toFixed(2)} when it`,
    `started, by \`npm run bench -- --rounds ${ROUNDS} --seconds ${SECONDS}${values.only ? ` --only "${values.only}"` : ""}${phase === "both" ? "" : ` --phase ${phase}`}${CONNECTIONS === 10 ? "" : ` --connections ${CONNECTIONS}`}\` (bench/run.mjs; bench/README.md says what each case and ceiling is).`,
    "",
    [
      "Method. Storyloom runs under `npm run dev` (wrangler dev: local D1, Durable Objects, queues), each ceiling under the same",
      "`wrangler dev`, deployed as Storyloom is (static assets in front, `/api/v1/*` to the Worker first; bench/ceiling/): a",
      "cached read's ceiling answers at once, padded to the read's body size (a page's or a feed's: its very bytes and type,",
      "at a path outside `/api/v1/*` like its own, so both pass the asset look-up and dev's HTML rewriter); a read that reaches D1 has its ceiling run the",
      "very same SQL statement with the same binds through raw D1 (`env.DB.prepare(sql).bind(...).all()`) over a copy of the",
      "same seeded database and answer its rows as JSON; a write's ceiling makes one RPC to a SQLite-backed Durable Object",
      `that runs one D1 batch of two statements. The load comes from ${WRK} with one thread, a process of its own, so the`,
      `servers keep the cores (it took ${spread(rows.map((r) => r.loadCpu))} µs of CPU per request). Each case runs A/B/A/B against its ceiling`,
      `(${ROUNDS} round${ROUNDS === 1 ? "" : "s"} of ${SECONDS} s, ${CONNECTIONS} connections unless named). CPU per request is the server's workerd processes'`,
      "user+system time over a run divided by its requests (what production bills; the load generator is not counted); the",
      "CPU share is the ceiling's CPU per request over the case's, the throughput share the case's requests per second over",
      "the ceiling's, each the median of the per-round ratios. The targets are judged on the CPU share. Silent: Storyloom",
      "with `LOG_REQUESTS` off against silent ceilings; as shipped: its access log on, against ceilings that write the same",
      "one JSON line per request. Reads come from 256 client addresses in turn (`cf-connecting-ip`; the 600/min anonymous",
      "read limit applies but is not hit, and one read in ten buys its address a lease from the rate-limiting binding, under",
      "`wrangler dev` a Durable Object call); per-account limits are lifted. Each phase starts from the same seeded state.",
    ].join("\n"),
    "",
    "| case | mode | CPU ms/req, case / ceiling | CPU share (rounds) | target | req/s, case / ceiling | throughput share (rounds) | p50 / p99 ms | body bytes (/ ceiling's) | D1 trips | wrk µs/req | statuses |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => {
      const min = targetOf(r);
      return `| ${r.name} | ${r.logged ? "shipped" : "silent"} | ${r.cpu.toFixed(2)} / ${r.ceilingCpu.toFixed(2)} | ${pct(r.cpuShare)} (${roundsOf(r.cpuShares)}) | ${min === null ? "–" : `≥ ${Math.round(min * 100)} %: ${verdict(r.cpuShare, min)}`} | ${r.rps.toFixed(0)} / ${r.ceilingRps.toFixed(0)} | ${pct(r.share)} (${roundsOf(r.shares)}) | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} | ${r.bytes ?? "–"}${r.ceilingBytes ? ` / ${r.ceilingBytes}` : ""} | ${r.trips} | ${r.loadCpu.toFixed(0)} | ${JSON.stringify(r.statuses)} |`;
    }),
    "",
    "## Targets",
    "",
  ];
  let missed = 0;
  const lowest = (chosen, key) => chosen.reduce((a, r) => (r[key] < a[key] ? r : a));
  const where = (r) => `${r.name}, ${r.logged ? "shipped" : "silent"}`;
  for (const [label, pick] of TARGETS) {
    const chosen = rows.filter(pick);
    if (!chosen.length) continue;
    const low = lowest(chosen, "cpuShare");
    const ok = low.cpuShare >= targetOf(low);
    missed += ok ? 0 : 1;
    const slow = lowest(chosen, "share");
    lines.push(
      `- ${ok ? "met" : "MISSED"}: ${label} — lowest CPU share ${pct(low.cpuShare)} (${where(low)}); throughput share beside it: lowest ${pct(slow.share)} (${where(slow)}).`,
    );
  }
  const silentReads = rows.filter((r) => !r.logged && r.kind === "read");
  if (silentReads.length) {
    const m = median(silentReads.map((r) => r.cpuShare));
    missed += m >= 0.85 ? 0 : 1;
    lines.push(
      `- ${verdict(m, 0.85)}: median CPU share of the ${silentReads.length} anonymous cached reads, silent, ≥ 85 % — ${pct(m)} (throughput share median ${pct(median(silentReads.map((r) => r.share)))}).`,
    );
  }
  for (const t of turnsRuns) {
    const fivexx = count5xx(t.statuses);
    const ok = t.rps >= 40 && fivexx === 0 && t.order.contiguous && t.order.rotating;
    missed += ok ? 0 : 1;
    lines.push(
      `- ${ok ? "met" : "MISSED"}: one branch, four bots in turn (${t.logged ? "shipped" : "silent"}): ${t.rps.toFixed(1)} accepted segments/s (≥ 40; p50 ${t.p50} ms, p99 ${t.p99} ms, CPU ${t.cpu.toFixed(2)} ms per request), ${t.statuses[403] ?? 0} NOT_YOUR_TURN refusals, ${fivexx} responses ≥ 500; read back ${t.order.segments} segments, contiguous: ${t.order.contiguous}, strict rotation: ${t.order.rotating}.`,
    );
  }
  const fivexx = rows.reduce((n, r) => n + count5xx(r.statuses), 0);
  const ceilingBad = rows.reduce((n, r) => n + countNon2xx(r.ceilingStatuses), 0);
  lines.push(
    `- Responses ≥ 500 in all the cases above: ${fivexx}; ceiling answers other than 2xx: ${ceilingBad}. Round-trip budget (reads 1, 0 on a micro-cache hit; writes ≤ 2) is asserted per endpoint by test/edge.test.ts.`,
    "",
  );
  return { text: lines.join("\n"), missed: missed + (fivexx ? 1 : 0) + (ceilingBad ? 1 : 0) };
}

const { data, reads } = await prepare();
const rows = [];
const turnsRuns = [];
for (const logged of PHASES[phase]) {
  const { rows: r, turns } = await runPhase(logged, data, reads);
  rows.push(...r);
  if (turns) turnsRuns.push(turns);
}
const api = report(rows, turnsRuns);
const mcp = selected("mcp") ? mcpCase() : { text: "", missed: 0 };
const text = api.text + mcp.text;
if (values.write) writeFileSync("bench/RESULTS.md", text + keptSection());
console.log(text);
process.exit(api.missed + mcp.missed ? 1 : 0);

/** The section bench/export.mjs writes at the end of RESULTS.md ("EPUB export"), kept when this run rewrites the file. */
function keptSection() {
  const old = existsSync("bench/RESULTS.md") ? readFileSync("bench/RESULTS.md", "utf8") : "";
  const at = old.indexOf("\n## EPUB export");
  return at < 0 ? "" : `\n${old.slice(at + 1)}`;
}

/**
 * The MCP door's case: each tool call against the REST request it wraps, by bench/mcp-vs-rest.mjs (its
 * own `wrangler dev`, after this bench's servers stopped), in the same A/B/A/B way. Target: within 15 % of CPU.
 */
function mcpCase() {
  const run = spawnSync(process.execPath, ["bench/mcp-vs-rest.mjs", "--rounds", String(ROUNDS), "--seconds", String(SECONDS)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const pairs = run.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  const lines = ["## The MCP door: a tool call against the REST request it wraps, CPU per request", ""];
  let missed = run.status === 0 && pairs.length ? 0 : 1;
  if (missed) lines.push(`- MISSED: bench/mcp-vs-rest.mjs failed (exit ${run.status}).`);
  for (const p of pairs) {
    const ok = p.cpu_ratio <= 1.15;
    missed += ok ? 0 : 1;
    lines.push(
      `- ${ok ? "met" : "MISSED"}: ${p.name} — MCP ${p.mcp_cpu_ms} ms against REST ${p.rest_cpu_ms} ms, ratio ${p.cpu_ratio} (≤ 1.15); requests/s ratio ${p.rps_ratio}.`,
    );
  }
  return { text: `${lines.join("\n")}\n`, missed };
}
