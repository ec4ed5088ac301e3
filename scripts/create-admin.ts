// Operator script: creates an admin account in the local (default) or remote D1.
//   npm run admin:create -- --username root --email root@example.com --password '...' [--remote]
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { adminInsertSql } from "./admin-sql";

const { values } = parseArgs({
  options: {
    username: { type: "string" },
    email: { type: "string" },
    password: { type: "string" },
    remote: { type: "boolean", default: false },
  },
});
if (!values.username || !values.email || !values.password) {
  console.error("usage: npm run admin:create -- --username NAME --email EMAIL --password PASSWORD [--remote]");
  process.exit(2);
}

const { id, sql } = await adminInsertSql({ username: values.username, email: values.email, password: values.password });
const dir = mkdtempSync(join(tmpdir(), "storyloom-admin-"));
const file = join(dir, "admin.sql");
writeFileSync(file, sql);
try {
  execFileSync("wrangler", ["d1", "execute", "DB", values.remote ? "--remote" : "--local", "--file", file], {
    stdio: "inherit",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  console.log(`admin created: ${id} (${values.email}); log in with POST /api/v1/auth/login`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
