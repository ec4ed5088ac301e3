/** Counts and times D1 round trips: every statement run, and every batch, is one trip to the database. */
import type { D1Counter } from "../lib/meter";

async function timed<T>(meter: D1Counter, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await run();
  } finally {
    meter.roundTrips++;
    meter.ms += performance.now() - started;
  }
}

class MeteredStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    private readonly meter: D1Counter,
  ) {}

  bind(...values: unknown[]) {
    return new MeteredStatement(this.inner.bind(...values), this.meter);
  }

  first<T>(column?: string) {
    return timed(this.meter, () => (column === undefined ? this.inner.first<T>() : this.inner.first<T>(column)));
  }

  all<T>() {
    return timed(this.meter, () => this.inner.all<T>());
  }

  run<T>() {
    return timed(this.meter, () => this.inner.run<T>());
  }

  raw<T>(options?: { columnNames?: boolean }) {
    return timed(this.meter, () => this.inner.raw<T>(options as { columnNames: true }));
  }
}

const unwrap = (s: unknown) => (s instanceof MeteredStatement ? s.inner : (s as D1PreparedStatement));

/** A D1 binding (or session) that counts every round trip in `meter`; drizzle runs on it unchanged. */
export function meteredD1(target: D1Database | D1DatabaseSession, meter: D1Counter): D1Database {
  const wrapper = {
    prepare(query: string) {
      return new MeteredStatement(target.prepare(query), meter);
    },
    batch(statements: unknown[]) {
      return timed(meter, () => target.batch(statements.map(unwrap)));
    },
    exec(query: string) {
      if (!("exec" in target)) throw new Error("exec is not available on a D1 session");
      return timed(meter, () => target.exec(query));
    },
    withSession(constraint?: string) {
      if (!("withSession" in target)) throw new Error("already a session");
      return target.withSession(constraint);
    },
  };
  return wrapper as unknown as D1Database;
}
