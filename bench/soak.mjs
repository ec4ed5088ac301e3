// `npm run bench:soak [-- --minutes 6 --connections 10 --port P --inspector-port Q --silent --write]`: ordinary mixed
// traffic against `npm run dev` for a bounded number of minutes, and a count of what went wrong. Its standing target
// is 0 answers ≥ 500. Readers from 70 client addresses (`cf-connecting-ip`) each read eight cached endpoints in a
// burst, so concurrent reads share an address and its read lease (as a page's scripts do); segment writes rotate
// over 40 branches and 10 writers (and empty the micro-cache, so entries are stored again all the time); a few reads
// carry an `x-d1-bookmark` (uncached). It counts answers by status per endpoint, scans the server's output for
// "Cannot perform I/O" and uncaught errors, prints a summary line, writes bench/SOAK.md with --write, and exits 1
// when any answer was ≥ 500, a request failed, or the server logged such an error. See bench/README.md.
//
// The load is Node's own fetch, not wrk: a correctness run needs each answer tied to its endpoint and the minute it
// came in, which wrk's script cannot tell (it never says which request an answer is for); the CPU it takes from the
// server only slows the run, which is all the soak can afford to lose.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { NO_LIMITS, SEARCH_PATH, freePorts, startDev } from "./lib.mjs";
import { seed, spreadWrites } from "./seed.mjs";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "6" },
    connections: { type: "string", default: "10" },
    port: { type: "string" },
    "inspector-port": { type: "string" },
    // The access log off (`LOG_REQUESTS:false`); by default it is on, as shipped.
    silent: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const MINUTES = Number(values.minutes);
if (!(MINUTES > 0)) throw new Error(`--minutes must be a positive number, not ${values.minutes}`);
const CONNECTIONS = Number(values.connections);
if (!Number.isInteger(CONNECTIONS) || CONNECTIONS < 1) throw new Error(`--connections must be a whole number, not ${values.connections}`);
const [freePort, freeInspector] = await freePorts(2);
const PORT = Number(values.port ?? freePort);
const INSPECTOR_PORT = Number(values["inspector-port"] ?? freeInspector);
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASE = `${ORIGIN}/api/v1`;
const STATE = "bench/.tmp/soak";
const LOG = `${STATE}.log`;
const ADDRESSES = 70;
/** The code the run served, for the record (a tree with changes not committed is marked so). */
const COMMIT = (() => {
  const git = (...args) => spawnSync("git", args, { encoding: "utf8" });
  const head = git("rev-parse", "--short", "HEAD").stdout.trim() || "unknown";
  return git("status", "--porcelain", "--untracked-files=no").stdout.trim() ? `${head}, with changes` : head;
})();
/** A request that takes longer than this counts as failed (a server that hangs is as wrong as one that answers 500). */
const TIMEOUT_MS = 30_000;
const gcd = (a, b) => (b ? gcd(b, a % b) : a);
/** What the server's output must never say. */
const BAD_LINES = [/Cannot perform I\/O on behalf of a different request/, /Uncaught/, /Unhandled/i];

rmSync(STATE, { recursive: true, force: true });
mkdirSync(STATE, { recursive: true });
const server = await startDev(
  PORT,
  STATE,
  ["--inspector-port", String(INSPECTOR_PORT), ...(values.silent ? ["--var", "LOG_REQUESTS:false"] : []), ...NO_LIMITS],
  { log: LOG },
);
let stopped = false;
const stop = () => {
  if (!stopped) server.stop();
  stopped = true;
};
for (const signal of ["SIGINT", "SIGTERM"])
  process.on(signal, () => {
    stop();
    process.exit(130);
  });

try {
  const data = await seed(BASE);
  const seededAt = server.log().length; // the seeding's own output is not the soak's
  const { hot, bookmark } = data;
  const branch = hot.main_branch_id;
  // The eight cached reads: what a reader's page asks for (lists, search, a story, its map, a branch, the site's
  // figures, the story's page), each answered by the cache-first path or the full path's micro-cache.
  const cached = [
    ["GET /stories", "/api/v1/stories"],
    ["GET /stories, filtered", "/api/v1/stories?tag=harbour&rating=general&sort=active"],
    ["GET /search", `/api/v1${SEARCH_PATH}`],
    ["GET /stories/{id}", `/api/v1/stories/${hot.id}`],
    ["GET /stories/{id}/map", `/api/v1/stories/${hot.id}/map`],
    ["GET /branches/{id}/segments", `/api/v1/branches/${branch}/segments`],
    ["GET /dashboard/stats", "/api/v1/dashboard/stats"],
    ["page /stories/{id}", `/stories/${hot.id}`],
  ];
  const uncached = [
    ["GET /stories, x-d1-bookmark", "/api/v1/stories"],
    ["GET /branches/{id}/segments, x-d1-bookmark", `/api/v1/branches/${branch}/segments`],
    ["GET /search, x-d1-bookmark", `/api/v1${SEARCH_PATH}`],
  ];
  const writes = spreadWrites(data).map((w) => ({ name: "POST /branches/{id}/segments", ...w }));
  // One round: each address reads the eight in a burst; a write after every other burst, an uncached read after
  // every fourth. Round after round, each of the 40 branches is written to in turn.
  const list = [];
  for (let round = 0; round < writes.length / gcd(writes.length, ADDRESSES / 2); round++) {
    for (let a = 0; a < ADDRESSES; a++) {
      const ip = `10.7.${a >> 8}.${a & 255}`;
      for (const [name, path] of cached) list.push({ name, path, headers: { "cf-connecting-ip": ip } });
      if (a % 2 === 0) list.push(writes[((round * ADDRESSES + a) / 2) % writes.length]);
      if (a % 4 === 0) {
        const [name, path] = uncached[(a / 4) % uncached.length];
        list.push({ name, path, headers: { "cf-connecting-ip": ip, "x-d1-bookmark": bookmark } });
      }
    }
  }

  console.log(`soak: ${MINUTES} min, ${CONNECTIONS} connections, ${ADDRESSES} client addresses, ${list.length} requests a round, against ${ORIGIN}`);
  const byName = new Map(); // name → { status → count }
  const hits = new Map(); // name → answers from the micro-cache
  const perMinute = []; // minute → { requests, fivexx }
  const failures = []; // network errors and timeouts
  const samples = []; // the first few answers ≥ 500
  let next = 0;
  let total = 0;
  const start = Date.now();
  const end = start + MINUTES * 60_000;
  const count = (name, status) => {
    const statuses = byName.get(name) ?? {};
    statuses[status] = (statuses[status] ?? 0) + 1;
    byName.set(name, statuses);
  };
  async function connection() {
    while (Date.now() < end) {
      const r = list[next++ % list.length];
      const minute = Math.floor((Date.now() - start) / 60_000);
      perMinute[minute] ??= { requests: 0, fivexx: 0 };
      const m = perMinute[minute];
      m.requests += 1;
      total += 1;
      try {
        const res = await fetch(ORIGIN + r.path, {
          method: r.method ?? "GET",
          headers: r.headers,
          body: r.body,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        const text = await res.text();
        count(r.name, res.status);
        if (res.headers.get("x-read-cache") === "hit") hits.set(r.name, (hits.get(r.name) ?? 0) + 1);
        if (res.status >= 500) {
          m.fivexx += 1;
          if (samples.length < 5) samples.push(`${((Date.now() - start) / 1000).toFixed(0)} s ${r.name}: ${res.status} ${text.slice(0, 300)}`);
        }
      } catch (err) {
        count(r.name, "failed");
        failures.push(`${((Date.now() - start) / 1000).toFixed(0)} s ${r.name}: ${err.message}`);
      }
    }
  }
  const progress = setInterval(() => {
    const done = perMinute.reduce((n, m) => n + (m?.fivexx ?? 0), 0);
    console.log(`  ${((Date.now() - start) / 60_000).toFixed(1)} min: ${total} requests, ${done} ≥ 500, ${failures.length} failed`);
  }, 30_000);
  await Promise.all(Array.from({ length: CONNECTIONS }, connection));
  clearInterval(progress);
  const seconds = (Date.now() - start) / 1000;

  const log = server.log().slice(seededAt);
  const badLines = log.split("\n").filter((line) => BAD_LINES.some((re) => re.test(line)));
  const ioErrors = badLines.filter((line) => BAD_LINES[0].test(line)).length;
  const fivexx = [...byName.values()].reduce((n, s) => n + Object.entries(s).reduce((k, [st, c]) => k + (Number(st) >= 500 ? c : 0), 0), 0);

  const rows = [...byName.entries()].map(([name, statuses]) => {
    const n = Object.values(statuses).reduce((a, b) => a + b, 0);
    return `| ${name} | ${n} | ${hits.get(name) ?? 0} | ${Object.entries(statuses)
      .map(([s, c]) => `${s}: ${c}`)
      .join(", ")} |`;
  });
  const summary = `soak: ${total} requests in ${(seconds / 60).toFixed(1)} min (${(total / seconds).toFixed(0)}/s), ${fivexx} × 5xx, ${failures.length} failed, ${ioErrors} "Cannot perform I/O" and ${badLines.length} uncaught/unhandled lines in the server's output`;
  const report = [
    "# Soak",
    "",
    `Run ${new Date(start).toISOString()} (commit ${COMMIT}) on ${cpus().length} cores (load average ${loadavg()[0].toFixed(2)} at the end) by \`npm run bench:soak -- --minutes ${MINUTES}${CONNECTIONS === 10 ? "" : ` --connections ${CONNECTIONS}`}${values.silent ? " --silent" : ""}${values.write ? " --write" : ""}\``,
    `(bench/soak.mjs; bench/README.md says what it sends), against \`npm run dev\` with the per-account limits lifted, access log ${values.silent ? "off" : "on"}. Target: 0 × 5xx.`,
    "",
    `**${summary.slice("soak: ".length)}.**`,
    "",
    "| endpoint | requests | from the micro-cache | statuses |",
    "|---|---|---|---|",
    ...rows,
    "",
    `Answers ≥ 500 by minute: ${perMinute.map((m, i) => `${i + 1}: ${m?.fivexx ?? 0}/${m?.requests ?? 0}`).join(", ")}.`,
    "",
    ...(samples.length ? ["First answers ≥ 500:", "", ...samples.map((s) => `- \`${s.replaceAll("`", "'")}\``), ""] : []),
    ...(badLines.length ? ["Server output (first lines that match):", "", "```", ...badLines.slice(0, 5).map((l) => l.slice(0, 400)), "```", ""] : []),
    ...(failures.length ? ["Failed requests (first):", "", ...failures.slice(0, 5).map((s) => `- ${s}`), ""] : []),
  ].join("\n");
  console.log(report);
  if (values.write) writeFileSync("bench/SOAK.md", report);
  console.log(summary);
  stop();
  process.exit(fivexx || failures.length || badLines.length ? 1 : 0);
} catch (err) {
  stop();
  console.error(err);
  process.exit(1);
}
