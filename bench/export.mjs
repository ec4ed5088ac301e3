// `npm run bench:export [-- --segments N --requests R --write --reuse]`: what an export of a long path costs. Starts
// `npm run dev` on a fresh local state with the per-account limits lifted, writes two paths of N segments (2,000 by
// default) through the API, each segment as long as the stories' default rule lets it be (500 words, English) or as
// the specification's creation examples do (5,000 characters, Chinese), has a moderator hide the last segment of each
// (so its writer's copy holds hidden text: a private copy, built on every request, never from the cache of exports),
// then for each path and format times R requests of the writer's copy one after another: the workerd processes' CPU
// (user+system, from /proc: the Worker's isolate and, under `wrangler dev`, D1's SQLite too) per request, the wall
// time, the bytes. Beside them: a shared copy served by the cache of exports, and a 304. Prints a table; with --write
// puts it in bench/RESULTS.md under "EPUB export" (bench/run.mjs keeps that section when it rewrites the file).
// `--reuse` measures the paths the last run wrote (bench/.tmp/export-state) instead of writing them again (~5 min).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { NO_LIMITS, api, freePort, median, startDev, workerdCpuMs } from "./lib.mjs";

const { values } = parseArgs({
  options: {
    segments: { type: "string", default: "2000" },
    requests: { type: "string", default: "5" },
    write: { type: "boolean", default: false },
    reuse: { type: "boolean", default: false },
  },
});
const SEGMENTS = Number(values.segments);
const REQUESTS = Number(values.requests);
const STATE = "bench/.tmp/export-state";

/** A deterministic stream of pseudo-random numbers in [0, 1) (mulberry32), so every run writes the same text. */
function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Text of a story's own kind: words from a 5,000-word vocabulary (frequent ones more often), or common Chinese characters. */
function writer(language, seed) {
  const next = random(seed);
  const vocabulary = Array.from({ length: 5000 }, () =>
    Array.from({ length: 2 + Math.floor(next() * 8) }, () => String.fromCharCode(97 + Math.floor(next() * 26))).join(""),
  );
  if (language === "en") return () => Array.from({ length: 500 }, () => vocabulary[Math.floor(next() ** 3 * 5000)]).join(" ");
  return () => Array.from({ length: 5000 }, () => String.fromCharCode(0x4e00 + Math.floor(next() ** 2 * 2500))).join("");
}

async function seedPath(call, token, language) {
  const text = writer(language, language === "en" ? 7 : 11);
  const story = (
    await call("/stories", {
      token,
      body: {
        title: `A long path (${language})`,
        background: "A path long enough to measure what exporting it costs.",
        starter: text(),
        initial_segments: [text(), text(), text()],
        language,
        min_length: 1,
        max_length: language === "en" ? 500 : 5000,
      },
    })
  ).data;
  const branch = story.main_branch_id;
  let last;
  for (let n = 5; n <= SEGMENTS; n++) last = (await call(`/branches/${branch}/segments`, { token, body: { content: text() } })).data;
  return { branch, last };
}

/** One request, timed: status, bytes, wall ms and the workerd processes' CPU ms. */
async function timed(pgid, url, headers = {}) {
  const cpu = workerdCpuMs(pgid);
  const started = performance.now();
  const res = await fetch(url, { headers });
  const bytes = (await res.arrayBuffer()).byteLength;
  const wall = performance.now() - started;
  // The CPU of work after the answer (the cache's copy) lands a little later: wait for the processes to go quiet.
  await new Promise((r) => setTimeout(r, 300));
  return { status: res.status, bytes, wall, cpu: workerdCpuMs(pgid) - cpu, cache: res.headers.get("x-export-cache"), etag: res.headers.get("etag") };
}

/** Two accounts (a writer and a moderator) and two long paths, each with its last segment hidden. */
async function seed(call) {
  const human = await call("/auth/register", {
    body: { username: "longwriter", email: "long@example.com", password: "correct horse battery", user_type: "human" },
  });
  const moderator = await call("/auth/register", {
    body: { username: "benchmod", email: "mod@example.com", password: "correct horse battery", user_type: "human" },
  });
  const sql = spawnSync(
    "npx",
    ["wrangler", "d1", "execute", "DB", "--local", "--persist-to", STATE, "--command", `UPDATE users SET role = 'moderator' WHERE id = '${moderator.user.id}'`],
    {
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    },
  );
  if (sql.status !== 0) throw new Error(`could not make a moderator: ${sql.stderr}`);
  const started = Date.now();
  const paths = { en: await seedPath(call, human.access_token, "en"), zh: await seedPath(call, human.access_token, "zh") };
  console.log(`seeded 2 paths of ${SEGMENTS} segments in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  for (const path of Object.values(paths)) await call(`/admin/segments/${path.last.id}/hide`, { token: moderator.access_token, body: { reason: "bench" } });
  const seeded = { token: human.access_token, paths };
  writeFileSync(`${STATE}/paths.json`, JSON.stringify(seeded));
  return seeded;
}

async function main() {
  const reuse = values.reuse && existsSync(`${STATE}/paths.json`);
  if (!reuse) {
    rmSync(STATE, { recursive: true, force: true });
    mkdirSync(STATE, { recursive: true });
  }
  // The cache of exports starts empty, so each path's first shared copy is built.
  rmSync(`${STATE}/v3/cache`, { recursive: true, force: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/api/v1`;
  const server = await startDev(port, STATE, NO_LIMITS);
  const pgid = server.child.pid;
  const call = api(base);
  const rows = [];
  try {
    const { token, paths } = reuse ? JSON.parse(readFileSync(`${STATE}/paths.json`, "utf8")) : await seed(call);
    for (const [language, path] of Object.entries(paths)) {
      for (const format of ["epub", "md"]) {
        const url = `${base}/branches/${path.branch}/export.${format}`;
        const own = [];
        for (let i = 0; i < REQUESTS; i++) own.push(await timed(pgid, url, { authorization: `Bearer ${token}` }));
        if (own.some((r) => r.status !== 200 || r.cache !== "miss")) throw new Error(`${url}: ${JSON.stringify(own)}`);
        const first = await timed(pgid, url);
        if (first.cache !== "miss") throw new Error(`${url}: the shared copy was cached already (a --reuse of a state this code's copies did not make?)`);
        const hits = [];
        for (let i = 0; i < REQUESTS; i++) hits.push(await timed(pgid, url));
        const notModified = [];
        for (let i = 0; i < REQUESTS; i++) notModified.push(await timed(pgid, url, { "if-none-match": first.etag }));
        rows.push({ language, format, own, first, hits, notModified });
      }
    }
  } finally {
    server.stop();
  }
  const ms = (xs, key) => median(xs.map((x) => x[key])).toFixed(0);
  const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
  const table = [
    `| path | format | size | a private copy built: CPU ms | wall ms | a shared copy, first: CPU ms | from the cache: CPU ms | 304: CPU ms |`,
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${SEGMENTS} segments, ${r.language === "en" ? "500 words each (en)" : "5,000 characters each (zh)"} | ${r.format} | ${kb(r.own[0].bytes)} | ${ms(r.own, "cpu")} | ${ms(r.own, "wall")} | ${r.first.cpu} | ${ms(r.hits, "cpu")} | ${ms(r.notModified, "cpu")} |`,
    ),
  ].join("\n");
  const section = [
    "## EPUB export",
    "",
    `Run ${new Date().toISOString()} on ${cpus().length} cores by \`npm run bench:export\` (bench/export.mjs) against \`npm run dev\`: the median of ${REQUESTS} requests`,
    "one after another. CPU is the workerd processes' user+system time per request (/proc, 10 ms ticks): the Worker's isolate",
    "and, under `wrangler dev`, D1's SQLite as well. Workers' CPU limit per request is 30 s by default (5 min at most).",
    "",
    table,
    "",
  ].join("\n");
  console.log(section);
  if (values.write) {
    const file = "bench/RESULTS.md";
    const old = existsSync(file) ? readFileSync(file, "utf8") : "";
    const at = old.indexOf("\n## EPUB export");
    writeFileSync(file, `${at < 0 ? old.trimEnd() : old.slice(0, at).trimEnd()}\n\n${section}`);
  }
}

await main();
process.exit(0);
