// `npm run capacity`: what one D1 database and the search shards hold, measured, and what a stated load needs of
// them (docs/scale.md).
//
// 1. Measures: a fresh `wrangler dev` (limits lifted), segments written through the API in English (≈2,150
//    characters each) and in Chinese (≈1,500), then votes and comments. After each phase the search queue is let
//    catch up (no story's shard copy behind: D1's `search_version > search_synced` nowhere), then the local D1 file
//    and every search shard's SQLite file (SearchShard Durable Objects, D-SCALE-3) are read with SQLite's `dbstat`
//    (node:sqlite), so every table's and index's bytes, the FTS5 shadow tables included, are counted as SQLite
//    stores them. A segment's bytes are the growth over the phase divided by its segments.
// 2. Models: for a load (`--bots`, `--every` minutes, `--years`, `--stories` a day, `--readers`), three layouts:
//    search in D1 as before the shards (derived: D1 now plus the shards), as now (D1 everything but search, search in
//    shards of SEARCH_STORIES_PER_SHARD stories), and story content in per-story storage (docs/scale.md); and which
//    limit comes first in each.
//
//   npm run capacity                          # 150 segments a language, the default load
//   npm run capacity -- --segments 300 --bots 10000 --every 10 --years 1 --stories 1000 --readers 1000000
//   npm run capacity -- --port 8740           # the servers on 8740..8743 (dev, its inspector, the probe, its inspector)
// (`--stories`: new stories a day. Without `--port`, free ports the system picks.)
import { DatabaseSync } from "node:sqlite";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { NO_LIMITS, api, ensureWrk, freePorts, load, median, sleep, startDev, startWrangler } from "./lib.mjs";

const { values: opts } = parseArgs({
  options: {
    segments: { type: "string", default: "150" },
    bots: { type: "string", default: "10000" },
    every: { type: "string", default: "10" },
    years: { type: "string", default: "1" },
    readers: { type: "string", default: "1000000" },
    stories: { type: "string", default: "1000" },
    port: { type: "string" },
  },
});
const SEGMENTS = Number(opts.segments);
/** Four ports from `--port` on, else free ones: Storyloom's dev server and inspector, then the probe's. */
const PORTS = opts.port ? [0, 1, 2, 3].map((i) => Number(opts.port) + i) : await freePorts(4);
/** Stories a search shard holds (wrangler.toml, SEARCH_STORIES_PER_SHARD). */
const SEARCH_STORIES_PER_SHARD = Number(/^SEARCH_STORIES_PER_SHARD\s*=\s*"(\d+)"/m.exec(readFileSync("wrangler.toml", "utf8"))?.[1]);
if (!SEARCH_STORIES_PER_SHARD) throw new Error("wrangler.toml has no SEARCH_STORIES_PER_SHARD");
const GB = 1e9;
/** Cloudflare's published limits (developers.cloudflare.com, D1 and Durable Objects "Limits", paid plan). */
const LIMITS = { d1Database: 10 * GB, doStorage: 10 * GB };
/** How full a store is let grow before another is opened. */
const FILL = 0.8;

/** Where each table's rows live once story content leaves the one database (docs/scale.md, "What goes where"). */
const PLACE = {
  story: ["segments", "logs", "votes", "comments", "rewrites", "pins", "branch_summaries", "branches", "branch_members"],
  search: ["search_segments", "search_stories"],
  inbox: ["inbox_items"],
  window: ["idempotency_keys", "outbox", "inbox_events"],
  webhooks: ["webhook_deliveries", "webhook_attempts"],
};
/** A search shard's tables (src/durable/search-shard.ts): its FTS5 index, and its copies of D1's columns that decide what may be shown. */
const SHARD_PLACE = { index: ["search_segments", "search_stories"], copies: ["stories", "story_tags", "branches", "segments"] };
const SHARD_TABLES = Object.values(SHARD_PLACE).flat();
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
/** Where wrangler dev keeps the search shards' SQLite files (one a shard, `search-0`, `search-1`…, once written). */
const shardDir = (persist) => path.join(persist, "v3/do/storyloom-SearchShard");
/** Every search shard's bytes and rows per table, summed over the shards; and how many there are. */
function measureShards(persist) {
  const dir = shardDir(persist);
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite") : [];
  const bytes = {};
  const rows = {};
  for (const f of files) {
    const m = measure(path.join(dir, f), SHARD_TABLES);
    for (const [t, b] of Object.entries(m.bytes)) bytes[t] = (bytes[t] ?? 0) + b;
    for (const [t, n] of Object.entries(m.rows)) rows[t] = (rows[t] ?? 0) + n;
  }
  return { bytes, rows, shards: files.length };
}
/** Waits until the search queue has copied every story to its shard (D1: no story's `search_version` past its `search_synced`). */
async function searchCaughtUp(file) {
  const started = Date.now();
  for (;;) {
    const db = new DatabaseSync(file, { readOnly: true });
    const { n } = db.prepare("SELECT COUNT(*) AS n FROM stories WHERE search_version > search_synced").get();
    db.close();
    if (n === 0) return Date.now() - started;
    if (Date.now() - started > 300_000) throw new Error(`the search queue left ${n} stories behind for 5 minutes`);
    await sleep(250);
  }
}
const minus = (a, b) => Object.fromEntries([...new Set([...Object.keys(a), ...Object.keys(b)])].map((k) => [k, (a[k] ?? 0) - (b[k] ?? 0)]));

async function run() {
  const persist = mkdtempSync(path.join(tmpdir(), "storyloom-capacity-"));
  const [port, inspector] = PORTS;
  const base = `http://127.0.0.1:${port}/api/v1`;
  const server = await startDev(port, persist, ["--inspector-port", String(inspector), ...NO_LIMITS, "--var", "LOG_REQUESTS:false"]);
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
    // One story before the first measure, not counted: the first shard's file and empty tables are a shard's cost, not a story's.
    await newStory("en", -1);
    await searchCaughtUp(file);
    const both = () => ({ d1: measure(file, tables), shards: measureShards(persist) });
    let before = both();
    /**
     * Runs `act` `count` times in turn, lets the search queue catch up, then measures what D1 and the shards grew by;
     * `act` may answer the write's time in the room.
     */
    const phase = async (name, count, act) => {
      const roomMs = [];
      for (let i = 0; i < count; i++) {
        const ms = await act(i);
        if (typeof ms === "number") roomMs.push(ms);
      }
      const syncMs = await searchCaughtUp(file);
      const after = both();
      phases[name] = {
        count,
        bytes: minus(after.d1.bytes, before.d1.bytes),
        rows: minus(after.d1.rows, before.d1.rows),
        shardBytes: minus(after.shards.bytes, before.shards.bytes),
        shardRows: minus(after.shards.rows, before.shards.rows),
        shards: after.shards.shards,
        roomMs,
        syncMs,
      };
      before = after;
    };
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
 * The same texts' search index built two ways in a scratch SQLite (node:sqlite, FTS5 as D1's and the shards'): as
 * stored now (the table keeps its own copy of the indexed text, for snippets) and contentless (`content=''`,
 * `contentless_delete=1`: the index only, the text read from where it lives: the shards' form once a story's room
 * holds its text, D-SCALE-3), each row's text as the service indexes it (`indexText`: Chinese as bigram tokens).
 */
async function indexBytes(texts) {
  const { tsImport } = await import("tsx/esm/api");
  const { indexText } = await tsImport("../src/lib/search-text.ts", import.meta.url);
  const bytes = {};
  for (const [name, options] of [
    ["stored", ""],
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
  const [port, inspector] = PORTS.slice(2);
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
const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
const perOp = Object.fromEntries(
  Object.entries(phases).map(([name, p]) => {
    const byPlace = {};
    for (const [table, b] of Object.entries(p.bytes)) byPlace[placeOf(table)] = (byPlace[placeOf(table)] ?? 0) + b / p.count;
    const shardBy = (place) => SHARD_PLACE[place].reduce((a, t) => a + (p.shardBytes[t] ?? 0), 0) / p.count;
    const indexRows = SHARD_PLACE.index.reduce((a, t) => a + (p.shardRows[t] ?? 0), 0) / p.count;
    const shard = { total: sum(p.shardBytes) / p.count, index: shardBy("index"), copies: shardBy("copies"), rows: sum(p.shardRows) / p.count, indexRows };
    return [name, { total: sum(p.bytes) / p.count, byPlace, rows: sum(p.rows) / p.count, tables: p.bytes, shard, count: p.count }];
  }),
);
const SEGMENT_EN = "segment (English)";
const SEGMENT_ZH = "segment (Chinese)";
console.log(
  `\nMeasured through the API on a fresh local D1 and its search shards (SQLite's dbstat: tables, indexes, FTS5 shadow tables), each phase once the search queue had copied it to the shards (${phases[SEGMENT_EN].shards} shard(s) written):\n`,
);
console.log(
  "| each | D1 now | story content | search in D1 | directory | inbox items | other pruned rows | search shard | its index | its copies of D1's columns | D1 before the shards (D1 + shard index, derived) | rows written (D1; shard) |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const [name, o] of Object.entries(perOp))
  console.log(
    `| ${name} | ${kb(o.total)} | ${kb(o.byPlace.story ?? 0)} | ${kb(o.byPlace.search ?? 0)} | ${kb(o.byPlace.directory ?? 0)} | ${kb(o.byPlace.inbox ?? 0)} | ${kb((o.byPlace.window ?? 0) + (o.byPlace.webhooks ?? 0))} | ${kb(o.shard.total)} | ${kb(o.shard.index)} | ${kb(o.shard.copies)} | ${kb(o.total + o.shard.index)} | ${o.rows.toFixed(1)}; ${o.shard.rows.toFixed(1)} |`,
  );
console.log("\nA segment's bytes by table (English; Chinese):");
const byTable = (where, key) => {
  const en = phases[SEGMENT_EN];
  const zh = phases[SEGMENT_ZH];
  for (const table of [...new Set([...Object.keys(en[key]), ...Object.keys(zh[key])])].sort()) {
    const a = (en[key][table] ?? 0) / en.count;
    const b = (zh[key][table] ?? 0) / zh.count;
    if (Math.abs(a) + Math.abs(b) >= 50) console.log(`- ${where} ${table}: ${kb(a)}; ${kb(b)}`);
  }
};
byTable("D1", "bytes");
byTable("shard", "shardBytes");
console.log(
  `\nThe same segments' index rebuilt apart (node:sqlite): with its text, as the shards store it, ${kb(indexEn.stored)} (English), ${kb(indexZh.stored)} (Chinese); contentless (the shards' future form, the text read from the story's room) ${kb(indexEn.contentless)}, ${kb(indexZh.contentless)}: ${((1 - (indexEn.contentless + indexZh.contentless) / (indexEn.stored + indexZh.stored)) * 100).toFixed(0)} % less.`,
);
console.log(
  `\nOne story's storage in miniature (bench/story-store/, one SQLite Durable Object, wrk 10 connections, wall time on a machine other work shares): ${Math.round(store.writesPerSecond)} segment writes a second (a call without writing: ${Math.round(store.callsPerSecond)} a second; ${store.failed} failed), ${kb(store.bytesPerSegment)} a segment in its SQLite (English, ${store.segments.toLocaleString("en")} written).`,
);
const roomMs = median([...phases[SEGMENT_EN].roomMs, ...phases[SEGMENT_ZH].roomMs].filter(Number.isFinite));
const syncMs = Math.max(...Object.values(phases).map((p) => p.syncMs));

const bots = Number(opts.bots);
const every = Number(opts.every);
const years = Number(opts.years);
const storiesPerDay = Number(opts.stories);
const perDay = (bots * 24 * 60) / every;
const total = perDay * 365 * years;
const both = (f) => (f(perOp[SEGMENT_EN]) + f(perOp[SEGMENT_ZH])) / 2;
const story = perOp["story (with its 3 initial segments)"];
const d1Segment = both((o) => o.total);
const shardSegment = both((o) => o.shard.total);
const cap = (limit) => limit * FILL;
const firstLimit = (limits) => {
  const sorted = [...limits].sort((a, b) => a[1] - b[1]);
  const then = sorted[1] && Number.isFinite(sorted[1][1]) ? `; then ${sorted[1][0]}, after ${days(sorted[1][1])}` : "";
  return `First limit: ${sorted[0][0]}, after ${days(sorted[0][1])}${then}.\n`;
};
console.log(
  `\nThe load: ${bots.toLocaleString("en")} bots writing a segment every ${every} minutes (${big(perDay)} a day, ${(perDay / 86400).toFixed(1)} a second), ${storiesPerDay.toLocaleString("en")} new stories a day, for ${years} year(s): ${big(total)} segments; ${big(Number(opts.readers))} readers (reads are served at the edge and from caches; they add no bytes).`,
);
console.log(
  `A segment, half English and half Chinese: ${kb(d1Segment)} in D1 now and ${kb(shardSegment)} in its search shard (index ${kb(both((o) => o.shard.index))}, copies ${kb(both((o) => o.shard.copies))}); a story ${kb(story.total)} in D1 and ${kb(story.shard.total)} in its shard (its row, tags, branch and initial segments).`,
);
console.log(
  `A segment write's time in its branch's room (its checks and its one D1 batch), median, local wall time: ${roomMs.toFixed(1)} ms; the search queue caught up at most ${(syncMs / 1000).toFixed(1)} s after a phase's last write.\n`,
);

// (a) The index in D1, as before the shards: not run, derived (D1 now + the shards' index of the same writes; their
// copies of D1's columns are not counted again: D1 read its own rows).
const beforeSegment = d1Segment + both((o) => o.shard.index);
const beforeStory = story.total + story.shard.index;
const beforeDays = cap(LIMITS.d1Database) / (perDay * beforeSegment + storiesPerDay * beforeStory);
console.log("(a) Before the search shards: one D1 database held everything, search included (derived: D1 now + the shards' index).");
console.log(
  `- a segment ${kb(beforeSegment)}, a story ${kb(beforeStory)}: it holds ${big(cap(LIMITS.d1Database) / beforeSegment)} segments at ${FILL * 100} % full, and the load fills it in ${days(beforeDays)};`,
);
console.log(
  `- every write of the service waits on its one writer: ${(perDay / 86400).toFixed(1)} segment writes and ${((perDay / 86400) * both((o) => o.rows + o.shard.indexRows)).toFixed(0)} rows a second.`,
);
console.log(firstLimit([["the one database's 10 GB", beforeDays]]));

// (b) Now: D1 everything but search; the shards a range of SEARCH_STORIES_PER_SHARD stories each.
const nowDays = cap(LIMITS.d1Database) / (perDay * d1Segment + storiesPerDay * story.total);
const segmentsPerStory = perDay / storiesPerDay;
const shardBytes = SEARCH_STORIES_PER_SHARD * (segmentsPerStory * shardSegment + story.shard.total);
const shardsMade = Math.ceil((storiesPerDay * 365 * years) / SEARCH_STORIES_PER_SHARD);
const fanoutDays = (SEARCH_FANOUT * SEARCH_STORIES_PER_SHARD) / storiesPerDay;
const shardHolds = (cap(LIMITS.doStorage) / SEARCH_STORIES_PER_SHARD - story.shard.total) / shardSegment;
const shardSoonest = cap(LIMITS.doStorage) / (perDay * shardSegment);
const storiesFit = Math.floor(cap(LIMITS.doStorage) / (segmentsPerStory * shardSegment + story.shard.total));
console.log(
  `(b) Now: D1 holds everything but search; search in shards of ${SEARCH_STORIES_PER_SHARD.toLocaleString("en")} stories each (SEARCH_STORIES_PER_SHARD).`,
);
console.log(
  `- D1: ${kb(d1Segment)} a segment and ${kb(story.total)} a story: it holds ${big(cap(LIMITS.d1Database) / d1Segment)} segments at ${FILL * 100} % full, and the load fills it in ${days(nowDays)}; every write still waits on its one writer (${((perDay / 86400) * both((o) => o.rows)).toFixed(0)} rows a second);`,
);
console.log(
  `- the shards: the load makes ${shardsMade.toLocaleString("en")} (one every ${days(SEARCH_STORIES_PER_SHARD / storiesPerDay)}), each search asking them all: past ${SEARCH_FANOUT} after ${days(fanoutDays)};`,
);
console.log(
  `- a shard's size is its stories' segments. Assumed: the load's segments spread evenly over its stories, ${big(segmentsPerStory)} a story (segments a day / new stories a day), so a shard holds ${big(segmentsPerStory * SEARCH_STORIES_PER_SHARD)} segments: ${gb(shardBytes)} against a Durable Object's 10 GB. It is ${FILL * 100} % full once its stories average ${big(shardHolds)} segments${shardBytes > cap(LIMITS.doStorage) ? `: at this load every shard overflows, at the soonest (every write in one shard's stories, as in the newest ones) after ${days(shardSoonest)}; ${storiesFit.toLocaleString("en")} stories a shard would fit (past ${SEARCH_FANOUT} shards then after ${days((SEARCH_FANOUT * storiesFit) / storiesPerDay)})` : ", which at this load none reaches"}.`,
);
console.log(
  firstLimit([
    ["D1's 10 GB", nowDays],
    [`a search asking more than ${SEARCH_FANOUT} shards`, fanoutDays],
    [
      `a shard's 10 GB (its ${SEARCH_STORIES_PER_SHARD.toLocaleString("en")} stories past ${big(shardHolds)} segments each)`,
      shardBytes > cap(LIMITS.doStorage) ? shardSoonest : Number.POSITIVE_INFINITY,
    ],
  ]),
);

// (c) The planned step: a story's content in its own storage, the index contentless, D1 a directory.
const part = (place) => both((o) => o.byPlace[place] ?? 0);
const content = part("story");
// The shards' index contentless (its bytes as rebuilt apart, from the same segments) and their copies as measured.
const search = (indexEn.contentless + indexZh.contentless) / 2 + both((o) => o.shard.copies);
const directorySegment = part("directory");
const windowBytes = part("window");
const directoryPerDay = perDay * directorySegment + storiesPerDay * (story.byPlace.directory ?? 0);
const windowHeld = perDay * (windowBytes * KEEP_DAYS.window + part("webhooks") * KEEP_DAYS.webhooks + part("inbox") * KEEP_DAYS.inbox);
const searchTotal = total * search;
const searchShards = Math.ceil(searchTotal / cap(LIMITS.doStorage));
console.log(
  "(c) Per-story storage (the planned step, docs/scale.md): a story's content in its own SQLite Durable Object, search in shards (contentless), D1 a directory.",
);
console.log(
  `- a story's storage: ${kb(content)} a segment (its text, logs, votes and comments), so ${big(cap(LIMITS.doStorage) / content)} segments in one story; one is added with each story, none is shared;`,
);
console.log(
  `- one story's writes: ${Math.round(store.writesPerSecond)} segments a second into its own SQLite Durable Object, measured above (wall time; today's room and D1 batch: ${roomMs.toFixed(1)} ms a segment); the service's rate grows with its stories;`,
);
console.log(
  `- the search shards: ${kb(search)} a segment (the index contentless, and the copies; ${kb(shardSegment)} as stored now), ${gb(searchTotal)} for the load: ${searchShards.toLocaleString("en")} shards at ${FILL * 100} % full (a shard's range set by its bytes: ${Math.floor(cap(LIMITS.doStorage) / (segmentsPerStory * search + story.shard.total)).toLocaleString("en")} stories at the load's mean), each query asking them all in parallel;`,
);
console.log(
  `- D1 (accounts, the story directory, follows…): ${kb(directorySegment)} a segment and ${kb(story.byPlace.directory ?? 0)} a story, ${gb(directoryPerDay * 365 * years)} for the load; full ${directoryPerDay > 0 ? `after ${days(cap(LIMITS.d1Database) / directoryPerDay)}` : "never"};`,
);
console.log(
  `- rows pruned by age: inbox items ${kb(part("inbox"))} a segment, kept ${KEEP_DAYS.inbox} days; the outbox, inbox events and idempotency keys ${kb(windowBytes)}, kept ${KEEP_DAYS.window} day; webhook deliveries ${kb(part("webhooks"))}, kept ${KEEP_DAYS.webhooks} days: ${gb(windowHeld)} held at any time, in the directory's database.`,
);
console.log(
  firstLimit([
    [
      "the directory database's 10 GB (its rows and the rows kept by age)",
      windowHeld >= cap(LIMITS.d1Database) ? 0 : (cap(LIMITS.d1Database) - windowHeld) / directoryPerDay,
    ],
    [`a search asking more than ${SEARCH_FANOUT} shards`, (SEARCH_FANOUT * cap(LIMITS.doStorage)) / (perDay * search)],
    ["one story's 10 GB (only for a story that alone holds that much)", Number.POSITIVE_INFINITY],
  ]).trimEnd(),
);
