/**
 * A D1 binding that tells `record` the SQL of every statement prepared on it or on its sessions, and passes
 * everything through to the real database. Given to the app as its DB binding for a request (call()'s `env`),
 * it sees every query the request makes, since the app opens its D1 session from that binding.
 */
export function recordingD1(db: D1Database, record: (sql: string) => void): D1Database {
  const session = (inner: D1DatabaseSession): D1DatabaseSession => ({
    prepare(query: string) {
      record(query);
      return inner.prepare(query);
    },
    batch: <T>(statements: D1PreparedStatement[]) => inner.batch<T>(statements),
    getBookmark: () => inner.getBookmark(),
  });
  return {
    prepare(query: string) {
      record(query);
      return db.prepare(query);
    },
    batch: <T>(statements: D1PreparedStatement[]) => db.batch<T>(statements),
    exec: (query: string) => db.exec(query),
    withSession: (constraintOrBookmark?: string) => session(db.withSession(constraintOrBookmark)),
    dump: () => db.dump(),
  };
}

/** EXPLAIN QUERY PLAN's steps of a recorded statement (its parameters bound as nulls). */
async function planOf(db: D1Database, q: string): Promise<string[]> {
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
