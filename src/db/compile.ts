import { SQL, StringChunk } from "drizzle-orm";

/** A query as D1 takes it: its text with `?` for each parameter, and the parameters in order. */
export interface CompiledQuery {
  sql: string;
  params: unknown[];
}

/**
 * Compiles a query made only of SQL text and plain values (what our raw `sql` templates hold: strings, nested `sql`
 * fragments, `sql.raw`, `sql.join`, and strings, numbers, booleans and nulls as parameters) into D1's text and
 * parameters; null as soon as it meets anything else (a column, a table, a `Param` with an encoder, an array, an
 * inlined fragment), which Drizzle's own builder then compiles.
 *
 * Why: Drizzle's builder asks up to a dozen `is(chunk, Entity)` questions of every chunk (each a prototype walk
 * when it fails) and merges a new `{sql, params}` object per chunk; on a segment write's batch that was ~0.3 ms of
 * CPU and much of its garbage (bench/PROFILE.md). The text and parameters are the same Drizzle makes: a unit test
 * compares the two over the hot statements (test/unit/compile.test.ts).
 */
export function compileSimple(query: SQL): CompiledQuery | null {
  const params: unknown[] = [];
  // The pieces joined once at the end: one flat string, where `+=` would make a rope of a node per piece.
  const pieces: string[] = [];
  const walk = (sql: SQL): boolean => {
    if ((sql as unknown as { shouldInlineParams: boolean }).shouldInlineParams) return false;
    for (const chunk of sql.queryChunks as unknown[]) {
      if (chunk instanceof StringChunk) {
        for (const piece of chunk.value) pieces.push(piece);
      } else if (chunk instanceof SQL) {
        if (!walk(chunk)) return false;
      } else if (chunk === null || (typeof chunk !== "object" && typeof chunk !== "function")) {
        if (chunk === undefined) continue; // Drizzle writes nothing for it
        pieces.push("?");
        params.push(chunk);
      } else return false;
    }
    return true;
  };
  return walk(query) ? { sql: pieces.join(""), params } : null;
}

/**
 * Has a Drizzle database's dialect compile simple queries with `compileSimple` (the rest as before): every query
 * Drizzle runs or batches goes through `dialect.sqlToQuery`.
 */
export function withSimpleCompiler<D extends object>(db: D): D {
  const dialect = (db as unknown as { dialect: { sqlToQuery(query: SQL, invokeSource?: unknown): CompiledQuery } }).dialect;
  const drizzleCompile = dialect.sqlToQuery.bind(dialect);
  dialect.sqlToQuery = (query, invokeSource) => compileSimple(query) ?? drizzleCompile(query, invokeSource);
  return db;
}
