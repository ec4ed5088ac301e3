// Helpers for the benchmark scripts: start servers, call the API, run autocannon.
import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a command in its own process group and waits until `url` answers. Its output goes to a file (`opts.log`,
 * else a temporary one), not through this process: reading a server's log lines here would cost CPU on the same
 * cores the server runs on.
 */
export async function startServer(cmd, args, url, opts = {}) {
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

/** The bench's ceilings (bench/ceiling/) under `wrangler dev`, as `npm run bench` and `npm run profile -- --ceiling` serve them. */
export const startCeiling = (port, persist, options = []) =>
  startServer(
    "wrangler",
    ["dev", "--config", "bench/ceiling/wrangler.toml", "--port", String(port), "--ip", "127.0.0.1", "--persist-to", persist, ...options],
    `http://127.0.0.1:${port}/api/v1/`,
  );

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

/** Runs one autocannon case and returns its figures, counting non-2xx answers by status. */
export function load(opts) {
  return new Promise((resolve, reject) => {
    const statuses = {};
    const instance = autocannon({ connections: 10, duration: 10, ...opts }, (err, result) => {
      if (err) return reject(err);
      resolve({
        rps: result.requests.average,
        p50: result.latency.p50,
        p99: result.latency.p99,
        total: result.requests.total,
        non2xx: result.non2xx,
        errors: result.errors + result.timeouts,
        statuses,
      });
    });
    instance.on("response", (_client, statusCode) => {
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  });
}

/** `wrangler dev` options that lift the per-account limits, so load tests measure the service, not its limits. */
export const NO_LIMITS = [
  "STORIES_PER_HOUR",
  "BRANCHES_PER_HOUR",
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
].flatMap((name) => ["--var", `LIMIT_${name}:100000000`]);

/** Anonymous reads come from 256 client addresses in turn, so none of them reaches 600 reads a minute. */
let client = 0;
export const asClient = (req) => ({ ...req, headers: { ...req.headers, "cf-connecting-ip": `10.0.0.${client++ & 255}` } });

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

/** A free 127.0.0.1 port, so a run never lands on someone else's server. */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = createServer().listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
