/** What a wrapped D1 does beside the real one: told of each statement prepared, and running each batch. */
interface D1Hooks {
  prepare?: (sql: string) => void;
  batch?: <T>(run: () => Promise<T>) => Promise<T>;
}

/**
 * A D1 binding that passes everything through to the real database, on it and on its sessions (the app opens its
 * D1 session from the binding it is given, call()'s `env`), with `hooks` around prepare and batch.
 */
function hookedD1(db: D1Database, hooks: D1Hooks): D1Database {
  const prepared = (inner: { prepare(query: string): D1PreparedStatement }) => (query: string) => {
    hooks.prepare?.(query);
    return inner.prepare(query);
  };
  const batched =
    (inner: { batch<T>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> }) =>
    <T>(statements: D1PreparedStatement[]) =>
      hooks.batch ? hooks.batch(() => inner.batch<T>(statements)) : inner.batch<T>(statements);
  return {
    prepare: prepared(db),
    batch: batched(db),
    exec: (query: string) => db.exec(query),
    withSession(constraintOrBookmark?: string) {
      const inner = db.withSession(constraintOrBookmark);
      return { prepare: prepared(inner), batch: batched(inner), getBookmark: () => inner.getBookmark() };
    },
    dump: () => db.dump(),
  };
}

/** A D1 binding that tells `record` the SQL of every statement prepared on it or on its sessions: it sees every query a request makes. */
export const recordingD1 = (db: D1Database, record: (sql: string) => void): D1Database => hookedD1(db, { prepare: record });

/** A D1 binding whose batches, on it and on its sessions, wait until `open` settles: a request caught while it reads. */
export const heldD1 = (db: D1Database, open: Promise<void>): D1Database => hookedD1(db, { batch: (run) => open.then(run) });

/** EXPLAIN QUERY PLAN's steps of a recorded statement (its parameters bound as nulls). */
export async function planOf(db: D1Database, q: string): Promise<string[]> {
  const params = (q.match(/\?/g) ?? []).map(() => null);
  const plan = await db
    .prepare(`EXPLAIN QUERY PLAN ${q}`)
    .bind(...params)
    .all<{ detail: string }>();
  return plan.results.map((r) => r.detail);
}

const reads = (q: string) => /^\s*(select|with|update|delete|insert into \S+ .*select)/is.test(q);
const shown = (detail: string, q: string) => `${detail}  ←  ${q.replace(/\s+/g, " ").slice(0, 160)}`;

/**
 * The plan steps that scan one of `tables` with no index (`SCAN t`, not `SCAN t USING … INDEX`; for a full-text
 * index, a scan with neither a MATCH nor a rowid: `SCAN t VIRTUAL TABLE INDEX 0:`), each with the statement that made
 * it: EXPLAIN QUERY PLAN of every recorded statement that reads.
 */
export async function unindexedScans(db: D1Database, statements: Iterable<string>, tables: readonly string[]): Promise<string[]> {
  const scans: string[] = [];
  for (const q of statements) {
    if (!reads(q)) continue;
    for (const detail of await planOf(db, q)) {
      const m = /^SCAN (\w+)(?: AS \w+)?$/.exec(detail) ?? /^SCAN (\w+) VIRTUAL TABLE INDEX \d+:[^M=]*$/.exec(detail);
      if (m && tables.includes(m[1])) scans.push(shown(detail, q));
    }
  }
  return scans;
}

/** The plan steps that sort rows in memory (`USE TEMP B-TREE FOR ORDER BY`) for the recorded statements `which` picks. */
export async function sortsInMemory(db: D1Database, statements: Iterable<string>, which: (q: string) => boolean): Promise<string[]> {
  const sorts: string[] = [];
  for (const q of statements) {
    if (!reads(q) || !which(q)) continue;
    for (const detail of await planOf(db, q)) if (detail.includes("TEMP B-TREE FOR ORDER BY")) sorts.push(shown(detail, q));
  }
  return sorts;
}
