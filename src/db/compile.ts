import { Placeholder, SQL, StringChunk, sql as sqlTag } from "drizzle-orm";

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
export function compileSimple(query: SQL, placeholders = false): CompiledQuery | null {
  if (query instanceof CompiledSql) return query.compiled;
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
      } else if (placeholders && chunk instanceof Placeholder) {
        pieces.push("?");
        params.push(chunk);
      } else return false;
    }
    return true;
  };
  return walk(query) ? { sql: pieces.join(""), params } : null;
}

/** A statement compiled ahead (`prepared`): `compileSimple` hands back its text and this call's parameters. */
class CompiledSql extends SQL {
  constructor(readonly compiled: CompiledQuery) {
    super([]);
  }
}

/**
 * A raw statement whose text is compiled once, the first time it is made, and only bound afterwards (what Drizzle's
 * `.prepare()` does for its query builder, for our raw `sql`): `build` is called once, with a placeholder in place of
 * each value, so it must only splice its values into `sql` (never test them, compute with them or `sql.raw` them),
 * and must be made of what `compileSimple` compiles. Each call then gives a query of that text with its own values.
 * Why: building a statement's fragments and walking them was most of a hot read's Drizzle time and garbage (~15 KB
 * per uncached page of segments, bench/PROFILE.md). A unit test holds each prepared statement to the query `build`
 * makes with the values themselves (test/unit/compile.test.ts).
 */
export function prepared<V extends Record<string, unknown>>(build: (values: V) => SQL): (values: V) => SQL {
  let compiled: CompiledQuery | undefined;
  return (values) => {
    compiled ??= compileOnce(build);
    const params = compiled.params.map((p) => (p instanceof Placeholder ? values[p.name as keyof V] : p));
    return new CompiledSql({ sql: compiled.sql, params });
  };
}

/**
 * `prepared` for a statement whose text also depends on a few choices (`shape`): compiled once per shape, `key`
 * naming it (a shape's key must tell apart every text its shape can build).
 */
export function preparedByShape<S, V extends Record<string, unknown>>(key: (shape: S) => string, build: (values: V, shape: S) => SQL) {
  const shapes = new Map<string, (values: V) => SQL>();
  return (values: V, shape: S): SQL => {
    const k = key(shape);
    let statement = shapes.get(k);
    if (!statement) {
      statement = prepared((v: V) => build(v, shape));
      shapes.set(k, statement);
    }
    return statement(values);
  };
}

function compileOnce<V>(build: (values: V) => SQL): CompiledQuery {
  const placeholders = new Proxy({}, { get: (_, name) => (typeof name === "string" ? sqlTag.placeholder(name) : undefined) }) as V;
  const compiled = compileSimple(build(placeholders), true);
  if (!compiled) throw new Error("prepared: a statement must be plain SQL text and values");
  return compiled;
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
