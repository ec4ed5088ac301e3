// `npm run bench:sql [-- --rows 0,100,500 --rounds 7 --writes 300]`: what SQLite alone spends on a segment write's
// statements, against the write ceiling's two (bench/ceiling/statements.js). Under `wrangler dev` the local D1 runs
// inside workerd, so `npm run bench` counts its SQLite work in a write's CPU (in production D1 runs it, outside the
// Worker): this tells that part of the gap from the Worker's own.
//
// The database is the bench's own: `npm run dev` seeded by bench/seed.mjs, its D1 file then opened with node:sqlite.
// The statements are the room's own (`segmentWrite`, as the branch room builds them for a writer with limits, outside
// turn mode, without an Idempotency-Key: what the bench's writes are), each write one transaction as D1 runs a batch.
// `--rows`: how many log entries each writer has in its day before a round (production's daily limit is 100; with the
// bench's limits lifted, each of its 10 writers ends an 11-round phase at ~470-550). Each round starts from the same
// copy, SQLite's page cache warmed by unmeasured writes; CPU is this process's user+system time (node:sqlite runs on
// its thread), so nothing else may run on the machine meanwhile. SQLite as node links it, not workerd's: an estimate.
import { copyFileSync, existsSync, globSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { getDb } from "../src/db/client";
import { segmentWrite, writeValues } from "../src/domain/stories/segment-write";
import type { NewSegment } from "../src/domain/stories/segments";
import { BUMP_COUNTER, CEILING_TABLES, INSERT_ROW } from "./ceiling/statements.js";
import { NO_LIMITS, freePort, median, startDev, words } from "./lib.mjs";
import { seed } from "./seed.mjs";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "0,100,500" },
    rounds: { type: "string", default: "7" },
    writes: { type: "string", default: "300" },
  },
});
const ROUNDS = Number(values.rounds);
const WRITES = Number(values.writes);
const WARM_UP = 50;
const TMP = path.resolve("bench/.tmp/write-sql");
const LIFTED = { perHour: 100_000_000, perDay: 100_000_000, perBranchPerHour: 100_000_000 };
const CONTENT = words(20); // the bench's segment

interface Query {
  sql: string;
  params: unknown[];
}

/** The bench's seeded D1, as a file (a fresh `npm run dev`, seeded through the API, then stopped). */
async function seededDatabase(): Promise<string> {
  rmSync(TMP, { recursive: true, force: true });
  mkdirSync(TMP, { recursive: true });
  const state = path.join(TMP, "state");
  const port = await freePort();
  const server = await startDev(port, state, ["--var", "LOG_REQUESTS:false", ...NO_LIMITS]);
  try {
    await seed(`http://127.0.0.1:${port}/api/v1`);
  } finally {
    server.stop();
    await new Promise((resolve) => (server.child.exitCode !== null ? resolve(null) : server.child.once("exit", resolve)));
  }
  const [file] = globSync(path.join(state, "v3/d1/miniflare-D1DatabaseObject/*.sqlite")).filter((f) => !f.endsWith("metadata.sqlite"));
  const seeded = path.join(TMP, "seeded.sqlite");
  const db = new DatabaseSync(file);
  db.exec(`VACUUM INTO '${seeded}'`); // one file, the WAL folded in
  db.close();
  return seeded;
}

/** Fills each writer's day with `rows` log entries, spread over the last 23 hours. */
function fill(db: DatabaseSync, writers: { id: string; name: string }[], rows: number, story: string, branch: string) {
  const insert = db.prepare(`INSERT INTO logs (id, story_id, branch_id, segment_id, author_id, author_type, author_name,
    content_length, is_continuation, parent_segment_id, created_at) VALUES (?, ?, ?, ?, ?, 'human', ?, 140, 'continuation', NULL, ?)`);
  const now = Date.now();
  db.exec("BEGIN");
  for (const w of writers) {
    for (let i = 0; i < rows; i++) {
      const at = new Date(now - 60_000 - Math.floor((i / Math.max(rows, 1)) * 23 * 3600_000)).toISOString();
      insert.run(crypto.randomUUID(), story, branch, crypto.randomUUID(), w.id, w.name, at);
    }
  }
  db.exec("COMMIT");
}

/** A Drizzle database that is never run: `segmentWrite` only builds its statements here. */
const builder = getDb({ prepare: () => ({ bind: () => ({}) }) } as unknown as D1Database);

class Bench {
  private readonly statements = new Map<string, StatementSync>();
  private readonly heads = new Map<string, { seq: number; id: string }>();
  private n = 0;
  private ceilingN = 0;

  constructor(
    private readonly db: DatabaseSync,
    private readonly writers: { id: string; name: string }[],
    private readonly branches: { id: string; storyId: string }[],
  ) {
    for (const b of branches) {
      const head = db.prepare("SELECT id, sequence_order AS seq FROM segments WHERE branch_id = ? ORDER BY sequence_order DESC LIMIT 1").get(b.id) as {
        id: string;
        seq: number;
      };
      this.heads.set(b.id, head);
    }
    for (const sql of CEILING_TABLES) db.exec(sql);
  }

  private prepared(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  /** The statements of the next segment write, as the room builds them (round-robin over writers and branches). */
  ourWrite(): Query[] {
    const writer = this.writers[this.n % this.writers.length];
    const branch = this.branches[this.n++ % this.branches.length];
    const head = this.heads.get(branch.id)!;
    const now = Date.now();
    const seg: NewSegment = {
      id: crypto.randomUUID(),
      branchId: branch.id,
      storyId: branch.storyId,
      author: { id: writer.id, type: "human", name: writer.name },
      content: CONTENT,
      contentLength: CONTENT.length,
      sequenceOrder: head.seq + 1,
      createdAt: new Date(now).toISOString(),
      parentSegmentId: head.id,
      isStarter: false,
      kind: "continuation",
    };
    this.heads.set(branch.id, { seq: seg.sequenceOrder, id: seg.id });
    const quota = { limits: LIFTED, perBranch: true, now };
    const write = segmentWrite(builder, writeValues(seg, { id: writer.id, type: "human", jti: crypto.randomUUID() }, quota));
    return [...write.statements, write.usage!].map((s) => s.getQuery() as Query);
  }

  ceilingWrite(): Query[] {
    const branch = `branch-${this.ceilingN++ % 40}`;
    return [
      { sql: INSERT_ROW, params: [crypto.randomUUID(), branch, CONTENT] },
      { sql: BUMP_COUNTER, params: [branch] },
    ];
  }

  /**
   * CPU µs per write over `count` writes, each one transaction. With `parts`, µs per statement (and the COMMIT) are
   * added there instead, and the total is not a measure (timing each statement costs the clock's own calls).
   */
  run(make: () => Query[], count: number, parts?: number[]): number {
    let total = 0;
    for (let i = 0; i < count; i++) {
      const queries = make(); // built outside the measure: SQLite's work only
      const started = cpuUs();
      this.db.exec("BEGIN");
      queries.forEach((q, k) => {
        const t = cpuUs();
        const s = this.prepared(q.sql);
        if (/^\s*select/i.test(q.sql)) s.all(...(q.params as never[]));
        else if (s.run(...(q.params as never[])).changes !== 1) throw new Error(`nothing written: ${q.sql.slice(0, 60)}`);
        if (parts) parts[k] = (parts[k] ?? 0) + cpuUs() - t;
      });
      const t = cpuUs();
      this.db.exec("COMMIT");
      if (parts) parts[queries.length] = (parts[queries.length] ?? 0) + cpuUs() - t;
      total += cpuUs() - started;
    }
    return total / count;
  }
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

const LABELS = ["guarded segment INSERT", "log INSERT", "branch counter UPDATE", "story counter UPDATE", "search index INSERT", "usage read", "COMMIT"];

async function main() {
  const seeded = await seededDatabase();
  const source = new DatabaseSync(seeded);
  const writers = source.prepare("SELECT id, username AS name FROM users WHERE username GLOB 'w[0-9]' ORDER BY username").all() as {
    id: string;
    name: string;
  }[];
  // The bench's 40 targets: every seeded story's main line but the hot story's (Bench story 0) and the turns story.
  const branches = source
    .prepare(`SELECT b.id, b.story_id AS storyId FROM branches b JOIN stories s ON s.id = b.story_id
      WHERE b.is_main = 1 AND s.title GLOB 'Bench story [0-9]*' AND s.title != 'Bench story 0' ORDER BY s.title`)
    .all() as { id: string; storyId: string }[];
  source.close();
  if (writers.length !== 10 || branches.length !== 40) throw new Error(`seeded data not as expected: ${writers.length} writers, ${branches.length} branches`);

  console.log(`\n## SQLite's share of a write (node:sqlite, ${ROUNDS} rounds of ${WRITES} writes a side, ${new Date().toISOString()})\n`);
  console.log(`| writer's log rows in its day | segment write µs | ceiling µs | difference µs | per statement µs (${LABELS.join(", ")}) |`);
  console.log("|---|---|---|---|---|");
  for (const rows of values.rows.split(",").map(Number)) {
    const filled = path.join(TMP, `filled-${rows}.sqlite`);
    copyFileSync(seeded, filled);
    const db = new DatabaseSync(filled);
    fill(db, writers, rows, branches[0].storyId, branches[0].id);
    db.close();
    const ours: number[] = [];
    const ceiling: number[] = [];
    const parts: number[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const file = path.join(TMP, "round.sqlite");
      for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) rmSync(f);
      copyFileSync(filled, file);
      const round = new DatabaseSync(file);
      round.exec("PRAGMA journal_mode = WAL");
      const bench = new Bench(round, writers, branches);
      // Unmeasured: SQLite's page cache warmed, as the local D1's is in a running `wrangler dev`.
      bench.run(() => bench.ourWrite(), WARM_UP);
      bench.run(() => bench.ceilingWrite(), WARM_UP);
      const roundParts: number[] = [];
      // A/B, then B/A the next round, so a drift in the machine moves both sides alike; then a pass per statement.
      const sides = [() => ours.push(bench.run(() => bench.ourWrite(), WRITES)), () => ceiling.push(bench.run(() => bench.ceilingWrite(), WRITES))];
      for (const side of r % 2 ? sides.reverse() : sides) side();
      bench.run(() => bench.ourWrite(), WRITES, roundParts);
      parts.push(roundParts.map((us) => us / WRITES));
      round.close();
    }
    const perStatement = LABELS.map((_, k) => median(parts.map((p) => p[k])).toFixed(0)).join(" / ");
    const diff = median(ours.map((o, i) => o - ceiling[i]));
    console.log(`| ${rows} | ${median(ours).toFixed(0)} | ${median(ceiling).toFixed(0)} | ${diff.toFixed(0)} | ${perStatement} |`);
  }
}

await main();
