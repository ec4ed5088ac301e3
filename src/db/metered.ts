/** Counts and times D1 round trips: every statement run, and every batch, is one trip to the database. */
import { apiErrorIn } from "../lib/errors";
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

/**
 * Statements that ride at the front of the request's first round trip (the account's standing), and
 * what to do with their results before the caller sees anything of that trip.
 */
export interface Prelude {
  /** The statements to put first; `write` says the trip writes (they must then abort it for a refused account). */
  statements(write: boolean): unknown[];
  /** Their results: throws to refuse the request (the trip's own results are then never seen). */
  check(results: D1Result[]): void;
  /**
   * The trip failed (a guard aborted it, or anything else): run the prelude another way (`direct` runs a batch
   * outside the prelude's wait), then the trip's error is rethrown unless this throws its own.
   */
  failed(err: unknown, direct: (statements: unknown[]) => Promise<D1Result[]>): Promise<void>;
}

/**
 * A read that rides behind a prelude in the same trip (the unread count a signed-in page's header shows):
 * one statement, and what to do with its result once the prelude's verdict let the trip through.
 */
export interface Rider {
  statement: unknown;
  read(result: D1Result): void;
}

/** The prelude with a rider after its own statements; the rider's result is read after the prelude's check passed. */
export function withRider(prelude: Prelude, rider: Rider): Prelude {
  let own = 0;
  return {
    statements: (write) => {
      const front = prelude.statements(write);
      own = front.length;
      return [...front, rider.statement];
    },
    check: (results) => {
      prelude.check(results.slice(0, own));
      rider.read(results[own]);
    },
    failed: (err, direct) => prelude.failed(err, direct),
  };
}

/** A statement that may write: anything but a plain SELECT (or a WITH … SELECT). When unsure, a write. */
export function writes(query: string): boolean {
  const q = query.trimStart().slice(0, 6).toLowerCase();
  if (q === "select") return false;
  return !(q.startsWith("with") && !/\b(insert|update|delete|replace)\b/i.test(query));
}

/** drizzle's own mapping of D1's row objects to arrays (what `raw()` returns), for a statement run inside a batch. */
const rawRows = (results: Record<string, unknown>[]) => results.map((row) => Object.keys(row).map((k) => row[k]));

type Trip = <R>(statements: MeteredStatement[], shape: (results: D1Result[]) => R, single?: () => Promise<R>) => Promise<R>;

class MeteredStatement {
  constructor(
    readonly inner: D1PreparedStatement,
    readonly query: string,
    private readonly trip: Trip,
  ) {}

  bind(...values: unknown[]) {
    return new MeteredStatement(this.inner.bind(...values), this.query, this.trip);
  }

  first<T>(column?: string) {
    return this.trip(
      [this],
      ([r]) => {
        const row = (r.results[0] ?? null) as Record<string, unknown> | null;
        return (column === undefined ? row : (row?.[column] ?? null)) as T | null;
      },
      () => (column === undefined ? this.inner.first<T>() : this.inner.first<T>(column)),
    );
  }

  all<T>() {
    return this.trip(
      [this],
      ([r]) => r as D1Result<T>,
      () => this.inner.all<T>(),
    );
  }

  run<T>() {
    return this.trip(
      [this],
      ([r]) => r as D1Result<T>,
      () => this.inner.run<T>(),
    );
  }

  raw<T>(options?: { columnNames?: boolean }) {
    return this.trip(
      [this],
      ([r]) => rawRows(r.results as Record<string, unknown>[]) as never,
      () => this.inner.raw<T>(options as { columnNames: true }),
    );
  }
}

const unwrap = (s: unknown) => (s instanceof MeteredStatement ? s.inner : (s as D1PreparedStatement));
const queryOf = (s: unknown) => (s instanceof MeteredStatement ? s.query : "");

type Target = D1Database | D1DatabaseSession;

const PRELUDE = Symbol("prelude");
const SETTLE = Symbol("settle");

/**
 * A D1 binding (or session) that counts every round trip in `meter`; drizzle runs on it unchanged. `target` may be
 * a function that opens it on first use, so a request that never reaches D1 (a micro-cache hit) opens nothing.
 *
 * A prelude (`setPrelude`) rides in the first trip: a single statement becomes a batch behind it, a batch gets it
 * in front. Trips started while that one is in flight wait for its verdict, so no data reaches a caller, and
 * nothing is written, before the prelude has been checked.
 */
export function meteredD1(target: Target | (() => Target), meter: D1Counter): D1Database {
  let opened: Target | null = typeof target === "function" ? null : target;
  const d1 = () => (opened ??= (target as () => Target)());
  let pending: Prelude | null = null;
  let verdict: Promise<void> | null = null;

  const batchOf = (statements: unknown[]) => timed(meter, () => d1().batch(statements.map(unwrap)));

  /** Runs the trip with the prelude in front; `settle` gets the prelude's own outcome (not the statements' errors). */
  async function withPrelude<R>(prelude: Prelude, statements: unknown[], shape: (results: D1Result[]) => R, settle: (err?: unknown) => void): Promise<R> {
    const front = prelude.statements(statements.some((s) => writes(queryOf(s))));
    let results: D1Result[];
    try {
      results = await batchOf([...front, ...statements]);
    } catch (err) {
      try {
        await prelude.failed(err, batchOf);
      } catch (refusal) {
        settle(refusal);
        throw refusal;
      }
      settle();
      throw err;
    }
    try {
      prelude.check(results.slice(0, front.length));
    } catch (refusal) {
      settle(refusal);
      throw refusal;
    }
    settle();
    return shape(results.slice(front.length));
  }

  const trip: Trip = async (statements, shape, single) => {
    if (pending) {
      const prelude = pending;
      pending = null;
      let settle: (err?: unknown) => void = () => undefined;
      verdict = new Promise<void>((resolve, reject) => {
        settle = (err) => (err === undefined ? resolve() : reject(err));
      });
      verdict.catch(() => undefined); // awaited by later trips; never an unhandled rejection
      return withPrelude(prelude, statements, shape, settle);
    }
    if (verdict) await verdict; // a refusal refuses every later trip of the request
    return single ? timed(meter, single) : shape(await batchOf(statements));
  };

  const wrapper = {
    prepare(query: string) {
      return new MeteredStatement(d1().prepare(query), query, trip);
    },
    batch(statements: unknown[]) {
      return trip(statements as MeteredStatement[], (results) => results);
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
    [PRELUDE]: (prelude: Prelude | null) => {
      pending = prelude;
    },
    [SETTLE]: async () => {
      if (pending) await trip([], () => undefined);
      else if (verdict) await verdict;
    },
  };
  return wrapper as unknown as D1Database;
}

/** Puts a prelude in front of the next round trip of a metered D1 (`db.$client`); false for any other binding. */
export function setPrelude(d1: D1Database, prelude: Prelude | null): boolean {
  const set = (d1 as unknown as { [PRELUDE]?: (p: Prelude | null) => void })[PRELUDE];
  set?.(prelude);
  return !!set;
}

/**
 * The prelude's verdict now, for a request whose answer needs no D1 trip of its own (a replayed answer, a long
 * poll in a room): a prelude no trip has carried yet runs alone (one trip); one already run is awaited (none).
 * Throws its refusal. Nothing for any other binding, or when no prelude was set.
 */
export async function flushPrelude(d1: D1Database): Promise<void> {
  await (d1 as unknown as { [SETTLE]?: () => Promise<void> })[SETTLE]?.();
}

/**
 * The error a failed request answers with: the caller's own refusal (401, 403) when its standing was
 * still unsettled and refuses, else `err`. A JWT's standing rides in the request's first D1 trip, and a request
 * refused before making one (the branch room's `NOT_YOUR_TURN` from its memory, the account gate's 429 or 422)
 * would otherwise answer a logged-out or suspended caller as if it stood well. Costs one read, on such an error
 * path only (none for a key or token, read with its look-up, or once the standing is known); a failure of that read
 * leaves `err` as it was. The doors' error paths call it: REST's `onError`, MCP's tool and prompt failures.
 */
export async function refusalFirst(d1: D1Database | undefined, err: unknown): Promise<unknown> {
  if (!d1) return err;
  try {
    await flushPrelude(d1);
  } catch (refusal) {
    return apiErrorIn(refusal) ?? err;
  }
  return err;
}
