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
//   npm run capacity -- --segments 300 --bots 10000 --every 10 --years 1 --stories 1000 --readers 1000000
// (`--stories`: new stories a day.)
import { DatabaseSync } from "node:sqlite";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { NO_LIMITS, api, ensureWrk, freePorts, load, median, startDev, startWrangler } from "./lib.mjs";

const { values: opts } = parseArgs({
  options: {
    segments: { type: "string", default: "150" },
    bots: { type: "string", default: "10000" },
    every: { type: "string", default: "10" },
    years: { type: "string", default: "1" },
    readers: { type: "string", default: "1000000" },
    stories: { type: "string", default: "1000" },
  },
});
const SEGMENTS = Number(opts.segments);
const GB = 1e9;
/** Cloudflare's published limits (developers.cloudflare.com, D1 and Durable Objects "Limits", paid plan). */
const LIMITS = { d1Database: 10 * GB, d1Account: 1000 * GB, doStorage: 10 * GB };
/** How full a store is let grow before another is opened. */
const FILL = 0.8;

/** Where each table's rows live once story content leaves the one database (docs/scale.md, "What goes where"). */
const PLACE = {
  story: ["segments", "logs", "votes", "comments", "rewrites", "pins", "branch_summaries", "branches", "branch_members"],
  search: ["search_segments"],
  inbox: ["inbox_items"],
  window: ["idempotency_keys", "outbox", "inbox_events"],
  webhooks: ["webhook_deliveries", "webhook_attempts"],
};
/** How long each place's rows are kept (src/queue/sweeper.ts): inbox items INBOX_KEEP_DAYS, the others a day (webhook deliveries a week). */
const KEEP_DAYS = { inbox: 90, window: 1, webhooks: 7 };
/** The most shards one search should ask in parallel before the index needs another shape (docs/scale.md). */
const SEARCH_FANOUT = 64;
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
    const account = async (name) =>
      (await call("/auth/register", { body: { username: name, email: `${name}@example.com`, password: "capacity pw", user_type: "human" } })).access_token;
    // The story's owner, a writer who is not the owner (as a bot on someone's story is: the owner hears of it), a reader.
    const owner = await account("owner");
    const writer = await account("writer");
    const reader = await account("reader");
    const file = d1File(persist);
    const tables = new DatabaseSync(file, { readOnly: true })
      .prepare(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'search_%\\_%' ESCAPE '\\'",
      )
      .all()
      .map((r) => r.name);
    const phases = {};
    let before = measure(file, tables);
    /** Runs `act` `count` times in turn, then measures what the database grew by; `act` may answer the write's time in the room. */
    const phase = async (name, count, act) => {
      const roomMs = [];
      for (let i = 0; i < count; i++) {
        const ms = await act(i);
        if (typeof ms === "number") roomMs.push(ms);
      }
      const after = measure(file, tables);
      phases[name] = { count, bytes: minus(after.bytes, before.bytes), rows: minus(after.rows, before.rows), roomMs };
      before = after;
    };
    const newStory = async (language, i = 0) =>
      (
        await call("/stories", {
          token: owner,
          body: {
            title: `Capacity ${language} ${i}`,
            background: "A story written to be measured, with a background of a sentence or two as most have.",
            starter: "It begins here, on a night like any other.",
            initial_segments: ["The first of them came at dusk.", "The second of them followed.", "The third of them never came."],
            language,
            min_length: 1,
            max_length: 100_000,
            tags: ["measured", language === "en" ? "english" : "chinese"],
          },
        })
      ).data;
    const stories = [];
    await phase("story (with its 3 initial segments)", SEGMENTS, async (i) => {
      stories.push(await newStory(i % 2 ? "zh" : "en", i));
    });
    const en = stories[0];
    const zh = stories[1];
    await call("/follows", { token: reader, body: { target_type: "story", target_id: en.id } });
    await call("/follows", { token: reader, body: { target_type: "story", target_id: zh.id } });
    const rndEn = random(1);
    const pickEn = zipf(6000, rndEn);
    const rndZh = random(2);
    const pickZh = zipf(3000, rndZh);
    /** A segment by the writer; answers the room's time for it (Server-Timing's `do` entry: its checks and D1 batch). */
    const write = async (branchId, text, ids) => {
      const res = await fetch(`${base}/branches/${branchId}/segments`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${writer}` },
        body: JSON.stringify({ content: text }),
      });
      const body = await res.json();
      if (res.status !== 201) throw new Error(`segment write -> ${res.status} ${JSON.stringify(body)}`);
      ids?.push(body.data.id);
      return Number(/do;desc="[^"]*";dur=([\d.]+)/.exec(res.headers.get("server-timing") ?? "")?.[1] ?? Number.NaN);
    };
    const enIds = [];
    const written = { en: [], zh: [] };
    const kept = (language, text) => {
      written[language].push(text);
      return text;
    };
    await phase("segment (English)", SEGMENTS, () => write(en.main_branch_id, kept("en", englishText(rndEn, pickEn, 2150)), enIds));
    await phase("segment (Chinese)", SEGMENTS, () => write(zh.main_branch_id, kept("zh", chineseText(rndZh, pickZh, 1500))));
    await phase("vote", SEGMENTS, (i) => call("/votes", { token: reader, body: { target_type: "segment", target_id: enIds[i], vote: 1 } }));
    await phase("comment", SEGMENTS, (i) =>
      call(`/branches/${en.main_branch_id}/comments`, { token: reader, body: { content: `A reader's comment, number ${i}, of a sentence or two like most.` } }),
    );
    return { phases, written };
  } finally {
    server.stop();
    rmSync(persist, { recursive: true, force: true });
  }
}

// ---- the report ----
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
const big = (n) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} billion` : n >= 1e6 ? `${(n / 1e6).toFixed(2)} million` : `${Math.round(n).toLocaleString("en")}`);
const days = (d) => (!Number.isFinite(d) ? "never" : d >= 365 ? `${(d / 365).toFixed(1)} years` : `${d.toFixed(1)} days`);
const gb = (n) => `${(n / GB).toFixed(n < 10 * GB ? 2 : 0)} GB`;

/**
 * The same texts' search index built two ways in a scratch SQLite (node:sqlite, FTS5 as D1's): as today (the table
 * keeps its own copy of the indexed text) and contentless (`content=''`, `contentless_delete=1`: the index only, the
 * text read from where it lives), each row's text as the service indexes it (`indexText`: Chinese as bigram tokens).
 */
async function indexBytes(texts) {
  const { tsImport } = await import("tsx/esm/api");
  const { indexText } = await tsImport("../src/lib/search-text.ts", import.meta.url);
  const bytes = {};
  for (const [name, options] of [
    ["today", ""],
    ["contentless", ", content='', contentless_delete=1"],
  ]) {
    const db = new DatabaseSync(":memory:");
    db.exec(`CREATE VIRTUAL TABLE idx USING fts5(content${options}, tokenize = 'unicode61 remove_diacritics 2')`);
    const insert = db.prepare("INSERT INTO idx(rowid, content) VALUES (?, ?)");
    for (const [i, text] of texts.entries()) insert.run(i + 1, indexText(text));
    bytes[name] = db.prepare("SELECT SUM(pgsize) AS size FROM dbstat").get().size / texts.length;
    db.close();
  }
  return bytes;
}

/**
 * One story's storage in miniature (bench/story-store/): wrk writes segments of `text` into ONE SQLite Durable Object
 * for `seconds` (its write: the segment's row, its log line, a contentless search row and an outbox row, one
 * transaction), then calls it without writing; answers its writes a second, a call's, and its bytes per segment.
 */
async function storyStore(text, seconds = 5) {
  ensureWrk();
  const persist = mkdtempSync(path.join(tmpdir(), "storyloom-story-store-"));
  const [port, inspector] = await freePorts(2);
  const base = `http://127.0.0.1:${port}`;
  const server = await startWrangler("bench/story-store/wrangler.toml", port, persist, "/health", ["--inspector-port", String(inspector)]);
  try {
    const writes = await load({ url: `${base}/write/one`, method: "POST", headers: { "content-type": "text/plain" }, body: text, duration: seconds });
    const calls = await load({ url: `${base}/noop/one`, duration: seconds });
    const dir = path.join(persist, "v3/do/storyloom-story-store-probe-StoryStore");
    const file = readdirSync(dir)
      .filter((f) => f.endsWith(".sqlite"))
      .map((f) => path.join(dir, f))[0];
    const db = new DatabaseSync(file, { readOnly: true });
    const { n } = db.prepare("SELECT COUNT(*) AS n FROM segments").get();
    const { size } = db.prepare("SELECT SUM(pgsize) AS size FROM dbstat").get();
    db.close();
    return { writesPerSecond: writes.rps, callsPerSecond: calls.rps, failed: writes.non2xx + calls.non2xx, bytesPerSegment: size / n, segments: n };
  } finally {
    server.stop();
    rmSync(persist, { recursive: true, force: true });
  }
}

const { phases, written } = await run();
const store = await storyStore(written.en[0]);
const indexEn = await indexBytes(written.en);
const indexZh = await indexBytes(written.zh);
const perOp = Object.fromEntries(
  Object.entries(phases).map(([name, p]) => {
    const byPlace = {};
    for (const [table, b] of Object.entries(p.bytes)) byPlace[placeOf(table)] = (byPlace[placeOf(table)] ?? 0) + b / p.count;
    const rows = Object.values(p.rows).reduce((a, b) => a + b, 0) / p.count;
    return [name, { total: Object.values(p.bytes).reduce((a, b) => a + b, 0) / p.count, byPlace, rows, tables: p.bytes, count: p.count }];
  }),
);
console.log(`\nMeasured through the API on a fresh local D1 (SQLite's dbstat: tables, indexes and the search tables' shadow tables):\n`);
console.log("| each | bytes in D1 | story content | search index | directory | inbox items | other pruned rows | rows written |");
console.log("|---|---|---|---|---|---|---|---|");
for (const [name, o] of Object.entries(perOp))
  console.log(
    `| ${name} | ${kb(o.total)} | ${kb(o.byPlace.story ?? 0)} | ${kb(o.byPlace.search ?? 0)} | ${kb(o.byPlace.directory ?? 0)} | ${kb(o.byPlace.inbox ?? 0)} | ${kb((o.byPlace.window ?? 0) + (o.byPlace.webhooks ?? 0))} | ${o.rows.toFixed(1)} |`,
  );
console.log("\nA segment's bytes by table (English; Chinese):");
for (const table of Object.keys(perOp["segment (English)"].tables).sort()) {
  const en = perOp["segment (English)"].tables[table] / perOp["segment (English)"].count;
  const zh = (perOp["segment (Chinese)"].tables[table] ?? 0) / perOp["segment (Chinese)"].count;
  if (Math.abs(en) + Math.abs(zh) >= 50) console.log(`- ${table}: ${kb(en)}; ${kb(zh)}`);
}
console.log(
  `\nThe same segments' search index rebuilt apart (node:sqlite): as stored today ${kb(indexEn.today)} (English), ${kb(indexZh.today)} (Chinese); contentless ${kb(indexEn.contentless)}, ${kb(indexZh.contentless)}: ${((1 - (indexEn.contentless + indexZh.contentless) / (indexEn.today + indexZh.today)) * 100).toFixed(0)} % less.`,
);
const both = (f) => (f(perOp["segment (English)"]) + f(perOp["segment (Chinese)"])) / 2;
const segment = both((o) => o.total);
const part = (place) => both((o) => o.byPlace[place] ?? 0);
const story = perOp["story (with its 3 initial segments)"];
console.log(
  `\nOne story's storage in miniature (bench/story-store/, one SQLite Durable Object, wrk 10 connections): ${Math.round(store.writesPerSecond)} segment writes a second (a call without writing: ${Math.round(store.callsPerSecond)} a second; ${store.failed} failed), ${kb(store.bytesPerSegment)} a segment in its SQLite (English, ${store.segments.toLocaleString("en")} written).`,
);
const roomMs = median([...phases["segment (English)"].roomMs, ...phases["segment (Chinese)"].roomMs].filter(Number.isFinite));

const bots = Number(opts.bots);
const every = Number(opts.every);
const years = Number(opts.years);
const storiesPerDay = Number(opts.stories);
const perDay = (bots * 24 * 60) / every;
const total = perDay * 365 * years;
console.log(
  `\nThe load: ${bots.toLocaleString("en")} bots writing a segment every ${every} minutes (${big(perDay)} a day, ${(perDay / 86400).toFixed(1)} a second), ${storiesPerDay.toLocaleString("en")} new stories a day, for ${years} year(s): ${big(total)} segments; ${big(Number(opts.readers))} readers (reads are served at the edge and from caches; they add no bytes).`,
);
console.log(`A segment, half English and half Chinese: ${kb(segment)} in D1 today; a story ${kb(story.total)} (its row, tags and initial segments).`);
console.log(`A segment write's time in its branch's room (its checks and its one D1 batch), median, local: ${roomMs.toFixed(1)} ms.\n`);

const todayPerDay = perDay * segment + storiesPerDay * story.total;
console.log("Today: one D1 database holds everything.");
console.log(
  `- it holds ${big((LIMITS.d1Database * FILL) / segment)} segments at ${FILL * 100} % full, and the load fills it in ${days((LIMITS.d1Database * FILL) / todayPerDay)};`,
);
console.log(
  `- every write of the service waits on its one writer: ${(perDay / 86400).toFixed(1)} segment writes and ${((perDay / 86400) * both((o) => o.rows)).toFixed(0)} rows a second.`,
);
console.log(`First limit: the one database's 10 GB, after ${days((LIMITS.d1Database * FILL) / todayPerDay)}.\n`);

const content = part("story");
// The shards' index is contentless (D-SCALE-3): its bytes as rebuilt apart, from the same segments.
const search = (indexEn.contentless + indexZh.contentless) / 2;
const directorySegment = part("directory");
const windowBytes = part("window");
const directoryPerDay = perDay * directorySegment + storiesPerDay * (story.byPlace.directory ?? 0);
const windowHeld = perDay * (windowBytes * KEEP_DAYS.window + part("webhooks") * KEEP_DAYS.webhooks + part("inbox") * KEEP_DAYS.inbox);
const searchTotal = total * search;
const searchShards = Math.ceil(searchTotal / (LIMITS.doStorage * FILL));
const d1SearchDays = (LIMITS.d1Account * FILL) / (perDay * search);
console.log("Per-story storage (docs/scale.md): a story's content in its own SQLite Durable Object, search in shards, D1 a directory.");
console.log(
  `- a story's storage: ${kb(content)} a segment (its text, logs, votes and comments), so ${big((LIMITS.doStorage * FILL) / content)} segments in one story; one is added with each story, none is shared;`,
);
console.log(
  `- one story's writes: ${Math.round(store.writesPerSecond)} segments a second into its own SQLite Durable Object, measured above (today's room and D1 batch: ${roomMs.toFixed(1)} ms a segment); the service's rate grows with its stories;`,
);
console.log(
  `- the search index, contentless: ${kb(search)} a segment (${kb(part("search"))} as stored today), ${gb(searchTotal)} for the load. In D1 databases it meets the account's 1 TB after ${days(d1SearchDays)}; in SQLite Durable Objects it is ${searchShards} shards at ${FILL * 100} % full, each query asking them all in parallel;`,
);
console.log(
  `- D1 (accounts, the story directory, follows…): ${kb(directorySegment)} a segment and ${kb(story.byPlace.directory ?? 0)} a story, ${gb(directoryPerDay * 365 * years)} for the load; full after ${days((LIMITS.d1Database * FILL) / directoryPerDay)};`,
);
console.log(
  `- rows pruned by age: inbox items ${kb(part("inbox"))} a segment, kept ${KEEP_DAYS.inbox} days; the outbox, inbox events and idempotency keys ${kb(windowBytes)}, kept ${KEEP_DAYS.window} day; webhook deliveries ${kb(part("webhooks"))}, kept ${KEEP_DAYS.webhooks} days: ${gb(windowHeld)} held at any time, in the directory's database.`,
);
const limits = [
  [
    "the directory database's 10 GB (its rows and the rows kept by age)",
    windowHeld >= LIMITS.d1Database * FILL ? 0 : (LIMITS.d1Database * FILL - windowHeld) / directoryPerDay,
  ],
  [`a search asking more than ${SEARCH_FANOUT} shards`, (SEARCH_FANOUT * LIMITS.doStorage * FILL) / (perDay * search)],
  ["one story's 10 GB (only for a story that alone holds that much)", Number.POSITIVE_INFINITY],
].sort((a, b) => a[1] - b[1]);
console.log(`First limit: ${limits[0][0]}, after ${days(limits[0][1])}; then ${limits[1][0]}, after ${days(limits[1][1])}.`);
