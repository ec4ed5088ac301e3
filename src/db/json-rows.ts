import { type SQL, sql } from "drizzle-orm";

/** How a column goes into JSON: as it is (text, integer, null), SQLite's 0/1 as false/true, or JSON text as its value. */
type JsonKind = "value" | "boolean" | "json";

const pair = (key: string, kind: JsonKind) =>
  `'${key}', ${kind === "boolean" ? `CASE WHEN r.${key} THEN json('true') ELSE json('false') END` : kind === "json" ? `json(r.${key})` : `r.${key}`}`;

/**
 * A list read whose rows SQLite writes as one JSON array (`json_group_array(json_object(…))`): D1 then hands the
 * Worker one value instead of rows of columns, and the Worker neither builds an object per row nor serializes them.
 * Why: an uncached page then costs ×0.93–0.95 of the CPU it did as rows (`npm run bench:ab`, docs/decisions.md).
 * SQLite's JSON strings are byte for byte JSON.stringify's (test/unit/json-rows.test.ts). Its reals are not: `1.0` where JavaScript writes `1`, and 15 significant digits
 * where JavaScript may write 17; the one real column in these lists (`coherence_score`) is never written (null).
 * D1 refuses a value over 2,000,000 bytes: a list whose rows are not bounded must check its size (`listSegments`).
 *
 * `fields` names the answer's keys in order, each a column of the inner select (aliased `r`); `order` repeats the
 * inner select's ORDER BY on `r` (the aggregate's own order: SQLite promises none from a subquery's).
 */
export function jsonRows<T>(fields: { [K in keyof T]-?: JsonKind }) {
  const pairs = Object.entries<JsonKind>(fields)
    .map(([key, kind]) => pair(key, kind))
    .join(", ");
  return (rows: SQL, order: string): SQL => sql`(SELECT json_group_array(json_object(${sql.raw(pairs)}) ORDER BY ${sql.raw(order)}) FROM (${rows}) r)`;
}
