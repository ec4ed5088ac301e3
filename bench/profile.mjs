// `npm run profile [-- --duration S --write --only REGEX --callers FN --alloc --ceiling --top N]`: where a request's CPU goes. Starts `npm run dev` on a fresh local
// state with V8's inspector open (wrangler dev exposes the Worker's isolate, Durable Objects included), seeds
// data, then samples the isolate with the inspector's CPU profiler under four loads: an anonymous cached read,
// the same read with a JWT, a read that must reach D1, and segment writes spread over 40 branches. Each sample is
// charged to the nearest frame of the Worker's bundle (its module, from esbuild's `// path` comments) or of a
// runtime script (D1's client, workerd's internals); builtins (JSON, crypto, regexps) count for the code that
// called them. Prints µs per request by category and the top functions; writes bench/PROFILE.md only with
// --write (and --label, the heading of the section it replaces or adds). `--only` profiles the cases whose name
// matches; `--callers FN` also prints, per case, the chains of our bundle's frames that lead to the functions named FN;
// `--alloc` also samples the heap's allocations per case (V8's sampling heap profiler) and prints where they come from.
// `--ceiling` profiles the bench's ceilings instead (bench/ceiling/, as `npm run bench` serves them): the uncached reads'
// own statements through raw D1 over a copy of the same seeded database, and the write ceiling, so each category of a
// Storyloom case can be set beside what the smallest Worker doing the same I/O spends on it. `--top N` lists N
// functions (12 by default). The load comes from wrk (bench/lib.mjs, `load`).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { NO_LIMITS, copyD1, d1Reads, ensureWrk, fromClients, load, sleep, startCeiling, startDev } from "./lib.mjs";
import { seed, spreadCeiling, spreadWrites } from "./seed.mjs";

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "8" },
    connections: { type: "string", default: "10" },
    write: { type: "boolean", default: false },
    label: { type: "string", default: "current" },
    only: { type: "string" },
    callers: { type: "string" },
    alloc: { type: "boolean", default: false },
    ceiling: { type: "boolean", default: false },
    top: { type: "string", default: "12" },
  },
});
const PORT = 8793;
const INSPECTOR = 9339;
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASE = `${ORIGIN}/api/v1`;
const STATE = "bench/.tmp/profile-state";

/** A minimal Chrome DevTools Protocol client over the inspector's WebSocket. */
async function inspector() {
  // The inspector proxy accepts local origins only.
  const ws = new WebSocket(`ws://127.0.0.1:${INSPECTOR}/ws`, { headers: { origin: "http://localhost" } });
  const pending = new Map();
  const scripts = new Map();
  let next = 0;
  ws.onmessage = (m) => {
    const msg = JSON.parse(m.data);
    if (msg.id && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    } else if (msg.method === "Debugger.scriptParsed") scripts.set(msg.params.scriptId, msg.params.url);
  };
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error("cannot open the inspector"));
  });
  const send = (method, params = {}) =>
    new Promise((resolve, reject) => {
      const id = ++next;
      const timer = setTimeout(() => reject(new Error(`${method}: no answer`)), 60_000);
      pending.set(id, (msg) => {
        clearTimeout(timer);
        msg.error ? reject(new Error(`${method}: ${msg.error.message}`)) : resolve(msg.result);
      });
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { send, scripts, close: () => ws.close() };
}

/** Line → module of the bundle, from esbuild's `// src/…` and `// node_modules/…` boundary comments. */
function moduleMap(source) {
  const starts = [];
  source.split("\n").forEach((line, i) => {
    // The ceiling's bundle names its paths from bench/ceiling/ (`// worker.js`, `// ../../node_modules/…`).
    const m = /^\/\/ (?:\.\.\/)*((?:src|node_modules)\/\S+|worker\.js)$/.exec(line);
    if (m) starts.push([i, m[1] === "worker.js" ? "bench/ceiling/worker.js" : m[1]]);
  });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = "(bundle prelude)";
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid][0] <= line) {
        found = starts[mid][1];
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

/** The categories of the table: the first rule that matches a module (or runtime script) names it. */
const CATEGORIES = [
  [/^node_modules\/@modelcontextprotocol\//, "MCP SDK"],
  [/^src\/mcp\//, "MCP door (src/mcp)"],
  [/^src\/middleware\/access-log/, "access log"],
  [/^src\/middleware\/(read-cache|memory-hit)/, "micro-cache"],
  [/^src\/middleware\/read-limit|^src\/lib\/read-leases/, "anonymous read limit"],
  [/^src\/middleware\/services|^src\/lib\/meter|^src\/db\/metered/, "services, Server-Timing, D1 metering"],
  [/^src\/middleware\/auth|^src\/lib\/jwt|^src\/lib\/crypto/, "auth, JWT, hashing"],
  [/^src\/middleware\/limits|^src\/middleware\/subject-limits|^src\/domain\/idempotency/, "limits and idempotency"],
  [/^src\/middleware\//, "other middleware (src)"],
  [/^node_modules\/hono\/dist\/middleware\/etag/, "ETag (hono/etag)"],
  [/^node_modules\/hono\/dist\/middleware\/cors/, "CORS (hono/cors)"],
  [/^node_modules\/hono\/dist\/middleware\/request-id/, "request id (hono/request-id)"],
  [/^node_modules\/hono\/dist\/middleware\//, "other Hono middleware"],
  [/^node_modules\/hono\/dist\/(router|hono-base|hono|compose|context|request|utils)/, "Hono routing, context, request"],
  [/^node_modules\/(@hono\/zod-openapi|@hono\/zod-validator|zod|@asteasolutions)/, "validation (zod, zod-openapi)"],
  [/^node_modules\/hono\/dist\/validator/, "validation (zod, zod-openapi)"],
  [/^node_modules\/drizzle-orm/, "Drizzle (query building, mapping)"],
  [/^src\/durable\/|^src\/turns\//, "Durable Objects (room, gate)"],
  [/^src\/domain\/|^src\/db\//, "domain functions"],
  [/^src\/routes\/|^src\/lib\/(envelope|validation|openapi)/, "route handlers, envelope"],
  [/^cloudflare-internal:d1/, "D1 client (workerd)"],
  [/^\(garbage collector\)/, "garbage collector"],
  [/^\((program|root)\)/, "(program): runtime outside JS"],
  [/^(workerd|node-internal|cloudflare|file:.*miniflare)/, "workerd and miniflare internals"],
  [/^bench\/ceiling\//, "the ceiling's own code"],
];
const categoryOf = (where) => CATEGORIES.find(([re]) => re.test(where))?.[1] ?? "other";

/** Charges each node's samples to the nearest frame that names a place (bundle module or runtime script). */
function attribute(profile, bundleId, lineToModule) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const place = new Map();
  const placeOf = (id) => {
    if (place.has(id)) return place.get(id);
    const { callFrame: f } = byId.get(id);
    let where;
    if (String(f.scriptId) === String(bundleId)) where = { module: lineToModule(f.lineNumber), fn: f.functionName || "(anonymous)" };
    else if (/^\((program|garbage collector|idle|root)\)$/.test(f.functionName)) where = { module: f.functionName, fn: f.functionName };
    else if (f.url) where = { module: f.url.replace(/^file:\/\/.*node_modules\//, "file:…/"), fn: f.functionName || "(anonymous)" };
    else where = parent.has(id) ? placeOf(parent.get(id)) : { module: "(native)", fn: f.functionName };
    place.set(id, where);
    return where;
  };
  const perSample = (profile.endTime - profile.startTime) / profile.samples.length;
  const hits = new Map();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const modules = new Map();
  const functions = new Map();
  let busy = 0;
  for (const [id, count] of hits) {
    const where = placeOf(id);
    if (where.module === "(idle)") continue;
    const us = count * perSample;
    busy += us;
    modules.set(where.module, (modules.get(where.module) ?? 0) + us);
    const fn = `${where.fn} (${where.module})`;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
  }
  return { modules, functions, busy };
}

/** Bytes allocated per request by the function that allocated them (sampled), the top ones. */
function allocations(profile, bundleId, lineToModule, requests) {
  const bytes = new Map();
  let total = 0;
  const walk = (node) => {
    const f = node.callFrame;
    const where = String(f.scriptId) === String(bundleId) ? lineToModule(f.lineNumber) : f.url || "(native)";
    const key = `${f.functionName || "(anonymous)"} (${where})`;
    total += node.selfSize;
    if (node.selfSize) bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize);
    for (const c of node.children) walk(c);
  };
  walk(profile.head);
  const kib = (b) => (b / requests / 1024).toFixed(2);
  return [
    `Allocated (sampled): ${kib(total)} KiB per request`,
    ...[...bytes]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([k, b]) => `- ${kib(b)} KiB: \`${k}\``),
  ].join("\n");
}

/** Where the samples of functions named `name` come from: each as its chain of bundle frames (our code and libraries). */
function callersOf(profile, bundleId, lineToModule, name, requests) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const perSample = (profile.endTime - profile.startTime) / profile.samples.length;
  const chains = new Map();
  for (const sample of profile.samples) {
    // Builtins count for their caller, as in the table: the sample's nearest frame with a script.
    let id = sample;
    while (!byId.get(id).callFrame.url && parent.has(id)) id = parent.get(id);
    if (byId.get(id).callFrame.functionName !== name) continue;
    const frames = [];
    for (let p = parent.get(id); p !== undefined && frames.length < 6; p = parent.get(p)) {
      const f = byId.get(p).callFrame;
      if (String(f.scriptId) === String(bundleId)) frames.push(`${f.functionName || "(anonymous)"} (${lineToModule(f.lineNumber)})`);
    }
    const chain = frames.join(" ← ") || "(no bundle frame)";
    chains.set(chain, (chains.get(chain) ?? 0) + perSample);
  }
  return [...chains]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([chain, us]) => `- ${(us / requests).toFixed(0)} µs: \`${name}\` ← ${chain}`)
    .join("\n");
}

const cases = (data) => [
  [
    "cached read, anonymous: GET /branches/{id}/segments",
    { url: ORIGIN, requests: fromClients({ path: `/api/v1/branches/${data.hot.main_branch_id}/segments` }) },
  ],
  ["cached read, anonymous: the story page (its map drawn)", { url: ORIGIN, requests: fromClients({ path: `/stories/${data.hot.id}` }) }],
  [
    "cached read, JWT: GET /branches/{id}/segments",
    { url: `${BASE}/branches/${data.hot.main_branch_id}/segments`, headers: { authorization: `Bearer ${data.bots[0].token}` } },
  ],
  [
    "uncached read (x-d1-bookmark): GET /stories",
    { url: ORIGIN, requests: fromClients({ path: "/api/v1/stories", headers: { "x-d1-bookmark": data.bookmark } }) },
  ],
  [
    "uncached read (x-d1-bookmark): GET /branches/{id}/segments",
    { url: ORIGIN, requests: fromClients({ path: `/api/v1/branches/${data.hot.main_branch_id}/segments`, headers: { "x-d1-bookmark": data.bookmark } }) },
  ],
  ["write: POST /branches/{id}/segments, 40 branches", { url: ORIGIN, requests: spreadWrites(data) }],
  ["MCP: tools/call list_stories, JWT (its REST twin: the uncached GET /stories above)", mcpCall(data, "list_stories", { limit: 20 })],
  ["MCP: tools/call read_branch, JWT (its REST twin: GET /branches/{id})", mcpCall(data, "read_branch", { branch_id: data.hot.main_branch_id })],
];

/**
 * The ceilings' cases (`--ceiling`): the uncached `GET /stories` and page of segments' own statements through raw D1
 * over a copy of the same seeded rows (as `npm run bench` compares them), and the write ceiling.
 */
const ceilingCases = () => [
  ["ceiling: GET /stories' statement through raw D1 (beside the uncached GET /stories)", { url: `${BASE}/d1/stories` }],
  ["ceiling: the page of segments' statement through raw D1 (beside the uncached page of segments)", { url: `${BASE}/d1/segments` }],
  ["ceiling: write: POST /write, 40 branches (one RPC, one D1 batch of two statements)", { url: BASE, requests: spreadCeiling() }],
];

/** A `tools/call` of one tool with a bot's JWT, as `npm run bench:mcp` makes it. */
const mcpCall = (data, name, args) => ({
  url: `${ORIGIN}/mcp`,
  method: "POST",
  headers: {
    authorization: `Bearer ${data.bots[0].token}`,
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-11-25",
  },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
});

function table(name, r, requests) {
  const per = (us) => (us / requests).toFixed(0);
  const byCategory = new Map();
  for (const [module, us] of r.modules) byCategory.set(categoryOf(module), (byCategory.get(categoryOf(module)) ?? 0) + us);
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
  return [
    `### ${name}`,
    "",
    `${requests} requests; JavaScript thread busy ${per(r.busy)} µs per request (samples, idle excluded).`,
    "",
    "| category | µs per request | share |",
    "|---|---|---|",
    ...sorted(byCategory).map(([c, us]) => `| ${c} | ${per(us)} | ${((us / r.busy) * 100).toFixed(0)} % |`),
    "",
    "| top functions (self, builtins charged to their caller) | µs per request |",
    "|---|---|",
    ...sorted(r.functions)
      .slice(0, Number(values.top))
      .map(([f, us]) => `| \`${f.replace(/\|/g, "\\|")}\` | ${per(us)} |`),
    "",
  ].join("\n");
}

/**
 * The server to profile and its cases: Storyloom, seeded; or (`--ceiling`) the ceilings, whose reads run Storyloom's
 * statements over its seeded rows, so a Storyloom is seeded first and its D1 copied, as `npm run bench` does.
 */
async function profiled() {
  const dev = (options) => startDev(PORT, STATE, [...options, "--var", "LOG_REQUESTS:false", ...NO_LIMITS]);
  if (!values.ceiling) {
    const app = await dev(["--inspector-port", String(INSPECTOR), "--minify", "false"]);
    try {
      return { app, list: cases(await seed(BASE)) };
    } catch (e) {
      app.stop();
      throw e;
    }
  }
  const seeder = await dev([]);
  let reads;
  try {
    reads = await d1Reads(BASE, (await seed(BASE)).hot.main_branch_id);
  } finally {
    seeder.stop();
    await sleep(1500);
  }
  copyD1(STATE, `${STATE}-ceiling`);
  return { app: await startCeiling(PORT, `${STATE}-ceiling`, ["--inspector-port", String(INSPECTOR)], reads), list: ceilingCases() };
}

ensureWrk();
for (const dir of [STATE, `${STATE}-ceiling`]) rmSync(dir, { recursive: true, force: true });
mkdirSync(STATE, { recursive: true });
const { app, list } = await profiled();
try {
  const cdp = await inspector();
  await cdp.send("Debugger.enable");
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  const [bundleId] = [...cdp.scripts].find(([, url]) => /\.wrangler\/tmp\/.*\/(index|worker)\.js$/.test(url));
  const lineToModule = moduleMap((await cdp.send("Debugger.getScriptSource", { scriptId: bundleId })).scriptSource);
  await cdp.send("Debugger.disable"); // sampling only: no breakpoints, no pauses
  const sections = [];
  for (const [name, opts] of list.filter(([n]) => !values.only || new RegExp(values.only).test(n))) {
    console.log(`profile: ${name}`);
    await load({ duration: 2, connections: Number(values.connections), ...opts }); // warm
    if (values.alloc) {
      await cdp.send("HeapProfiler.enable");
      await cdp.send("HeapProfiler.startSampling", { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      const sampled = await load({ duration: 4, connections: Number(values.connections), ...opts });
      const { profile: heap } = await cdp.send("HeapProfiler.stopSampling");
      console.log(allocations(heap, bundleId, lineToModule, sampled.total));
    }
    await cdp.send("Profiler.start");
    const r = await load({ duration: Number(values.duration), connections: Number(values.connections), ...opts });
    const { profile } = await cdp.send("Profiler.stop");
    sections.push(table(name, attribute(profile, bundleId, lineToModule), r.total));
    if (values.callers) console.log(callersOf(profile, bundleId, lineToModule, values.callers, r.total));
  }
  cdp.close();
  const heading = `## ${values.label} (${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, ${cpus()[0]?.model ?? "unknown CPU"})`;
  const section = [heading, "", ...sections].join("\n");
  console.log(section);
  if (values.write) {
    const intro = [
      "# Where a request's CPU goes",
      "",
      "`npm run profile -- --write --label NAME` (bench/profile.mjs): V8's sampling profiler on the Worker's isolate under `wrangler dev`",
      "(`LOG_REQUESTS` off, limits lifted), 10 connections. Each sample is charged to the nearest frame of our bundle (by module) or",
      "of a runtime script; builtins count for their caller. The JavaScript thread is not all of a request's CPU: workerd's own",
      "C++ work outside JavaScript (HTTP, the dev proxy, SQLite) shows only in `npm run bench`'s CPU per request.",
      "",
    ].join("\n");
    const old = existsSync("bench/PROFILE.md") ? readFileSync("bench/PROFILE.md", "utf8") : intro;
    const parts = old.split(/^(?=## )/m);
    const kept = parts.filter((p) => !p.startsWith(`## ${values.label} (`));
    writeFileSync("bench/PROFILE.md", `${[...kept, `${section}\n`].join("").trimEnd()}\n`);
  }
} finally {
  app.stop();
}
process.exit(0);
