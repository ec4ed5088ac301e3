/** Counts and times D1 round trips: every statement run, and every batch, is one trip to the database. */
export interface D1Meter {
  roundTrips: number;
  ms: number;
}

export const newMeter = (): D1Meter => ({ roundTrips: 0, ms: 0 });

type Observer = (sql: string) => void;
let observer: Observer | null = null;

/** Tests use this to see every SQL statement the app prepares (to EXPLAIN them). */
export function observeQueries(fn: Observer | null) {
  observer = fn;
}

async function timed<T>(meter: D1Meter, run: () => Promise<T>): Promise<T> {
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
    private readonly meter: D1Meter,
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

/** A D1 binding (or session) that reports every round trip to `meter`; drizzle runs on it unchanged. */
export function meteredD1(target: D1Database | D1DatabaseSession, meter: D1Meter): D1Database {
  const wrapper = {
    prepare(query: string) {
      observer?.(query);
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

/** `d1;desc="N round trips";dur=X` and one entry per Durable Object call, for the Server-Timing header. */
export function serverTiming(meter: D1Meter, objects: { name: string; ms: number }[]): string {
  const trips = `${meter.roundTrips} round trip${meter.roundTrips === 1 ? "" : "s"}`;
  return [
    `d1;desc="${trips}";dur=${meter.ms.toFixed(1)}`,
    ...objects.map((o) => `do;desc="${o.name}";dur=${o.ms.toFixed(1)}`),
  ].join(", ");
}
