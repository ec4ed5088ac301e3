// `npm run bench:fanout [-- --followers 10000 --seconds 10 --connections 10 --write]`: the inbox's fan-out
// under `npm run dev`. One branch with N followers (inserted straight into the local D1: they need no
// accounts, only rows); 10 writers write segments on it as fast as the service takes them (wrk, the write case's
// contention on one room); then, once every event has settled, from D1: how long each event took until the last
// follower's inbox had it (the `settled_at` of the fan-out pass that carried it, minus the event's `created_at`:
// median, p95), how many passes carried them (a writer's waiting segments merge into one), and that every follower
// counted every segment. The consumer's CPU per event is workerd's CPU (the Worker, its queue consumer and its local
// D1) for the run and the drain, minus what the same writes cost on a branch nobody follows, per event.
// Prints a report; writes bench/FANOUT.md only with --write. See bench/README.md.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { NO_LIMITS, api, ensureWrk, freePort, load, median, sleep, startDev, words, workerdCpuMs } from "./lib.mjs";

const { values } = parseArgs({
  options: {
    followers: { type: "string", default: "10000" },
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "10" },
    write: { type: "boolean", default: false },
  },
});
const FOLLOWERS = Number(values.followers);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const DRAIN_MS = 15 * 60_000;

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

/** A statement on the running server's local D1 (as the browser test's `worker.sql`): its rows. */
function d1(state, command) {
  const r = spawnSync("wrangler", ["d1", "execute", "DB", "--local", "--persist-to", state, "--json", "--command", command], {
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`wrangler d1 execute failed: ${r.stderr || r.stdout}`);
  return JSON.parse(r.stdout)[0].results;
}

/** Segment writes on one branch, rotating over the writers: a list of requests for `load`. */
const writesOn = (branchId, writers) =>
  writers.map((token) => ({
    method: "POST",
    path: `/api/v1/branches/${branchId}/segments`,
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ content: words(20) }),
  }));

/** Waits until no inbox event is unsettled (the fan-out has drained); answers when, in ms since the epoch. */
async function drained(state) {
  for (const end = Date.now() + DRAIN_MS; Date.now() < end; await sleep(1000)) {
    let n;
    try {
      [{ n }] = d1(state, "SELECT count(*) AS n FROM inbox_events WHERE settled_at IS NULL");
    } catch (err) {
      // The server is writing (the fan-out holds the database's lock): look again in a second.
      if (/SQLITE_BUSY/.test(err.message)) continue;
      throw err;
    }
    if (n === 0) return Date.now();
  }
  throw new Error(`the fan-out did not drain within ${DRAIN_MS / 60_000} minutes`);
}

ensureWrk();
const port = await freePort();
const state = mkdtempSync(path.join(tmpdir(), "storyloom-fanout-"));
const base = `http://127.0.0.1:${port}/api/v1`;
const server = await startDev(port, state, ["--var", "LOG_REQUESTS:false", ...NO_LIMITS]);
try {
  const call = api(base);
  const run = Date.now().toString(36);
  const writers = [];
  for (let i = 0; i < 10; i++) {
    const body = { username: `fan${run}${i}`, email: `fan${run}${i}@example.com`, password: "fan-out bench", user_type: "human" };
    writers.push((await call("/auth/register", { body })).access_token);
  }
  const story = (title) => ({
    title,
    background: "A harbour town where the tide never comes back.",
    starter: "Once.",
    initial_segments: [words(5), words(5), words(5)],
    language: "en",
    min_length: 1,
    max_length: 500,
  });
  const followed = (await call("/stories", { token: writers[0], body: story(`Followed ${run}`) })).data.main_branch_id;
  const quiet = (await call("/stories", { token: writers[0], body: story(`Quiet ${run}`) })).data.main_branch_id;
  const now = new Date().toISOString();
  d1(
    state,
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${FOLLOWERS})
     INSERT INTO follows (id, follower_id, follower_type, target_type, target_id, created_at)
     SELECT printf('bench-follow-%08d', i), printf('bench-reader-%08d', i), 'human', 'branch', '${followed}', '${now}' FROM n;
     INSERT INTO follow_counts (target_type, target_id, followers) VALUES ('branch', '${followed}', ${FOLLOWERS});`,
  );
  console.log(`${FOLLOWERS} followers of ${followed}; writing for ${SECONDS} s at ${CONNECTIONS} connections, first on a branch nobody follows`);

  const pgid = server.child.pid;
  let cpu = workerdCpuMs(pgid);
  const baseline = await load({ url: base, connections: CONNECTIONS, duration: SECONDS, requests: writesOn(quiet, writers) });
  await sleep(2000);
  const baselineCpu = (workerdCpuMs(pgid) - cpu) / baseline.total;

  cpu = workerdCpuMs(pgid);
  const started = Date.now();
  const written = await load({ url: base, connections: CONNECTIONS, duration: SECONDS, requests: writesOn(followed, writers) });
  const done = await drained(state);
  const totalCpu = workerdCpuMs(pgid) - cpu;

  const events = d1(
    state,
    `SELECT e.created_at AS at, l.settled_at AS shown, e.leader_id = e.id AS leads
     FROM inbox_events e JOIN inbox_events l ON l.id = e.leader_id WHERE e.branch_id = '${followed}'`,
  );
  const [{ accounts, counted }] = d1(
    state,
    `SELECT count(DISTINCT account_id) AS accounts, sum(count) AS counted FROM inbox_items WHERE collapse_key = 'segments ${followed}'`,
  );
  const latencies = events.map((e) => Date.parse(e.shown) - Date.parse(e.at));
  const passes = events.filter((e) => e.leads).length;
  // Requests still in flight when wrk stops are answered (and fanned out) after it counted: the events are the writes.
  const consumerCpu = (totalCpu - baselineCpu * events.length) / events.length;
  const complete = accounts === FOLLOWERS && counted === FOLLOWERS * events.length;
  const lines = [
    "# The inbox's fan-out",
    "",
    `${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, \`npm run bench:fanout -- --followers ${FOLLOWERS} --seconds ${SECONDS} --connections ${CONNECTIONS}\``,
    "",
    `One branch with ${FOLLOWERS} followers; 10 writers write segments on it for ${SECONDS} s at ${CONNECTIONS} connections (wrk), then the fan-out drains.`,
    "",
    "| figure | value |",
    "| --- | --- |",
    `| segments written | ${events.length} (wrk: ${written.rps.toFixed(1)}/s, ${written.non2xx} not 2xx) |`,
    `| events fanned out | ${events.length}, in ${passes} passes (a writer's waiting segments merge) |`,
    `| write → last inbox, median | ${(median(latencies) / 1000).toFixed(2)} s |`,
    `| write → last inbox, p95 | ${(pct(latencies, 95) / 1000).toFixed(2)} s |`,
    `| drained after the writes began | ${((done - started) / 1000).toFixed(1)} s |`,
    `| workerd CPU per write, nobody following | ${baselineCpu.toFixed(2)} ms |`,
    `| consumer CPU per event (run and drain, less the writes' own) | ${consumerCpu.toFixed(1)} ms |`,
    `| consumer CPU per pass | ${((consumerCpu * events.length) / Math.max(1, passes)).toFixed(0)} ms |`,
    `| every follower counted every segment | ${complete ? "yes" : `no: ${accounts} accounts, ${counted} counted, ${FOLLOWERS * events.length} expected`} |`,
  ];
  const text = `${lines.join("\n")}\n`;
  console.log(text);
  if (values.write) writeFileSync("bench/FANOUT.md", text);
  if (!complete || written.non2xx) process.exitCode = 1;
} finally {
  server.stop();
  await sleep(500);
  rmSync(state, { recursive: true, force: true });
}
