// `npm run capacity`: what one D1 database holds, measured, and what a stated load needs of it (docs/scale.md).
//
// 1. Measures: a fresh `wrangler dev` (limits lifted), segments written through the API in English (≈2,150
//    characters each) and in Chinese (≈1,500), then votes and comments; after each phase the local D1 file is read
//    with SQLite's `dbstat` (node:sqlite), so every table's and index's bytes, the search tables' included, are
//    counted as SQLite stores them. A segment's bytes are the growth over the phase divided by its segments.
// 2. Models: for a load (`--bots`, `--every` minutes, `--years`, `--readers`), how long the one database lasts, and
//    what the same bytes need when story content lives in per-story storage (docs/scale.md says what goes where).
//
//   npm run capacity                          # 150 segments a language, the default load
//   npm run capacity -- --segments 300 --bots 10000 --every 10 --years 1 --readers 1000000
import { DatabaseSync } from "node:sqlite";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { NO_LIMITS, api, freePorts, startDev } from "./lib.mjs";

const { values: opts } = parseArgs({
  options: {
    segments: { type: "string", default: "150" },
    bots: { type: "string", default: "10000" },
    every: { type: "string", default: "10" },
    years: { type: "string", default: "1" },
    readers: { type: "string", default: "1000000" },
  },
});
const SEGMENTS = Number(opts.segments);
const GB = 1e9;
/** Cloudflare's published limits (developers.cloudflare.com, D1 and Durable Objects "Limits", paid plan). */
const LIMITS = { d1Database: 10 * GB, d1Account: 1000 * GB, doStorage: 10 * GB };

/** Where each table's rows live once story content leaves the one database (docs/scale.md, "What goes where"). */
const PLACE = {
  story: ["segments", "logs", "votes", "comments", "rewrites", "pins", "branch_summaries", "branches", "branch_members"],
  search: ["search_segments"],
  window: ["webhook_deliveries", "webhook_attempts", "idempotency_keys", "outbox", "inbox_events", "inbox_items"],
};
const placeOf = (table) => Object.entries(PLACE).find(([, tables]) => tables.includes(table))?.[0] ?? "directory";

// ---- text like writers write: Zipf-distributed words (English) and characters (Chinese), from fixed seeds ----
function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
function zipf(n, rnd) {
  const weights = Array.from({ length: n }, (_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative = [];
  let sum = 0;
  for (const w of weights) {
    sum += w / total;
    cumulative.push(sum);
  }
  return () => {
    const x = rnd();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
const SYLLABLES = "ka lo mi ra the an ser vin tor el ha ne dor lis mar ae wen sto ri gal fen ow ith um bel cor".split(" ");
/** 6,000 made-up words of one to three syllables: a vocabulary as large as a long story's. */
const VOCABULARY = Array.from({ length: 6000 }, (_, i) => {
  const r = random(i + 7);
  return Array.from({ length: 1 + Math.floor(r() * 3) }, () => SYLLABLES[Math.floor(r() * SYLLABLES.length)]).join("");
});
function englishText(rnd, pick, characters) {
  const vocabulary = VOCABULARY;
  const words = [];
  let length = 0;
  while (length < characters) {
    const word = vocabulary[pick()];
    words.push(word);
    length += word.length + 1;
    if (rnd() < 0.08) words[words.length - 1] += ".";
  }
  return words.join(" ");
}
function chineseText(rnd, pick, characters) {
  let text = "";
  while (text.length < characters) text += rnd() < 0.07 ? "，" : String.fromCodePoint(0x4e00 + pick());
  return text;
}

// ---- the local D1 file, read as SQLite stores it ----
function d1File(persist) {
  const dir = path.join(persist, "v3/d1/miniflare-D1DatabaseObject");
  const files = readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  return files.map((f) => path.join(dir, f)).sort((a, b) => statSync(b).size - statSync(a).size)[0];
}
/** Bytes per table (its indexes and, for a search table, its shadow tables counted with it), and rows per table. */
function measure(file, tables) {
  const db = new DatabaseSync(file, { readOnly: true });
  const owners = new Map(
    db
      .prepare("SELECT name, tbl_name FROM sqlite_schema")
      .all()
      .map((r) => [r.name, r.tbl_name]),
  );
  const bytes = {};
  for (const { name, size } of db.prepare("SELECT name, SUM(pgsize) AS size FROM dbstat GROUP BY name").all()) {
    let table = owners.get(name) ?? name;
    const shadow = /^(search_segments|search_stories)_/.exec(table);
    if (shadow) table = shadow[1];
    bytes[table] = (bytes[table] ?? 0) + size;
  }
  const rows = Object.fromEntries(tables.map((t) => [t, db.prepare(`SELECT COUNT(*) AS n FROM "${t}"`).get().n]));
  db.close();
  return { bytes, rows };
}
const minus = (a, b) => Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, (a[k] ?? 0) - (b[k] ?? 0)]));

async function run() {
  const persist = mkdtempSync(path.join(tmpdir(), "storyloom-capacity-"));
  const [port] = await freePorts(1);
  const base = `http://127.0.0.1:${port}/api/v1`;
  const server = await startDev(port, persist, [...NO_LIMITS, "--var", "LOG_REQUESTS:false"]);
  try {
    const call = api(base);
    const token = (await call("/auth/register", { body: { username: "capacity", email: "capacity@example.com", password: "capacity pw", user_type: "human" } }))
      .access_token;
    const reader = (await call("/auth/register", { body: { username: "reader", email: "reader@example.com", password: "capacity pw", user_type: "human" } }))
      .access_token;
    const file = d1File(persist);
    const tables = new DatabaseSync(file, { readOnly: true })
      .prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'search_%\\_%' ESCAPE '\\'",
      )
      .all()
      .map((r) => r.name);
    const phases = {};
    let before = measure(file, tables);
    let writeMs = [];
    const phase = async (name, count, act) => {
      const times = [];
      for (let i = 0; i < count; i++) {
        const started = performance.now();
        await act(i);
        times.push(performance.now() - started);
      }
      const after = measure(file, tables);
      phases[name] = { count, bytes: minus(after.bytes, before.bytes), rows: minus(after.rows, before.rows), ms: times };
      before = after;
    };
    const story = async (language) =>
      (
        await call("/stories", {
          token,
          body: {
            title: `Capacity ${language}`,
            background: "Measured.",
            starter: "It begins.",
            initial_segments: ["One.", "Two.", "Three."],
            language,
            min_length: 1,
            max_length: 100_000,
          },
        })
      ).data;
    const en = await story("en");
    const zh = await story("zh");
    const rndEn = random(1);
    const pickEn = zipf(6000, rndEn);
    const rndZh = random(2);
    const pickZh = zipf(3000, rndZh);
    const write = (branchId, text) => call(`/branches/${branchId}/segments`, { token, body: { content: text } });
    const enIds = [];
    await phase("segment (English)", SEGMENTS, async () => enIds.push((await write(en.main_branch_id, englishText(rndEn, pickEn, 2150))).data.id));
    await phase("segment (Chinese)", SEGMENTS, () => write(zh.main_branch_id, chineseText(rndZh, pickZh, 1500)));
    await phase("vote", SEGMENTS, (i) => call("/votes", { token: reader, body: { target_type: "segment", target_id: enIds[i], vote: 1 } }));
    await phase("comment", SEGMENTS, (i) =>
      call(`/branches/${en.main_branch_id}/comments`, { token: reader, body: { content: `A reader's comment, number ${i}, of a sentence or two like most.` } }),
    );
    writeMs = [...phases["segment (English)"].ms, ...phases["segment (Chinese)"].ms];
    return { phases, writeMs, totalBytes: statSync(file).size };
  } finally {
    server.stop();
    rmSync(persist, { recursive: true, force: true });
  }
}

// ---- the report ----
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
const big = (n) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} billion` : n >= 1e6 ? `${(n / 1e6).toFixed(2)} million` : `${Math.round(n).toLocaleString("en")}`);
const days = (d) => (d >= 365 ? `${(d / 365).toFixed(1)} years` : `${d.toFixed(1)} days`);

const { phases, writeMs } = await run();
const perOp = Object.fromEntries(
  Object.entries(phases).map(([name, p]) => {
    const byPlace = {};
    for (const [table, b] of Object.entries(p.bytes)) byPlace[placeOf(table)] = (byPlace[placeOf(table)] ?? 0) + b / p.count;
    const rows = Object.values(p.rows).reduce((a, b) => a + b, 0) / p.count;
    return [name, { total: Object.values(p.bytes).reduce((a, b) => a + b, 0) / p.count, byPlace, tables: p.bytes, rows, count: p.count }];
  }),
);
console.log(`\nMeasured: ${SEGMENTS} segments a language, then ${SEGMENTS} votes and ${SEGMENTS} comments, through the API (local D1, dbstat).\n`);
console.log("| operation | bytes in D1 each | story content | search index | directory | pruned window | rows written |");
console.log("|---|---|---|---|---|---|---|");
for (const [name, o] of Object.entries(perOp))
  console.log(
    `| ${name} | ${kb(o.total)} | ${kb(o.byPlace.story ?? 0)} | ${kb(o.byPlace.search ?? 0)} | ${kb(o.byPlace.directory ?? 0)} | ${kb(o.byPlace.window ?? 0)} | ${o.rows.toFixed(1)} |`,
  );
const segment = (perOp["segment (English)"].total + perOp["segment (Chinese)"].total) / 2;
const part = (place) => ((perOp["segment (English)"].byPlace[place] ?? 0) + (perOp["segment (Chinese)"].byPlace[place] ?? 0)) / 2;
const sortedMs = [...writeMs].sort((a, b) => a - b);
const medianMs = sortedMs[sortedMs.length >> 1];

const bots = Number(opts.bots);
const every = Number(opts.every);
const years = Number(opts.years);
const perDay = (bots * 24 * 60) / every;
const total = perDay * 365 * years;
console.log(
  `\nThe load: ${bots.toLocaleString("en")} bots writing a segment every ${every} minutes (${big(perDay)} a day, ${(perDay / 86400).toFixed(1)} a second) for ${years} year(s): ${big(total)} segments; ${big(Number(opts.readers))} readers.`,
);
console.log(`A segment, half English and half Chinese: ${kb(segment)} in D1 today.\n`);

console.log("Today: one D1 database holds everything.");
console.log(
  `- it holds ${big(LIMITS.d1Database / segment)} segments (${kb(segment)} each) and is full after ${days(LIMITS.d1Database / segment / perDay)} of the load;`,
);
console.log(
  `- every write of the service goes to its one writer: ${(perDay / 86400).toFixed(1)} segment writes a second, ${((perDay / 86400) * perOp["segment (English)"].rows).toFixed(0)} rows a second;`,
);
console.log(
  `- a segment write took ${medianMs.toFixed(1)} ms end to end here (median, serial, local): one writer serving only these is busy ${(((perDay / 86400) * medianMs) / 10).toFixed(1)} % of the time at that pace.`,
);
console.log(`First limit: the database's 10 GB, after ${days(LIMITS.d1Database / segment / perDay)}.\n`);

const storyBytes = part("story");
const searchBytes = part("search");
const directoryBytes = part("directory");
const windowBytes = part("window");
const shards = Math.max(1, Math.ceil((total * searchBytes) / (LIMITS.d1Database * 0.8)));
console.log("Per-story storage (docs/scale.md): content in a SQLite Durable Object per story, search in shards, D1 a directory.");
console.log(
  `- a story's storage holds ${big(LIMITS.doStorage / storyBytes)} segments (${kb(storyBytes)} each, content and its logs, votes, comments); storages are added with stories, none shared;`,
);
console.log(
  `- the search index: ${kb(searchBytes)} a segment, ${((total * searchBytes) / GB).toFixed(0)} GB for the load: ${shards} shard database(s) at 80 % full, queried in parallel;`,
);
console.log(
  `- D1 (directory) grows ${kb(directoryBytes)} a segment: ${((total * directoryBytes) / GB).toFixed(1)} GB for the load (counts and last activity are updated, not added);`,
);
console.log(`- rows pruned by window: ${kb(windowBytes)} a segment, kept a day: ${((perDay * windowBytes) / GB).toFixed(2)} GB at any time;`);
console.log(
  `- one story writes at its own pace: its storage is one writer, ${medianMs.toFixed(1)} ms a segment here: ${Math.floor(1000 / medianMs)} segments a second for one story.`,
);
const firstNew = Math.min(
  (LIMITS.d1Database - 0.1 * GB) / (perDay * directoryBytes + 1e-9),
  (LIMITS.d1Account - shards * LIMITS.d1Database) / (perDay * searchBytes + 1e-9),
);
console.log(
  `First limit: ${firstNew / 365 > years ? `none within ${years} year(s); the directory database fills after ${days((LIMITS.d1Database - 0.1 * GB) / (perDay * directoryBytes + 1e-9))}` : `after ${days(firstNew)}`}.`,
);
