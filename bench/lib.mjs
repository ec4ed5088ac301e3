// Helpers for the benchmark scripts: start servers, call the API, load them with wrk.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, cpSync, mkdtempSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a command in its own process group and waits until `url` answers. Its output goes to a file (`opts.log`,
 * else a temporary one), not through this process: reading a server's log lines here would cost CPU on the same
 * cores the server runs on. `url`'s port must be free first: a server someone else runs there would answer in ours'
 * place (and be seeded and loaded by the bench).
 */
export async function startServer(cmd, args, url, opts = {}) {
  const { hostname, port } = new URL(url);
  if (!(await isFree(Number(port), hostname))) throw new Error(`port ${port} is taken (another server listens there): pick another`);
  const logFile = opts.log ?? path.join(mkdtempSync(path.join(tmpdir(), "storyloom-server-")), "server.log");
  const out = openSync(logFile, "w");
  const child = spawn(cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...opts.env },
    stdio: ["ignore", out, out],
    detached: true,
  });
  closeSync(out);
  const log = () => readFileSync(logFile, "utf8");
  for (let i = 0; i < 240; i++) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return { child, log, stop: () => stop(child) };
    } catch {}
    if (child.exitCode !== null) break;
    await sleep(500);
  }
  stop(child);
  throw new Error(`server did not start: ${cmd} ${args.join(" ")}\n${log()}`);
}

/**
 * `npm run dev` on 127.0.0.1:`port` with its own local state (`persist`) and further `wrangler dev` options
 * (`--var NAME:value`, `--inspector-port`…), once `/api/v1/health` answers.
 */
export const startDev = (port, persist, options = [], opts = {}) =>
  startServer("npm", ["run", "dev", "--", "--port", String(port), "--persist-to", persist, ...options], `http://127.0.0.1:${port}/api/v1/health`, opts);

/**
 * A Worker of the bench's own (its `config`, a wrangler.toml under bench/) under `wrangler dev` on 127.0.0.1:`port`
 * with its own local state, once `ready` (a path) answers.
 */
export const startWrangler = (config, port, persist, ready, options = []) =>
  startServer(
    "wrangler",
    ["dev", "--config", config, "--port", String(port), "--ip", "127.0.0.1", "--persist-to", persist, ...options],
    `http://127.0.0.1:${port}${ready}`,
  );

/**
 * The bench's ceilings (bench/ceiling/) under `wrangler dev`, as `npm run bench` and `npm run profile -- --ceiling` serve
 * them; `reads` (from `d1Reads`) are the statements its `GET /api/v1/d1/{name}` runs.
 */
export const startCeiling = (port, persist, options = [], reads = null) =>
  startWrangler("bench/ceiling/wrangler.toml", port, persist, "/api/v1/", [...(reads ? ["--var", `READS:${JSON.stringify(reads)}`] : []), ...options]);

/**
 * Copies Storyloom's local D1 (a stopped server's `--persist-to` state) into the ceiling's state: the ceiling's `DB`
 * has the same database id, so its reads run over the very same rows (bench/ceiling/wrangler.toml).
 */
export const copyD1 = (from, to) => cpSync(path.join(from, "v3/d1"), path.join(to, "v3/d1"), { recursive: true });

/**
 * The statements of the uncached cases as Storyloom runs them (bench/d1-reads.ts, by tsx), for the ceiling: each read
 * with the values its route used, read off its answer's `pagination` (and the page's status) from `base`.
 */
export async function d1Reads(base, branchId) {
  const page = async (path) => (await api(base)(path)).data;
  const segments = (await page(`/branches/${branchId}/segments`)).pagination;
  const stories = await page("/stories");
  const search = (await page(SEARCH_PATH)).pagination;
  const { tsImport } = await import("tsx/esm/api");
  const { d1Reads: capture } = await tsImport("./d1-reads.ts", import.meta.url);
  return capture({ branchId, segments, stories: { ...stories.pagination, status: stories.stories[0].status }, search: { ...search, q: SEARCH_WORDS } });
}

/**
 * The bench's search: a word every seeded segment has (bench/seed.mjs writes `words(n)`: w0 w1 …), so the page is
 * ranked out of every segment and story it finds, as a common word's search is.
 */
export const SEARCH_WORDS = "w1";
export const SEARCH_PATH = `/search?q=${SEARCH_WORDS}`;

/** The median of a list of numbers (the mean of the middle two for an even count). */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function stop(child) {
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {}
}

export function api(base) {
  return async function call(path, { method, body, token } = {}) {
    const headers = { "content-type": "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(base + path, {
      method: method ?? (body ? "POST" : "GET"),
      headers,
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${method ?? "GET"} ${path} -> ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

/**
 * wrk, the bench's load generator: a separate process in C, so the servers keep the cores (a load generator in this
 * Node process competed with them and pulled every ratio toward 1). Debian's package, installed here when missing
 * (as root, as .ci/run installs Chromium); otherwise an error that says how.
 */
export function ensureWrk() {
  const found = () => spawnSync("wrk", ["--version"]).error === undefined;
  if (found()) return;
  const how = "apt-get update && apt-get install -y wrk";
  if (process.getuid?.() !== 0) throw new Error(`wrk is missing and this is not root: install it with \`${how}\` (as root), then run the bench again`);
  console.log(`wrk is missing: ${how}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const steps = [["update"], ["install", "-y", "wrk"]].map((args) => spawnSync("apt-get", args, { stdio: "inherit", env }));
  if (steps.some((s) => s.status !== 0) || !found()) throw new Error(`could not install wrk (\`${how}\` failed): install it, then run the bench again`);
}

/** The file bench/wrk.lua reads a list of requests from: written once per list (the same case runs every round). */
const requestFiles = new Map();
let requestDir;
function requestFile(list, host) {
  const text = list.map((r) => `${wire(r, host)}\0`).join("");
  let file = requestFiles.get(text);
  if (!file) {
    requestDir ??= mkdtempSync(path.join(tmpdir(), "storyloom-wrk-"));
    file = path.join(requestDir, `${requestFiles.size}.http`);
    writeFileSync(file, text);
    requestFiles.set(text, file);
  }
  return file;
}

/** A request as bytes on the wire (HTTP/1.1, the length of its body), for bench/wrk.lua. */
function wire({ method = "GET", path, headers = {}, body }, host) {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  const text = `${lines.join("\r\n")}\r\n\r\n${body ?? ""}`;
  if (text.includes("\0")) throw new Error("a request may not hold a NUL byte");
  return text;
}

/** CPU milliseconds of this process's children that have ended (user+system, from /proc; Linux only). */
function endedChildrenCpuMs() {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10; // cutime, cstime, in USER_HZ (100) ticks
}

/** How many answers of a `{ status: count }` tally were not 2xx. */
export const countNon2xx = (statuses) => Object.entries(statuses).reduce((n, [s, k]) => n + (Number(s) >= 200 && Number(s) < 300 ? 0 : k), 0);

/**
 * Runs one case under wrk (one thread, `connections` connections, `duration` whole seconds) and returns its figures:
 * requests per second, p50 and p99 in ms, the total, the answers that were not 2xx, socket errors and timeouts, the
 * answers by status, and wrk's own CPU in ms (what the load generator took of the machine). The requests are
 * `requests` in turn (`{ method, path, headers, body }`), or `url`'s own with `method`, `headers` and `body`.
 */
export async function load({ url, connections = 10, duration = 10, method, headers, body, requests }) {
  if (!Number.isInteger(duration) || duration < 1) throw new Error(`wrk runs whole seconds, not ${duration}`);
  const target = new URL(url);
  const list = requests ?? [{ method, path: target.pathname + target.search, headers, body }];
  const file = requestFile(list, target.host);
  const cpuBefore = endedChildrenCpuMs();
  const args = ["-t1", `-c${connections}`, `-d${duration}s`, "--timeout", "10s", "-s", path.join(import.meta.dirname, "wrk.lua"), target.origin, "--", file];
  const out = await new Promise((resolve, reject) => {
    const child = spawn("wrk", args, { stdio: ["ignore", "pipe", "inherit"] });
    let text = "";
    child.stdout.on("data", (d) => {
      text += d;
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`))));
  });
  const line = out.split("\n").find((l) => l.startsWith("bench-wrk "));
  if (!line) throw new Error(`wrk printed no figures: ${out}`);
  const r = JSON.parse(line.slice("bench-wrk ".length));
  return {
    rps: r.requests / (r.duration_us / 1e6),
    p50: r.p50_us / 1000,
    p99: r.p99_us / 1000,
    total: r.requests,
    non2xx: countNon2xx(r.statuses),
    errors: r.errors,
    statuses: r.statuses,
    loadCpu: endedChildrenCpuMs() - cpuBefore,
  };
}

/** `wrangler dev` options that lift the per-account limits, so load tests measure the service, not its limits. */
export const NO_LIMITS = [
  "STORIES_PER_HOUR",
  "BRANCHES_PER_HOUR",
  "HUMAN_BRANCHES_PER_HOUR",
  "JOINS_PER_HOUR",
  "SEGMENTS_PER_HOUR",
  "SEGMENTS_PER_BRANCH_PER_HOUR",
  "SEGMENTS_PER_DAY",
  "VOTES_PER_HOUR",
  "COMMENTS_PER_HOUR",
  "REWRITES_PER_HOUR",
  "PINS_PER_HOUR",
  "REPORTS_PER_HOUR",
  "SUMMARIES_PER_HOUR",
  "SUMMARIES_PER_BRANCH_PER_HOUR",
  "REGISTRATIONS_PER_ADDRESS_PER_HOUR",
  "LOGIN_FAILURES_PER_ACCOUNT_ADDRESS_PER_HOUR",
  "LOGIN_FAILURES_PER_ACCOUNT_PER_HOUR",
  "LOGIN_FAILURES_PER_ADDRESS_PER_HOUR",
  "OAUTH_REGISTRATIONS_PER_ADDRESS_PER_HOUR",
  "OAUTH_FAILURES_PER_ADDRESS_PER_HOUR",
  "OAUTH_TOKEN_FAILURES_PER_CLIENT_ADDRESS_PER_HOUR",
  "OAUTH_TOKEN_FAILURES_PER_ADDRESS_PER_HOUR",
].flatMap((name) => ["--var", `LIMIT_${name}:100000000`]);

/**
 * A request from 256 client addresses in turn (`cf-connecting-ip`, the one address the Worker reads), so no address
 * reaches the anonymous limit of 600 reads a minute: a list of requests for `load`.
 */
export const fromClients = (req) => Array.from({ length: 256 }, (_, i) => ({ ...req, headers: { ...req.headers, "cf-connecting-ip": `10.0.0.${i}` } }));

export const words = (n, w = "w") => Array.from({ length: n }, (_, i) => `${w}${i}`).join(" ");

/** CPU milliseconds used so far by the workerd processes in a process group (from /proc, Linux only). */
export function workerdCpuMs(pgid) {
  const TICK_MS = 10; // USER_HZ is 100 on Linux
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (name.startsWith("workerd") && Number(fields[2]) === pgid) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {}
  }
  return ticks * TICK_MS;
}

/** The D1 round trips a request reports in its Server-Timing header. */
export const d1Trips = (res) => Number(/d1;desc="(\d+) round trip/.exec(res.headers.get("server-timing") ?? "")?.[1] ?? NaN);

/** Whether nothing listens on `port` of `host`. */
const isFree = (port, host) =>
  new Promise((resolve) => {
    const srv = createServer()
      .once("error", () => resolve(false))
      .listen(port, host, () => srv.close(() => resolve(true)));
  });

/** `n` different free 127.0.0.1 ports, so a run never lands on someone else's server. */
export async function freePorts(n) {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve, reject) => {
          const srv = createServer().listen(0, "127.0.0.1", () => resolve(srv));
          srv.on("error", reject);
        }),
    ),
  );
  const ports = servers.map((srv) => srv.address().port);
  await Promise.all(servers.map((srv) => new Promise((resolve) => srv.close(resolve))));
  return ports;
}

/** A free 127.0.0.1 port. */
export const freePort = async () => (await freePorts(1))[0];
