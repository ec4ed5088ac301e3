import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export const getDb = (d1: D1Database) => drizzle(d1, { schema });
export type Db = ReturnType<typeof getDb>;

/** True when the error (or one it wraps) is a SQLite UNIQUE violation. */
export function uniqueViolation(err: unknown): string | null {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (/UNIQUE constraint failed/i.test(e.message)) return e.message;
  }
  return null;
}

export const nowIso = () => new Date().toISOString();
