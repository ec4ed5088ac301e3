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
