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

type Target = D1Database | D1DatabaseSession;

/**
 * A D1 binding (or session) that counts every round trip in `meter`; drizzle runs on it unchanged. `target` may be
 * a function that opens it on first use, so a request that never reaches D1 (a micro-cache hit) opens nothing.
 */
export function meteredD1(target: Target | (() => Target), meter: D1Counter): D1Database {
  let opened: Target | null = typeof target === "function" ? null : target;
  const d1 = () => (opened ??= (target as () => Target)());
  const wrapper = {
    prepare(query: string) {
      return new MeteredStatement(d1().prepare(query), meter);
    },
    batch(statements: unknown[]) {
      return timed(meter, () => d1().batch(statements.map(unwrap)));
    },
    exec(query: string) {
      const t = d1();
      if (!("exec" in t)) throw new Error("exec is not available on a D1 session");
      return timed(meter, () => t.exec(query));
    },
    withSession(constraint?: string) {
      const t = d1();
      if (!("withSession" in t)) throw new Error("already a session");
      return t.withSession(constraint);
    },
  };
  return wrapper as unknown as D1Database;
}
