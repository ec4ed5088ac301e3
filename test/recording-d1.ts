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
