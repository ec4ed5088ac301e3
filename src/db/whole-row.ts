import { Column, getTableColumns, getTableName, type InferSelectModel, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { type Db, rawAll } from "./client";

/**
 * A whole table row in raw SQL, as Drizzle's `select().from(table)` answers it: the columns as `alias."name" AS "key"`
 * (their text built once per table, not per query) and the row decoded by each column's own rule (booleans, JSON).
 *
 * Why: Drizzle's builder compiles a table's every column on every query (an `is()` walk per chunk); on MCP's
 * read_branch that was most of the request's Drizzle time (bench/PROFILE.md). Raw text goes through `compileSimple`.
 */
export class WholeRow<T extends SQLiteTable> {
  readonly columns: SQL;
  private readonly decoded: [string, Column][];

  constructor(table: T, alias: string) {
    const entries = Object.entries(getTableColumns(table)) as [string, Column][];
    this.columns = sql.raw(entries.map(([key, c]) => `${alias}."${c.name}" AS "${key}"`).join(", "));
    // Only the columns whose rule is not the identity (Drizzle's base Column maps values as they come).
    this.decoded = entries.filter(([, c]) => c.mapFromDriverValue !== Column.prototype.mapFromDriverValue);
  }

  /** Rows selected with `columns`, decoded in place (null stays null, as in Drizzle). */
  decode = (row: Record<string, unknown>): InferSelectModel<T> => {
    for (const [key, column] of this.decoded) {
      const value = row[key];
      if (value !== null && value !== undefined) row[key] = column.mapFromDriverValue(value);
    }
    return row as InferSelectModel<T>;
  };

  /** `SELECT columns FROM … rest` (`rest` names the table with this alias): usable inside `db.batch()`. */
  query(db: Db, from: SQL) {
    return rawAll<Record<string, unknown>>(db, sql`SELECT ${this.columns} ${from}`);
  }
}

/**
 * `SELECT <the row's values, in the table's column order> WHERE <condition>`, for `db.insert(table).select(…)`: an
 * INSERT that writes the row only while `condition` holds (each value bound as `insert().values()` binds it). The row
 * must be whole, every column given (null where that is meant): nothing here applies a column's default as
 * `.values()` does, so a column left out is refused (thrown) rather than bound as null.
 */
export function rowWhere<T extends SQLiteTable>(table: T, row: InferSelectModel<T>, condition: SQL): SQL {
  const values = Object.entries(getTableColumns(table)).map(([key, column]) => {
    const value = (row as Record<string, unknown>)[key];
    if (value === undefined) throw new Error(`rowWhere: no value for ${getTableName(table)}.${column.name} (a whole row is required)`);
    return sql.param(value, column);
  });
  return sql`SELECT ${sql.join(values, sql`, `)} WHERE ${condition}`;
}
