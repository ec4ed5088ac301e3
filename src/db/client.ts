import { type SQL, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { withSimpleCompiler } from "./compile";

/**
 * Drizzle on a D1 database or session. Without a schema: relational queries (`db.query`) are not used, and
 * extracting their config from the schema cost every request ~0.2 ms of CPU (bench/PROFILE.md). Raw SQL is
 * compiled by `compileSimple` (src/db/compile.ts).
 */
export const getDb = (d1: D1Database) => withSimpleCompiler(drizzle(d1));
export type Db = ReturnType<typeof getDb>;

/** The first row of a query (with `LIMIT 1`), or undefined. */
export const first = async <T>(query: { limit(n: number): PromiseLike<T[]> }): Promise<T | undefined> => (await query.limit(1))[0];

/** True when the error (or one it wraps) is a SQLite UNIQUE violation. */
export function uniqueViolation(err: unknown): string | null {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (/UNIQUE constraint failed/i.test(e.message)) return e.message;
  }
  return null;
}

export const nowIso = () => new Date().toISOString();

/**
 * A statement that aborts the batch it is in (D1 runs a batch as one transaction) unless `condition` holds, so nothing
 * of the batch is written. SQLite has no RAISE outside triggers: `json()` of text that is not JSON is the error.
 */
export const abortUnless = (condition: SQL, why: string): SQL => sql`SELECT CASE WHEN ${condition} THEN 1 ELSE json(${why}) END AS ok`;

/**
 * Raw queries usable inside `db.batch()`. Drizzle's raw query has no prepared statement of its own and its
 * D1 batch dereferences one whenever the query has parameters, so we attach one here, prepared when a batch
 * first asks for it (a raw query run alone never needs it). Its text is built once: the batch builds it again
 * otherwise, and building a SQL text from its fragments is most of what a raw query costs in Drizzle.
 */
function batchable<T extends { getQuery(): { sql: string } }>(db: Db, raw: T): T {
  const build = raw.getQuery.bind(raw);
  let built: ReturnType<T["getQuery"]> | undefined;
  raw.getQuery = () => (built ??= build() as ReturnType<T["getQuery"]>);
  let stmt: D1PreparedStatement | undefined;
  return Object.defineProperty(raw, "stmt", { get: () => (stmt ??= db.$client.prepare(raw.getQuery().sql)) });
}

export const rawRun = (db: Db, query: SQL) => batchable(db, db.run(query));
export const rawAll = <T>(db: Db, query: SQL) => batchable(db, db.all<T>(query));

/** A raw query as a prepared statement of the database's own binding (a prelude puts it in a trip as it is). */
export function statementOf(db: Db, query: SQL): D1PreparedStatement {
  const built = rawAll(db, query).getQuery();
  return db.$client.prepare(built.sql).bind(...built.params);
}

/**
 * A read as the statements of a batch and what to make of their results, so reads that each take one round trip
 * can share one (`oneTrip`) instead of taking one each.
 */
export interface Read<T> {
  statements: unknown[];
  shape(results: unknown[]): T;
}

/** A read from its statements (queries usable in `db.batch()`) and a shape that gets each one's awaited result. */
export const readOf = <const S extends readonly unknown[], T>(statements: S, shape: (results: { [K in keyof S]: Awaited<S[K]> }) => T): Read<T> => ({
  statements: [...statements],
  shape: (results) => shape(results as unknown as { [K in keyof S]: Awaited<S[K]> }),
});

/** Runs reads in one D1 batch (one round trip) and shapes each from its own statements' results, in order. */
export async function oneTrip<T extends unknown[]>(db: Db, ...reads: { [K in keyof T]: Read<T[K]> }): Promise<T> {
  const statements = reads.flatMap((r: Read<unknown>) => r.statements);
  const results = (await db.batch(statements as unknown as Parameters<Db["batch"]>[0])) as unknown as unknown[];
  const shaped: unknown[] = [];
  let next = 0;
  for (const read of reads as Read<unknown>[]) {
    shaped.push(read.shape(results.slice(next, next + read.statements.length)));
    next += read.statements.length;
  }
  return shaped as T;
}

/** Runs one read (its own round trip). */
export const runRead = async <T>(db: Db, read: Read<T>): Promise<T> => (await oneTrip<[T]>(db, read))[0];
