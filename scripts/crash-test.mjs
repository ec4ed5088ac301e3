// `npm run test:crash [-- --cycles N --seed S --port P --branches B --verbose]`: the crash test.
//
// It starts `wrangler dev` on its own port and its own state directory, then runs N cycles (default 5) of: a
// write burst on 30 branches (bots joining, bots writing at their turn and blindly out of turn, humans writing,
// deliberate repeats of answered requests; every write with its own Idempotency-Key and unique content, whose first
// word is a marker search finds it by), a SIGKILL of wrangler's whole process group at a random instant of the
// burst, a restart on the same state, a retry of every request that got no answer (same credential, key and body),
// a few runs of the scheduled handler, and then checks through the API (searchable searches once before the retries too). When everything passes it has shown that, across crashes:
//   readable       every 201 ever received (segment or join) is visible in D1 through the API;
//   contiguous     each branch's sequence_order runs fork point + 1 … n, without gaps or duplicates;
//   rotation       bot segments follow the queue's join order (human segments ignored, joins accounted for);
//   no-duplicates  no request was stored twice (every request's content is unique);
//   idempotency    a repeated key replays its first 2xx answer, and every stored segment was acknowledged
//                  to its writer with its id (after the retries);
//   counters       segments_count and active_bots_count equal the rows;
//   your-turn      every turn begun (join into an empty queue, the previous bot's accepted segment, the current
//                  bot leaving) has at least that many distinct your_turn deliveries at the script's receiver,
//                  which is cross-checked against the service's own delivery log;
//   searchable     right after the restart, before the retries (no write hands a story to the search queue, so
//                  the sweeper alone must), every segment acknowledged before the SIGKILL comes into search; after
//                  the checks above (and after the last cycle), once the search queue and the sweeper caught up,
//                  every acknowledged segment (new ones, up to a sample, and some found before) is found by
//                  GET /search?type=segment for its marker word exactly once, as the segment it was acknowledged
//                  with, and no segment whose write got no 201 is found (each wait bounded by 30 s);
//   turn-probe     the turn D1 reports is the one the branch's Durable Object enforces (real writes: every other
//                  queued bot gets 403 NOT_YOUR_TURN as a queued bot, then the reported bot gets 201);
//   leave          (after the last cycle) every queued bot can leave, and the queues end empty.
// One line per check per cycle, evidence under each failure, and `N passed, M failed` as the last line; the exit
// status is non-zero on any failure. A check that had nothing to check fails.
//
// Only 127.0.0.1 is contacted. Wrangler and the temporary state directory are removed on exit, Ctrl-C or error; the
// .wrangler/tmp directories each SIGKILLed wrangler leaves are removed too unless another wrangler runs in this
// checkout (then wrangler's own 24 h sweep takes them). --seed makes the script's choices (plans, kill instants,
// actions) repeatable; the interleaving with the server's timing is not.
//
// Note for your-turn and searchable: miniflare's local queue keeps messages in memory, so a message handed to the queue
// but not yet consumed dies with the SIGKILL. Locally, only an outbox that resends until the consumer has the message
// passes (for search: the sweeper hands over again a story behind in its shard, its version bumped in the write's batch).
import { spawn } from "node:child_process";
import { randomInt } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { NO_LIMITS, fromClients, sleep, startServer, words } from "../bench/lib.mjs";

const { values: opt } = parseArgs({
  options: {
    cycles: { type: "string", default: "5" },
    seed: { type: "string" },
    port: { type: "string", default: "8797" },
    branches: { type: "string", default: "30" },
    verbose: { type: "boolean", default: false },
  },
});
const int = (name, v, min, max) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`--${name} must be an integer from ${min} to ${max}`);
    process.exit(2);
  }
  return n;
};
const CYCLES = int("cycles", opt.cycles, 1, 1000);
const SEED = opt.seed === undefined ? randomInt(1, 2 ** 31) : int("seed", opt.seed, 0, 2 ** 32 - 1);
const PORT = int("port", opt.port, 1024, 65535);
const BRANCHES = int("branches", opt.branches, 1, 200);
const VERBOSE = opt.verbose;

// Keep wrangler on this machine: no https://workers.cloudflare.com/cf.json for request.cf, no banner (whose npm
// update check is a registry request); WRANGLER_SEND_METRICS=false comes from startServer.
process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
process.env.WRANGLER_HIDE_BANNER = "true";
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");
const WRANGLER_TMP = join(ROOT, ".wrangler", "tmp"); // a SIGKILLed wrangler leaves its dev-*/bundle-* here
const ORIGIN = `http://127.0.0.1:${PORT}`;
const BASE = `${ORIGIN}/api/v1`;
const STORIES = 3;
const BOTS = 15; // a pool; each branch queues up to MAX_QUEUE of them
const MAX_QUEUE = 5;
const HUMANS = 3;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_EVIDENCE = 6;
const RUN = `${SEED.toString(36)}-${Date.now().toString(36)}`;
const VARS = [
  "--var",
  "ALLOW_PRIVATE_WEBHOOKS:true",
  "--var",
  "OUTBOX_RESEND_AFTER_SECONDS:1",
  // One story per search shard: a search merges the answers of several shards, and searchable sees each segment once.
  "--var",
  "SEARCH_STORIES_PER_SHARD:1",
  "--var",
  "JWT_SECRET:crash-test-jwt-secret-0123456789abcdef",
  ...NO_LIMITS,
  ...["REWRITES", "PINS", "SUMMARIES", "REGISTRATIONS"].flatMap((n) => ["--var", `LIMIT_${n}_PER_HOUR:100000000`]),
];

// ---------------------------------------------------------------------------------------------------------------
// Seeded choices, process cleanup, reporting

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(SEED);
const between = (r, lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];
const shuffle = (r, xs) => {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
};

const STATE = mkdtempSync(join(tmpdir(), "storyloom-crash-"));
let server = null; // { child, log, stop } from startServer
let receiver = null;
let passed = 0;
let failed = 0;
let finished = false;
const startedAt = Date.now();

const tmpEntries = () => {
  try {
    return new Set(readdirSync(WRANGLER_TMP));
  } catch {
    return new Set();
  }
};
let tmpBefore = null; // .wrangler/tmp before our wrangler started: what appears after is its own

function killServer() {
  if (!server) return;
  try {
    process.kill(-server.child.pid, "SIGKILL"); // the whole process group: wrangler, workerd, esbuild
  } catch {}
  server = null;
  removeOurTmp();
}

/** Processes from /proc (Linux): pid, parent, process group, working directory, command line. */
function processes() {
  let pids = [];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {}
  return pids.flatMap((pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [ppid, pgid] = stat
        .slice(stat.lastIndexOf(")") + 2)
        .split(" ")
        .slice(1, 3)
        .map(Number);
      let cwd = null;
      let cmd = "";
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
        cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      } catch {}
      return [{ pid: Number(pid), ppid, pgid, cwd, cmd }];
    } catch {
      return [];
    }
  });
}
const ourGroups = new Set(); // process groups this script started (each is detached: group id = its pid)

/**
 * The dev-/bundle- directories a SIGKILLed wrangler leaves in .wrangler/tmp (~2 MB each; wrangler sweeps them after
 * 24 h). Nothing tells whose they are, so they go only when no other wrangler or workerd runs in this checkout:
 * deleting a live one's bundle breaks it.
 */
function removeOurTmp() {
  if (!tmpBefore) return;
  const others = processes().filter((p) => p.cwd === ROOT && /wrangler|workerd/.test(p.cmd) && !ourGroups.has(p.pgid));
  if (others.length) return;
  for (const e of tmpEntries()) if (/^(dev|bundle)-/.test(e) && !tmpBefore.has(e)) rmSync(join(WRANGLER_TMP, e), { recursive: true, force: true });
}

/** Our own children's process groups (a wrangler still starting has no `server` yet). */
function killChildGroups() {
  for (const p of processes()) {
    if (p.ppid !== process.pid || p.pgid !== p.pid) continue; // detached by startServer or migrate()
    ourGroups.add(p.pgid);
    try {
      process.kill(-p.pgid, "SIGKILL");
    } catch {}
  }
}

function cleanup() {
  killServer();
  killChildGroups();
  removeOurTmp();
  try {
    receiver?.close();
  } catch {}
  rmSync(STATE, { recursive: true, force: true });
}

function finish(code) {
  if (finished) return;
  finished = true;
  cleanup();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code);
}

process.on("exit", cleanup); // last resort: never leave wrangler or the state directory behind
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    console.log(`interrupted by ${signal}`);
    failed++;
    finish(130);
  });
}
for (const event of ["uncaughtException", "unhandledRejection"]) {
  process.on(event, (err) => {
    console.log(`ERROR ${err?.stack ?? err}`);
    failed++;
    finish(1);
  });
}
// Every loop below is bounded; this bounds the whole run as well.
setTimeout(
  () => {
    console.log("ERROR the run took longer than its time limit");
    failed++;
    finish(1);
  },
  (180 + CYCLES * 120) * 1000,
).unref();

function report(label, name, { checked, problems, summary }) {
  const ok = checked > 0 && problems.length === 0;
  if (ok) passed++;
  else failed++;
  const what = checked === 0 ? `nothing to check (${summary}): a check that checks nothing fails` : summary;
  console.log(`${label} ${ok ? "PASS" : "FAIL"} ${name.padEnd(13)} ${what}${problems.length ? `; ${problems.length} problem(s)` : ""}`);
  for (const p of problems.slice(0, VERBOSE ? 1000 : MAX_EVIDENCE)) console.log(`      - ${p}`);
  if (!VERBOSE && problems.length > MAX_EVIDENCE) console.log(`      … and ${problems.length - MAX_EVIDENCE} more (--verbose shows all)`);
}

const tally = (xs) => {
  const m = new Map();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return (
    [...m]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k}×${n}`)
      .join(" ") || "none"
  );
};

async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP: every creating POST is a recorded request with its own key; its answers (or lack of one) are kept

let bookmark = null;
const errName = (e) => e?.cause?.code ?? e?.name ?? String(e);

/** The bench's 256 client addresses (bench/lib.mjs), taken in turn. */
const clients = fromClients({ headers: {} });
let nextClient = 0;

async function http(method, path, { token, body, key } = {}) {
  // A distinct client address per request, so no anonymous read limit can interfere.
  const headers = { ...clients[nextClient++ % clients.length].headers };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  if (key) headers["idempotency-key"] = key;
  // Any bookmark makes a public read skip the per-isolate micro-cache and read D1 (docs/api.md, "Reading at the edge").
  if (method === "GET") headers["x-d1-bookmark"] = bookmark ?? "none";
  const res = await fetch(BASE + path, { method, headers, body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  const b = res.headers.get("x-d1-bookmark");
  if (b) bookmark = b;
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text, replayed: res.headers.get("idempotent-replayed") === "true" };
}

/** A setup call that must succeed. */
async function must(method, path, opts) {
  const res = await http(method, path, opts);
  if (res.status >= 300) throw new Error(`${method} ${path} -> ${res.status} ${res.text.slice(0, 300)}`);
  return res.json;
}

/** A verification read: retried on a network error, and it must answer 200. */
async function read(path) {
  for (let i = 0; ; i++) {
    try {
      return await must("GET", path, { token: humans[0].token });
    } catch (err) {
      if (i >= 2 || /-> \d{3}/.test(err.message)) throw err;
      await sleep(500);
    }
  }
}

const requests = [];
const stats = []; // {cycle, phase, outcome} per attempt
let cycle = 0;

function newRequest(kind, branch, actor, payload) {
  const n = requests.length + 1;
  const path = `/branches/${branch.id}/${kind === "segment" ? "segments" : kind}`;
  const r = {
    n,
    kind,
    branch,
    actor,
    path,
    body: JSON.stringify(payload),
    key: `crash-${RUN}-${n}`,
    content: payload.content ?? null,
    cycle,
    answers: [],
    errors: [],
    pending: false,
  };
  requests.push(r);
  branch.requests.push(r);
  return r;
}

/** Sends (or re-sends, same key and body) a recorded request; null when no answer came back. */
async function attempt(r, phase) {
  r.pending = true;
  let res;
  const t0 = Date.now();
  try {
    res = await http("POST", r.path, { token: r.actor.token, body: r.body, key: r.key });
  } catch (err) {
    r.errors.push({ cycle, phase, error: errName(err) });
    stats.push({ cycle, phase, outcome: "no answer" });
    return null;
  }
  r.pending = false;
  const d = res.json?.data;
  const e = res.json?.error;
  const a = {
    status: res.status,
    at: Date.now(),
    code: e?.code ?? null,
    replayed: res.replayed,
    cycle,
    phase,
    segId: r.kind === "segment" && res.status === 201 ? (d?.id ?? null) : null,
    joinedAt: r.kind === "join" && res.status < 300 ? (d?.joined_at ?? null) : null,
    roomWait: e?.details?.estimated_wait, // null: the room does not have this bot in its queue (DECISIONS: join first)
    roomTurn: e?.details?.current_turn !== undefined ? e.details.current_turn : r.kind === "leave" ? (d?.current_turn ?? null) : undefined,
    nextBot: d?.next_bot?.id ?? null,
  };
  r.answers.push(a);
  stats.push({ cycle, phase, outcome: `${res.status}${e?.code ? ` ${e.code}` : ""}${res.replayed ? " (replayed)" : ""}`, ms: Date.now() - t0 });
  if (r.kind === "join" && a.joinedAt) {
    r.branch.joinedAt.set(r.actor.id, Date.parse(a.joinedAt)); // the room's latest word on when it joined
    r.branch.joinAcked.add(r.actor.id);
  }
  return a;
}

let contentSeq = 0;
function writeSegment(branch, actor, phase) {
  const n = ++contentSeq;
  // Unique per request, and its first word (`u12`: "." separates words for the index) is its marker for searchable.
  const marker = `u${n}`;
  const content = `${marker}.${actor.short}.c${cycle}.${phase} ${words(2 + (n % 7))}`;
  const r = newRequest("segment", branch, actor, { content });
  r.marker = marker;
  return attempt(r, phase);
}

// ---------------------------------------------------------------------------------------------------------------
// The webhook receiver: this process, so it outlives every crash

const yourTurn = new Map(); // `${branch_id}|${bot_id}` -> Map of delivery id -> its body's created_at (ms)
let deliveriesSeen = 0;
const latencies = []; // {at, ms}: received minus the body's created_at, for the info lines
const otherEvents = [];

function startReceiver() {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      res.writeHead(200).end("ok");
      deliveriesSeen++;
      const bot = bots[Number(/^\/hook\/(\d+)$/.exec(req.url)?.[1] ?? -1)];
      const event = req.headers["x-service-event"];
      const id = req.headers["x-service-delivery"];
      let json = null;
      try {
        json = JSON.parse(body);
      } catch {}
      if (bot && event === "your_turn" && id && json?.branch_id) {
        const k = `${json.branch_id}|${bot.id}`;
        if (!yourTurn.has(k)) yourTurn.set(k, new Map());
        yourTurn.get(k).set(id, Date.parse(json.created_at));
        latencies.push({ at: Date.now(), ms: Date.now() - Date.parse(json.created_at) });
      } else otherEvents.push(event ?? "?");
    });
  });
  return new Promise((resolve) => receiver.listen(0, "127.0.0.1", () => resolve(receiver.address().port)));
}

// ---------------------------------------------------------------------------------------------------------------
// The server: migrate once, start, SIGKILL, restart on the same state

const portOpen = (port) =>
  new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.setTimeout(1000, () => {
      s.destroy();
      resolve(false);
    });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });

/** `wrangler d1 migrations apply` on our state directory (stdin closed: no confirmation prompt). */
function migrate() {
  return new Promise((resolve, reject) => {
    const child = spawn(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", STATE], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true, // its own group, so cleanup() can end it
    });
    ourGroups.add(child.pid);
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`migrations failed (${code ?? signal})\n${out}`));
    });
  });
}

async function start() {
  if (await portOpen(PORT)) throw new Error(`port ${PORT} is already in use (another run? pass --port)`);
  const t0 = Date.now();
  tmpBefore = tmpEntries();
  server = await startServer(
    WRANGLER,
    ["dev", "--ip", "127.0.0.1", "--port", String(PORT), "--persist-to", STATE, "--test-scheduled", ...VARS],
    `${BASE}/health`,
    { cwd: ROOT },
  );
  ourGroups.add(server.child.pid);
  return Date.now() - t0;
}

const kills = []; // wall-clock ms of each SIGKILL, by cycle - 1

async function crash() {
  const s = server;
  kills.push(Date.now());
  killServer();
  for (let i = 0; i < 100 && (await portOpen(PORT)); i++) await sleep(100);
  if (await portOpen(PORT)) throw new Error(`port ${PORT} still answers after SIGKILL of process group ${s.child.pid}`);
  const errors = s
    .log()
    .split("\n")
    // The service's own JSON access-log lines carry an `error` member (a code, or null): they are answers, not faults.
    .filter((l) => /✘|\berror\b|exception/i.test(l) && !/^\{"request_id":.*"route":/.test(l.trim()));
  if (errors.length) console.log(`      (wrangler logged ${errors.length} error line(s) before the kill${VERBOSE ? "" : "; --verbose shows them"})`);
  if (VERBOSE) for (const l of errors.slice(-20)) console.log(`      | ${l.slice(0, 300)}`);
}

/** One run of the scheduled handler (the sweeper): its status, or the network error's name. */
async function scheduled() {
  try {
    const res = await fetch(`${ORIGIN}/__scheduled?cron=*+*+*+*+*`, { signal: AbortSignal.timeout(10_000) });
    await res.text();
    return res.status;
  } catch (err) {
    return errName(err);
  }
}

/** The scheduled handler (the outbox sweeper) a few times, then wait until deliveries go quiet. */
async function sweep() {
  const outcomes = [];
  for (let i = 0; i < 3; i++) {
    outcomes.push(await scheduled());
    await sleep(1200);
  }
  let last = deliveriesSeen;
  let quietSince = Date.now();
  for (const end = Date.now() + 6000; Date.now() < end; ) {
    await sleep(200);
    if (deliveriesSeen !== last) {
      last = deliveriesSeen;
      quietSince = Date.now();
    } else if (Date.now() - quietSince >= 1200) break;
  }
  return outcomes;
}

// ---------------------------------------------------------------------------------------------------------------
// Setup (before the first crash): humans, bots with webhooks, stories, branches

const humans = [];
const bots = [];
const botById = new Map();
const branches = [];
const name = (id) => (id == null ? "nobody" : (botById.get(id)?.short ?? `${String(id).slice(0, 8)}?`));
const names = (ids) => `[${ids.map(name).join(", ")}]`;

async function setup(receiverPort) {
  for (let i = 0; i < HUMANS; i++) {
    const u = `crash${RUN}h${i}`.replace(/-/g, "");
    const reg = await must("POST", "/auth/register", {
      body: JSON.stringify({ username: u, email: `${u}@example.com`, password: "crash test password", user_type: "human" }),
    });
    humans.push({ kind: "human", id: reg.user.id, short: `h${i}`, token: reg.access_token });
  }
  for (let i = 0; i < BOTS; i++) {
    const webhook_url = `http://127.0.0.1:${receiverPort}/hook/${i}`;
    const reg = (await must("POST", "/auth/bot/register", { body: JSON.stringify({ name: `crash-${RUN}-b${i}`, model: "crash-test", webhook_url }) })).data;
    const login = await must("POST", "/auth/bot/login", { body: JSON.stringify({ api_key: reg.api_key }) });
    const bot = { kind: "bot", idx: i, id: reg.bot_id, short: `b${String(i).padStart(2, "0")}`, token: login.access_token };
    bots.push(bot);
    botById.set(bot.id, bot);
  }
  const stories = [];
  for (let i = 0; i < STORIES; i++) {
    const body = {
      title: `Crash story ${i}`,
      background: "A story written through crashes.",
      starter: "It begins.",
      initial_segments: [words(4), words(5), words(6)],
      language: "en",
      min_length: 1,
      max_length: 200,
    };
    const story = (await must("POST", "/stories", { token: humans[i % HUMANS].token, body: JSON.stringify(body) })).data;
    const main = (await read(`/branches/${story.main_branch_id}/segments?limit=100`)).data.segments;
    stories.push({ id: story.id, seqOf: new Map(main.map((s) => [s.id, s.sequence_order])) });
  }
  for (let i = 0; i < BRANCHES; i++) {
    const story = stories[i % STORIES];
    const b = (await must("POST", `/stories/${story.id}/branches`, { token: humans[i % HUMANS].token, body: JSON.stringify({ title: `crash branch ${i}` }) }))
      .data;
    const forkSeq = story.seqOf.get(b.fork_at_segment_id);
    if (!Number.isInteger(forkSeq)) throw new Error(`branch ${b.id}: fork point ${b.fork_at_segment_id} is not a main-line segment`);
    branches.push({
      idx: i,
      id: b.id,
      short: `br${String(i).padStart(2, "0")}`,
      forkSeq,
      plan: shuffle(rnd, bots).slice(0, MAX_QUEUE), // who joins, in this order, over the cycles
      target: 0, // how many of `plan` should have joined by the end of this cycle's burst
      joinsSent: 0,
      joinedAt: new Map(), // bot id -> ms, from the join answers (the room's clock)
      joinAcked: new Set(),
      lastMembers: [], // D1's queue order at the last verification
      roomTurn: undefined, // the room's current turn after the last probe (next_bot of its accepted write)
      requests: [], // this branch's recorded requests
    });
  }
  // Warm up before the first crash, so every branch has a queue and a bot segment whatever the first kill instant.
  await mapLimit(branches, 6, async (b) => {
    const first = b.plan[0];
    b.joinsSent = b.target = 1;
    for (const a of [
      await attempt(newRequest("join", b, first, { role: "narrator" }), "setup"),
      await writeSegment(b, first, "setup"),
      await writeSegment(b, humans[b.idx % HUMANS], "setup"),
    ]) {
      if (a?.status !== 201) throw new Error(`${b.short}: setup request answered ${a ? `${a.status} ${a.code}` : "nothing"}`);
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The burst: per branch, a turn taker and a noise maker, until the SIGKILL

let stopped = false;

async function turnTaker(b, r) {
  while (!stopped) {
    let current;
    try {
      current = (await http("GET", `/branches/${b.id}`, { token: humans[0].token })).json?.data?.queue?.current_turn?.bot_id;
    } catch {
      break; // the server is gone
    }
    if (stopped) break;
    const bot = current && botById.get(current);
    if (bot) await writeSegment(b, bot, "burst");
    await sleep(bot ? between(r, 0, 15) : 40);
  }
}

async function noiseMaker(b, r, joins) {
  const t0 = Date.now();
  while (!stopped) {
    if (joins.length && joins[0].at <= Date.now() - t0) {
      const { bot } = joins.shift();
      b.joinsSent++;
      await attempt(newRequest("join", b, bot, { role: "narrator" }), "burst");
      continue;
    }
    const x = r();
    if (x < 0.35) await writeSegment(b, pick(r, humans), "burst");
    else if (x < 0.6 && b.joinAcked.size)
      await writeSegment(b, botById.get(pick(r, [...b.joinAcked])), "burst"); // blind: 403 unless its turn
    else if (x < 0.75) {
      const answered = b.requests.filter((q) => !q.pending && q.answers.some((a) => a.status < 300));
      if (answered.length) await attempt(pick(r, answered), "repeat"); // same key and body: must replay
    }
    await sleep(between(r, 5, 30));
  }
}

async function burst() {
  const killAt = between(rnd, 500, 3000);
  stopped = false;
  const firstRequest = requests.length;
  const workers = [];
  for (const b of branches) {
    b.target = Math.min(MAX_QUEUE, cycle === 1 ? between(rnd, 2, 3) : b.target + (rnd() < 0.35 ? 1 : 0));
    const joins = b.plan.slice(b.joinsSent, b.target).map((bot) => ({ bot, at: between(rnd, 0, cycle === 1 ? 300 : 1500) }));
    joins.sort((x, y) => x.at - y.at);
    workers.push(turnTaker(b, mulberry32(rnd() * 2 ** 32)), noiseMaker(b, mulberry32(rnd() * 2 ** 32), joins));
  }
  await sleep(killAt);
  stopped = true;
  await crash();
  await Promise.all(workers);
  return { killAt, sent: requests.length - firstRequest };
}

/** After the restart: every request without an answer again, in the order sent, per branch. */
async function retryUnanswered() {
  const pending = requests.filter((r) => r.pending);
  const byBranch = Map.groupBy(pending, (r) => r.branch);
  await Promise.all(
    [...byBranch.values()].map(async (rs) => {
      for (const r of rs) {
        for (let i = 0; i < 3 && !(await attempt(r, "retry")); i++) await sleep(500);
      }
    }),
  );
  return pending.length;
}

// ---------------------------------------------------------------------------------------------------------------
// Verification

async function readAll() {
  return mapLimit(branches, 6, async (b) => {
    const detail = (await read(`/branches/${b.id}`)).data;
    const segs = [];
    let total = null;
    for (let offset = 0, pages = 0; pages < 1000; offset += 100, pages++) {
      const page = (await read(`/branches/${b.id}/segments?limit=100&offset=${offset}`)).data;
      segs.push(...page.segments);
      total = page.pagination.total;
      if (!page.pagination.has_more) break;
    }
    return { b, detail, segs, total, members: detail.queue.members.map((m) => m.bot_id) };
  });
}

const succ = (list, id) => {
  const i = list.indexOf(id);
  return i < 0 ? null : list[(i + 1) % list.length];
};
const seqOf = (s) => s.sequence_order;
const bySeq = (x, y) => x.sequence_order - y.sequence_order;
const iso = (ms) => (Number.isFinite(ms) ? new Date(ms).toISOString().slice(11, 23) : "?");

/**
 * The turn model of one branch from what D1 shows: the queue's order (`memberIds`, by join) restricted to the
 * bots that had joined (per their join answers' joined_at, the room's clock) when each bot segment was written.
 * Gives the rotation violations and the turns begun per bot (join into an empty queue, then one per accepted bot
 * segment, for the bot after its writer).
 */
function turnModel(b, segs, memberIds) {
  const jat = (id) => (b.joinedAt.has(id) ? b.joinedAt.get(id) : -Infinity);
  // Who was queued at t: a join in the same millisecond may count or not (inclusive), and a member whose join was
  // never answered (no joined_at) may have joined at any time (withUnknown): every such reading is accepted.
  const queueAt = (t, inclusive, withUnknown = true) => memberIds.filter((id) => (b.joinedAt.has(id) ? (inclusive ? jat(id) <= t : jat(id) < t) : withUnknown));
  const botSegs = segs.filter((s) => s.author_type === "bot").sort(bySeq);
  const begun = new Map();
  const why = new Map();
  const add = (id, reason, at, cause) => {
    begun.set(id, (begun.get(id) ?? 0) + 1);
    if (!why.has(id)) why.set(id, []);
    why.get(id).push({ reason, at, ...cause });
  };
  const violations = [];
  let transitions = 0;
  if (memberIds.length) add(memberIds[0], "join", jat(memberIds[0]), { joinOf: memberIds[0] });
  const unknown = memberIds.filter((id) => !b.joinedAt.has(id));
  const note = unknown.length ? ` (no join answer for ${names(unknown)})` : "";
  if (botSegs.length && memberIds.length && botSegs[0].bot_id !== memberIds[0]) {
    violations.push(
      `${b.short}: first bot segment #${seqOf(botSegs[0])} is by ${name(botSegs[0].bot_id)}, but the first bot in the queue is ${name(memberIds[0])}; queue ${names(memberIds)}${note}`,
    );
  }
  for (let i = 0; i < botSegs.length; i++) {
    const s = botSegs[i];
    const t = Date.parse(s.created_at);
    const next = botSegs[i + 1];
    // A join in the same millisecond as the segment may have come before or after it: both successors are fine.
    const readings = [queueAt(t, false, false), queueAt(t, true, false), queueAt(t, false), queueAt(t, true)];
    const candidates = [...new Set(readings.map((q) => succ(q, s.bot_id)).filter(Boolean))];
    if (!candidates.length) {
      violations.push(
        `${b.short}: #${seqOf(s)} by ${name(s.bot_id)} at ${iso(t)}, when that bot was not in the queue ${names(queueAt(t, true))} (D1 order, joins by their joined_at)${note}`,
      );
      continue;
    }
    const to = next && candidates.includes(next.bot_id) ? next.bot_id : candidates.at(-1);
    add(to, `#${seqOf(s)}`, t, { segId: s.id });
    if (!next) continue;
    transitions++;
    if (!candidates.includes(next.bot_id)) {
      const ctx = botSegs
        .slice(Math.max(0, i - 2), i + 3)
        .map((x) => `#${seqOf(x)} ${name(x.bot_id)}`)
        .join(", ");
      violations.push(
        `${b.short}: #${seqOf(s)} by ${name(s.bot_id)} is followed by #${seqOf(next)} by ${name(next.bot_id)}, expected ${candidates.map(name).join(" or ")}; queue ${names(queueAt(t, true))}; bot segments ${ctx}${note}`,
      );
    }
  }
  return { violations, transitions, botSegments: botSegs.length, begun, why };
}

function answersOf(r) {
  return (
    r.answers
      .map((a) => `${a.phase}@c${a.cycle}:${a.status}${a.code ? ` ${a.code}` : ""}${a.segId ? ` ${a.segId.slice(0, 8)}` : ""}${a.replayed ? " replayed" : ""}`)
      .join(", ") +
    (r.pending ? ", still unanswered" : "") +
    (r.errors.length ? ` (no answer ${r.errors.length}× at ${[...new Set(r.errors.map((e) => `${e.phase}@c${e.cycle}`))].join("/")})` : "")
  );
}
const reqLabel = (r) => `u-request #${r.n} (${r.actor.short} on ${r.branch.short}, sent c${r.cycle})`;

async function checkAll(label, views) {
  const segById = new Map();
  const byContent = new Map();
  let stored = 0;
  for (const v of views) {
    for (const s of v.segs) {
      stored++;
      segById.set(s.id, { s, v });
      if (!byContent.has(s.content)) byContent.set(s.content, []);
      byContent.get(s.content).push({ s, v });
    }
  }
  const viewOf = new Map(views.map((v) => [v.b, v]));

  // readable: every 201 (segments) and every 2xx join ever received
  {
    const problems = [];
    let segs = 0;
    let joins = 0;
    for (const r of requests) {
      if (r.kind === "segment") {
        for (const id of new Set(r.answers.filter((a) => a.status === 201 && a.segId).map((a) => a.segId))) {
          segs++;
          const hit = segById.get(id);
          if (!hit)
            problems.push(
              `${r.branch.short}: ${reqLabel(r)} got 201 naming segment ${id}, which GET /branches/${r.branch.id}/segments does not list; answers: ${answersOf(r)}`,
            );
          else if (hit.v.b !== r.branch || hit.s.content !== r.content)
            problems.push(`${r.branch.short}: ${reqLabel(r)} got 201 naming segment ${id}, which holds other content or another branch (${hit.v.b.short})`);
        }
      } else if (r.kind === "join" && r.answers.some((a) => a.status < 300)) {
        joins++;
        const v = viewOf.get(r.branch);
        if (!v.members.includes(r.actor.id))
          problems.push(`${r.branch.short}: ${reqLabel(r)} join was answered ${answersOf(r)}, but ${r.actor.short} is not in D1's queue ${names(v.members)}`);
      }
    }
    report(label, "readable", { checked: segs + joins, problems, summary: `${segs} acknowledged segments and ${joins} acknowledged joins looked up` });
  }

  // contiguous: fork point + 1 … n
  {
    const problems = [];
    let n = 0;
    for (const v of views) {
      const seqs = v.segs.map(seqOf).sort((a, b) => a - b);
      if (!seqs.length) continue;
      n++;
      const counts = tally(seqs.filter((x, i) => seqs.indexOf(x) !== i));
      const have = new Set(seqs);
      const lo = v.b.forkSeq + 1;
      const hi = v.b.forkSeq + seqs.length;
      const missing = [];
      for (let x = lo; x <= hi; x++) if (!have.has(x)) missing.push(x);
      const outside = [...have].filter((x) => x < lo || x > hi);
      if (missing.length || outside.length || counts !== "none") {
        problems.push(
          `${v.b.short}: ${seqs.length} segments after fork point ${v.b.forkSeq}: missing ${missing.join(",") || "none"}, outside ${lo}…${hi}: ${outside.join(",") || "none"}, repeated ${counts}`,
        );
      }
    }
    report(label, "contiguous", { checked: n, problems, summary: `${n} branches with segments of their own` });
  }

  // rotation (and the turns begun, for your-turn)
  const models = new Map();
  {
    const problems = [];
    let transitions = 0;
    for (const v of views) {
      v.b.lastMembers = v.members;
      const m = turnModel(v.b, v.segs, v.members);
      models.set(v.b, m);
      transitions += m.transitions + m.botSegments; // each bot segment is checked to be by a queued bot
      problems.push(...m.violations);
    }
    report(label, "rotation", {
      checked: transitions,
      problems,
      summary: `${transitions} bot segments and transitions between them checked against join order`,
    });
  }

  // no-duplicates
  {
    const problems = [];
    for (const [content, hits] of byContent) {
      if (hits.length < 2) continue;
      const r = requestByContent.get(content);
      problems.push(
        `${hits[0].v.b.short}: ${r ? reqLabel(r) : "content"} stored ${hits.length} times: ${hits.map((h) => `#${seqOf(h.s)} ${h.s.id.slice(0, 8)}`).join(", ")}${r ? `; answers: ${answersOf(r)}` : ""}`,
      );
    }
    report(label, "no-duplicates", { checked: stored, problems, summary: `${stored} stored segments compared by content` });
  }

  // idempotency: replays equal the first 2xx; every stored segment acknowledged to its writer with its id
  {
    const problems = [];
    let repeats = 0;
    for (const r of requests) {
      const first = r.answers.findIndex((a) => a.status < 300);
      if (first < 0) continue;
      const a0 = r.answers[first];
      for (const a of r.answers.slice(first + 1)) {
        repeats++;
        if (a.status !== a0.status || a.segId !== a0.segId || a.joinedAt !== a0.joinedAt) {
          problems.push(
            `${r.branch.short}: ${reqLabel(r)} (${r.kind}) was answered ${a0.status} first, then ${a.status}${a.code ? ` ${a.code}` : ""} to the same key (${a.phase} in c${a.cycle}); answers: ${answersOf(r)}`,
          );
          break;
        }
      }
    }
    let unacked = 0;
    for (const [content, hits] of byContent) {
      const r = requestByContent.get(content);
      for (const { s, v } of hits) {
        if (!r) problems.push(`${v.b.short}: segment #${seqOf(s)} ${s.id} holds content no request of this run sent`);
        else if (!r.answers.some((a) => a.status === 201 && a.segId === s.id)) {
          unacked++;
          problems.push(
            `${v.b.short}: ${reqLabel(r)} is stored as #${seqOf(s)} (${s.id.slice(0, 8)}) but was never acknowledged with that id; answers: ${answersOf(r)}`,
          );
        }
      }
    }
    report(label, "idempotency", {
      checked: repeats + stored,
      problems,
      summary: `${repeats} repeats of answered keys, ${stored} stored segments traced to their request (${unacked} never acknowledged)`,
    });
  }

  // counters
  {
    const problems = [];
    for (const v of views) {
      const d = v.detail;
      if (d.segments_count !== v.total || v.total !== v.segs.length)
        problems.push(`${v.b.short}: segments_count ${d.segments_count}, list total ${v.total}, rows read ${v.segs.length}`);
      if (d.active_bots_count !== v.members.length)
        problems.push(`${v.b.short}: active_bots_count ${d.active_bots_count}, queue members ${v.members.length} ${names(v.members)}`);
    }
    report(label, "counters", { checked: views.length, problems, summary: `${views.length} branches: segments_count and active_bots_count against the rows` });
  }

  // your-turn
  await checkYourTurn(label, "your-turn", views, models, new Map());
}

/** Turns begun (the read-back model, plus leaves at a bot's turn) against distinct your_turn deliveries. */
/** The service's own delivery log (GET /bots/{id}/webhook/deliveries, as each bot): every delivery its consumer saw. */
async function serviceDeliveries() {
  const all = await mapLimit(bots, 6, async (bot) => {
    const rows = [];
    for (let offset = 0, pages = 0; pages < 1000; offset += 100, pages++) {
      const page = (await must("GET", `/bots/${bot.id}/webhook/deliveries?limit=100&offset=${offset}`, { token: bot.token })).data;
      rows.push(...page.deliveries);
      if (!page.pagination.has_more) break;
    }
    return rows.filter((d) => d.event === "your_turn");
  });
  return all.flat();
}

async function checkYourTurn(label, check, views, models, leaveBegun) {
  const problems = [];
  let expected = 0;
  let pairs = 0;
  let missing = 0;
  // When the client first held each turn-beginning answer: the room queues your_turn before it answers.
  const acked = new Map();
  const first = (k, at) => acked.set(k, Math.min(at, acked.get(k) ?? Infinity));
  for (const r of requests) {
    for (const a of r.answers) {
      if (r.kind === "segment" && a.segId) first(a.segId, a.at);
      if (r.kind === "join" && a.status < 300) first(`${r.branch.id}|${r.actor.id}`, a.at);
    }
  }
  const lostTally = { all: 0, acked: 0 };
  for (const v of views) {
    const m = models.get(v.b);
    const begun = new Map(m.begun);
    const why = new Map([...m.why].map(([k, x]) => [k, [...x]]));
    for (const { id, at } of leaveBegun.get(v.b) ?? []) {
      begun.set(id, (begun.get(id) ?? 0) + 1);
      if (!why.has(id)) why.set(id, []);
      why.get(id).push({ reason: "leave", at });
    }
    for (const [id, n] of begun) {
      expected += n;
      pairs++;
      const got = yourTurn.get(`${v.b.id}|${id}`) ?? new Map();
      if (got.size < n) {
        missing += n - got.size;
        problems.push(
          `${v.b.short}/${name(id)}: ${n} turns begun, ${got.size} distinct your_turn deliveries received; ${undelivered(v.b, why.get(id), got, acked, lostTally)}`,
        );
      }
    }
  }
  const lost = missing
    ? `; of ${lostTally.all} turns paired with no delivery, ${lostTally.acked} had been answered before the SIGKILL (so already handed to the queue)`
    : "";
  // Cross-check the receiver against the service's log: what the service saw delivered must be here.
  const received = new Set([...yourTurn.values()].flatMap((m) => [...m.keys()]));
  const log = await serviceDeliveries();
  const notHere = log.filter((d) => d.status === "delivered" && !received.has(d.id));
  if (notHere.length)
    problems.push(
      `the service logged ${notHere.length} your_turn deliveries as delivered that the receiver never recorded (e.g. ${notHere[0].id}): the receiver, not the service, is at fault`,
    );
  const logged = `; the service's log holds ${log.length} your_turn deliveries (${tally(log.map((d) => d.status))}), the receiver ${received.size}`;
  report(label, check, {
    checked: expected,
    problems,
    summary: `${expected} turns begun over ${pairs} (branch, bot) pairs, ${missing} deliveries missing${lost}${logged}`,
  });
}

/**
 * Evidence only (the check itself counts): which turns went without a delivery, matching each delivery to the
 * latest turn begun at or before its body's created_at (both from the server's clock), and when each such turn
 * began relative to the SIGKILLs.
 */
function undelivered(b, events, deliveries, acked, lostTally) {
  const sorted = [...events].sort((x, y) => x.at - y.at);
  const hit = new Set();
  for (const created of deliveries.values()) {
    let k = -1;
    for (let i = 0; i < sorted.length; i++) if (sorted[i].at <= created) k = i;
    if (k >= 0) hit.add(k);
  }
  const lost = sorted
    .filter((_, i) => !hit.has(i))
    .map((e) => {
      const k = kills.findIndex((t) => t >= e.at);
      const ackAt = e.segId ? acked.get(e.segId) : e.joinOf ? acked.get(`${b.id}|${e.joinOf}`) : e.reason === "leave" ? e.at : undefined;
      const answered = ackAt !== undefined && (k < 0 || ackAt < kills[k]);
      lostTally.all++;
      if (answered) lostTally.acked++;
      const when = k < 0 ? "after the last restart" : `${kills[k] - e.at} ms before the SIGKILL of c${k + 1}`;
      return `${e.reason} (${when}${answered ? ", answered before it" : ", not answered before it"})`;
    });
  return `by created_at, turns without a delivery: ${lost.length > 6 ? [...lost.slice(0, 6), `… ${lost.length - 6} more`].join(", ") : lost.join(", ") || "none (deliveries and turns do not pair up)"}`;
}

const requestByContent = new Map();
function indexContents() {
  for (const r of requests) if (r.content) requestByContent.set(r.content, r);
}

/** The turn D1 reports is the one the room enforces: every other queued bot writes (403), then the reported one (201). */
async function probeTurns(label, views) {
  const problems = [];
  let probed = 0;
  let writes = 0;
  await mapLimit(
    views.filter((v) => v.members.length),
    6,
    async (v) => {
      probed++;
      const b = v.b;
      const d1Turn = v.detail.queue.current_turn?.bot_id ?? null;
      b.roomTurn = undefined;
      const queue = `queue ${names(v.members)}`;
      if (!d1Turn) problems.push(`${b.short}: D1 lists ${v.members.length} queued bots but no current turn (current_turn_bot_id is not a member); ${queue}`);
      const order = [...v.members.filter((id) => id !== d1Turn), ...(d1Turn ? [d1Turn] : [])];
      for (const id of order) {
        const a = await writeSegment(b, botById.get(id), "probe");
        writes++;
        if (!a) {
          problems.push(`${b.short}: probe write by ${name(id)} got no answer`);
          break;
        }
        if (a.status === 201) b.roomTurn = a.nextBot;
        if (id === d1Turn) {
          if (a.status !== 201)
            problems.push(
              `${b.short}: D1 says it is ${name(d1Turn)}'s turn, but the room refused it: ${a.status} ${a.code ?? ""}, room's current_turn ${name(a.roomTurn)}; ${queue}`,
            );
        } else if (a.status === 201) {
          problems.push(`${b.short}: D1 says it is ${name(d1Turn)}'s turn, but the room accepted ${name(id)}'s write; ${queue}`);
          break; // the turn moved: later expectations would be wrong
        } else if (a.status !== 403 || a.code !== "NOT_YOUR_TURN") {
          problems.push(`${b.short}: ${name(id)} (not its turn per D1) got ${a.status} ${a.code ?? ""} instead of 403 NOT_YOUR_TURN`);
        } else if (d1Turn && a.roomTurn !== d1Turn) {
          problems.push(`${b.short}: D1 says it is ${name(d1Turn)}'s turn; the room refused ${name(id)} naming current_turn ${name(a.roomTurn)}; ${queue}`);
        } else if (a.roomWait === null) {
          problems.push(`${b.short}: D1 lists ${name(id)} in the queue, but the room refused it as not queued (estimated_wait null: "join first"); ${queue}`);
        }
      }
    },
  );
  report(label, "turn-probe", { checked: probed, problems, summary: `${probed} branches with a queue probed with ${writes} real writes` });
}

/** How long searchable waits for the search queue and the sweeper to bring the shards up to the acknowledged writes. */
const SEARCH_WAIT_MS = 30_000;
/** New markers searched per check at most (a sample beyond), and markers found by an earlier check searched again. */
const SEARCH_SAMPLE = 400;
const SEARCH_RECHECK = 40;
const searchRnd = mulberry32(SEED ^ 0x5ea4c); // its own, so the sample leaves the plans and kill instants as they were

/** GET /search for one marker among segments: its count and hits. */
const searchMarker = async (marker) => (await read(`/search?q=${encodeURIComponent(marker)}&type=segment&limit=5`)).data;

/** When an answer came, relative to the SIGKILLs. */
function whenAnswered(at) {
  const k = kills.findIndex((t) => t >= at);
  return k < 0 ? "after the last restart" : `${kills[k] - at} ms before the SIGKILL of c${k + 1}`;
}

const ackOf = (r) => r.answers.find((a) => a.status === 201 && a.segId) ?? null;
const sample = (rs, n) => (rs.length > n ? shuffle(searchRnd, rs).slice(0, n) : rs);

/** Searches the markers until each is found or SEARCH_WAIT_MS passed, running the sweeper between rounds. */
async function untilFound(rs) {
  const t0 = Date.now();
  let missing = rs;
  let rounds = 0;
  for (;;) {
    rounds++;
    const found = await mapLimit(missing, 6, async (r) => (await searchMarker(r.marker)).count > 0);
    missing = missing.filter((_, i) => !found[i]);
    if (!missing.length || Date.now() - t0 >= SEARCH_WAIT_MS) break;
    await scheduled(); // hands over again the stories behind for longer than OUTBOX_RESEND_AFTER_SECONDS
    await sleep(1000);
  }
  const waited = Date.now() - t0;
  return {
    missing,
    rounds,
    waited,
    said: missing.length ? `${missing.length} still not found after ${waited} ms` : `all found after ${rounds} round(s), ${waited} ms`,
  };
}

/**
 * Right after the restart, before any retry (so no write hands a story to the search queue): the segments
 * acknowledged before the SIGKILL (up to a sample) must come into search through the sweeper alone, their hand-over
 * having died with the local queue. Its misses are searchable's problems.
 */
let afterRestart = null;
async function searchBeforeRetries() {
  const kill = kills.at(-1);
  const rs = sample(
    requests.filter((r) => r.kind === "segment" && !r.searchFound && ackOf(r)?.at < kill),
    SEARCH_SAMPLE,
  );
  afterRestart = { checked: rs.length, ...(await untilFound(rs)) };
  return afterRestart;
}

/**
 * searchable: the write's search path (its story handed to the search queue after the answer, a SIGKILL losing what
 * the local queue held, the sweeper handing over again what is overdue) ends with every acknowledged segment found
 * by its marker exactly once, as the segment it was acknowledged with, and no segment whose write got no 201 found.
 * Waits (bounded) until every sampled marker is found, running the sweeper between rounds.
 */
async function checkSearchable(label, views) {
  const listed = new Map(views.flatMap((v) => v.segs.map((s) => [s.id, v])));
  const segs = requests.filter((r) => r.kind === "segment");
  const acked = segs.filter(ackOf);
  const fresh = acked.filter((r) => !r.searchFound);
  const before = acked.filter((r) => r.searchFound);
  const again = shuffle(searchRnd, before).slice(0, SEARCH_RECHECK);
  const wanted = [...sample(fresh, SEARCH_SAMPLE), ...again];
  const unacked = segs.filter((r) => !r.searchAbsent && !r.answers.some((a) => a.status === 201));
  const absent = sample(unacked, SEARCH_SAMPLE);
  const { waited, said } = await untilFound(wanted);

  const problems = [];
  const where = (id) => (listed.has(id) ? `D1 lists it on ${listed.get(id).b.short}` : "D1 does not list it");
  // Whole ids: segments written in the same instant share their first characters.
  const branchName = (id) => branches.find((b) => b.id === id)?.short ?? id ?? "-";
  const hitsOf = (d) => d.results.map((h) => `${h.type} ${h.segment?.id ?? "-"} on ${branchName(h.branch?.id)}`).join(", ");
  // After the wait, every sampled marker once more: what counts is the state once the shards caught up.
  await mapLimit(wanted, 6, async (r) => {
    const a = ackOf(r);
    const d = await searchMarker(r.marker);
    const what = `${r.branch.short}: ${reqLabel(r)} acknowledged as ${a.segId} (${whenAnswered(a.at)}; ${where(a.segId)})`;
    if (d.count === 0) problems.push(`${what}: GET /search?q=${r.marker}&type=segment finds nothing after ${waited} ms`);
    else if (d.count !== 1 || d.results.length !== 1)
      problems.push(`${what}: GET /search?q=${r.marker}&type=segment counts ${d.count} (${d.results.length} hits: ${hitsOf(d)})`);
    else if (d.results[0].segment?.id !== a.segId || d.results[0].branch?.id !== r.branch.id)
      problems.push(`${what}: GET /search?q=${r.marker}&type=segment finds another: ${hitsOf(d)}`);
    else r.searchFound = true;
  });
  await mapLimit(absent, 6, async (r) => {
    const d = await searchMarker(r.marker);
    if (d.count === 0) {
      r.searchAbsent = !r.pending; // one still without an answer may yet be retried, and acknowledged
      return;
    }
    problems.push(
      `${r.branch.short}: ${reqLabel(r)} never got a 201, but GET /search?q=${r.marker}&type=segment finds ${hitsOf(d)} (${d.results.map((h) => where(h.segment?.id)).join("; ")}); answers: ${answersOf(r)}`,
    );
  });
  const early = afterRestart;
  afterRestart = null;
  for (const r of early?.missing ?? []) {
    const a = ackOf(r);
    problems.push(
      `${r.branch.short}: ${reqLabel(r)} acknowledged as ${a.segId} ${whenAnswered(a.at)}: not found after the restart, before the retries, in ${early.rounds} round(s) of searches and sweeps over ${early.waited} ms (${where(a.segId)})`,
    );
  }
  const before0 = early ? `after the restart, before the retries, ${early.checked} acknowledged before the SIGKILL searched: ${early.said}; then ` : "";
  report(label, "searchable", {
    checked: wanted.length + absent.length + (early?.checked ?? 0),
    problems,
    summary: `${before0}${wanted.length} acknowledged segments searched by marker (${wanted.length - again.length} new of ${fresh.length}, ${again.length} again; ${said}), ${absent.length} without a 201 (of ${unacked.length}) searched`,
  });
}

/** After the last cycle: every queued bot leaves; the queues and counters end empty; leaves at a turn begin the next. */
async function leaveAll(label) {
  const before = await readAll();
  const problems = [];
  const leaveBegun = new Map();
  let leaves = 0;
  await mapLimit(before, 6, async (v) => {
    const b = v.b;
    b.lastMembers = v.members;
    let current = b.roomTurn !== undefined ? b.roomTurn : (v.detail.queue.current_turn?.bot_id ?? null);
    for (const id of v.members) {
      leaves++;
      const r = newRequest("leave", b, botById.get(id), {});
      const sentAt = Date.now(); // the room begins the next turn after this (same machine, same clock)
      const a = await attempt(r, "leave");
      if (a?.status !== 200) {
        problems.push(`${b.short}: ${name(id)} could not leave: ${a ? `${a.status} ${a.code ?? ""}` : "no answer"}; D1 queue ${names(v.members)}`);
        continue;
      }
      if (id === current && a.roomTurn) {
        if (!leaveBegun.has(b)) leaveBegun.set(b, []);
        leaveBegun.get(b).push({ id: a.roomTurn, at: sentAt });
      }
      current = a.roomTurn;
    }
  });
  await sweep();
  const after = await readAll();
  for (const v of after) {
    if (v.members.length || v.detail.active_bots_count !== 0 || v.detail.queue.current_turn) {
      problems.push(
        `${v.b.short}: after every queued bot left, D1 shows queue ${names(v.members)}, active_bots_count ${v.detail.active_bots_count}, current turn ${name(v.detail.queue.current_turn?.bot_id)}`,
      );
    }
  }
  report(label, "leave", {
    checked: leaves,
    problems,
    summary: `${leaves} queued bots asked to leave ${before.filter((v) => v.members.length).length} branches`,
  });
  // The turns begun, with the queue order as it was before the leaves.
  const models = new Map(after.map((v) => [v.b, turnModel(v.b, v.segs, v.b.lastMembers)]));
  await checkYourTurn(label, "your-turn", after, models, leaveBegun);
  return after;
}

// ---------------------------------------------------------------------------------------------------------------

async function main() {
  console.log(`crash test: ${CYCLES} cycles, seed ${SEED}, ${BRANCHES} branches over ${STORIES} stories, wrangler dev on ${ORIGIN}, state in ${STATE}`);
  const receiverPort = await startReceiver();
  await migrate();
  const firstStart = await start();
  console.log(`wrangler dev ready in ${(firstStart / 1000).toFixed(1)} s; webhook receiver on 127.0.0.1:${receiverPort}`);
  await setup(receiverPort);
  console.log(
    `setup: ${HUMANS} humans, ${BOTS} bots (each with a webhook), ${STORIES} stories, ${BRANCHES} branches, each with one bot queued and a bot and a human segment`,
  );

  for (cycle = 1; cycle <= CYCLES; cycle++) {
    const label = `c${cycle}`;
    const { killAt, sent } = await burst();
    const unanswered = requests.filter((r) => r.pending).length;
    const restart = await start();
    bookmark = null;
    const early = await searchBeforeRetries();
    const retried = await retryUnanswered();
    const swept = await sweep();
    const of = (phase) => tally(stats.filter((s) => s.cycle === cycle && s.phase === phase).map((s) => s.outcome));
    const ms = stats
      .filter((s) => s.cycle === cycle && s.phase === "burst" && s.ms !== undefined)
      .map((s) => s.ms)
      .sort((a, b) => a - b);
    console.log(
      `cycle ${cycle}/${CYCLES}: SIGKILL ${killAt} ms into the burst; ${sent} new requests; burst answers ${of("burst")} (p50 ${ms[ms.length >> 1] ?? "-"} ms); repeats ${of("repeat")}`,
    );
    console.log(
      `      ${unanswered} unanswered; restart ${(restart / 1000).toFixed(1)} s; search before the retries: ${early.said}; ${retried} retried: ${of("retry")}; /__scheduled ×3: ${swept.join(",")}`,
    );
    const lat = latencies
      .filter((l) => l.at > (kills[cycle - 2] ?? 0) && l.at <= kills[cycle - 1])
      .map((l) => l.ms)
      .sort((a, b) => a - b);
    const q = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
    if (lat.length)
      console.log(
        `      your_turn deliveries before this SIGKILL: ${lat.length}, created_at → received p50 ${q(0.5)} ms, p95 ${q(0.95)} ms, max ${lat.at(-1)} ms`,
      );
    indexContents();
    const views = await readAll();
    await checkAll(label, views);
    await checkSearchable(label, views);
    await probeTurns(label, views);
    indexContents();
  }
  const label = "end";
  await checkSearchable(label, await leaveAll(label));
  console.log(`ran ${((Date.now() - startedAt) / 1000).toFixed(1)} s; seed ${SEED}${failed ? `; rerun the same choices with --seed ${SEED}` : ""}`);
  finish(failed ? 1 : 0);
}

main().catch((err) => {
  console.log(`ERROR ${err?.stack ?? err}`);
  failed++;
  finish(1);
});
