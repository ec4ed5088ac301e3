// The write ceiling's SQL (bench/ceiling/worker.js), also what `npm run bench:sql` runs beside a segment write's own
// statements: its tables, and its write, one D1 batch of two statements (insert a row, bump a counter).
export const CEILING_TABLES = [
  "CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, branch TEXT NOT NULL, body TEXT NOT NULL)",
  "CREATE TABLE IF NOT EXISTS counters (branch TEXT PRIMARY KEY, n INTEGER NOT NULL)",
];
/** Binds (id, branch, body). */
export const INSERT_ROW = "INSERT INTO rows (id, branch, body) VALUES (?, ?, ?)";
/** Binds (branch). */
export const BUMP_COUNTER = "INSERT INTO counters (branch, n) VALUES (?, 1) ON CONFLICT (branch) DO UPDATE SET n = n + 1";
