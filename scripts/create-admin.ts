// Operator script: creates an admin account in the local (default) or remote D1.
//   npm run admin:create -- --username root --email root@example.com --password '...' [--persist-to DIR | --remote]
// `--persist-to DIR` is the local database `npm run dev -- --persist-to DIR` migrated and serves. A bad option or a
// refusal (wrangler's or ours) is one line on stderr and a non-zero exit, never a stack trace.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { adminInsertSql } from "./admin-sql";

const USAGE = "usage: npm run admin:create -- --username NAME --email EMAIL --password PASSWORD [--persist-to DIR | --remote]";

function fail(message: string, status = 2): never {
  console.error(`admin:create: ${message}`);
  process.exit(status);
}

function options() {
  try {
    const { values } = parseArgs({
      options: {
        username: { type: "string" },
        email: { type: "string" },
        password: { type: "string" },
        remote: { type: "boolean", default: false },
        "persist-to": { type: "string" },
      },
    });
    return values;
  } catch (err) {
    // node's message, up to its advice about positionals (this script takes none)
    return fail(`${(err as Error).message.split(". ")[0]}; ${USAGE}`);
  }
}

/** Wrangler's own one-line reason (its `--json` error), else the last line it printed. */
function reasonOf(result: ReturnType<typeof spawnSync<string>>): string {
  try {
    const text = (JSON.parse(result.stdout) as { error?: { text?: string } }).error?.text;
    if (text) return text;
  } catch {}
  const lines = `${result.stderr ?? ""}\n${result.stdout ?? ""}`.split("\n").filter((line) => line.trim());
  return lines.at(-1)?.trim() ?? (result.error?.message || `exit ${result.status}`);
}

const values = options();
if (!values.username || !values.email || !values.password) fail(USAGE);
if (values.remote && values["persist-to"] !== undefined) fail(`--persist-to is for the local database, not with --remote; ${USAGE}`);

const { id, sql } = await adminInsertSql({ username: values.username, email: values.email, password: values.password }).catch((err: Error) =>
  fail(err.message),
);
const dir = mkdtempSync(join(tmpdir(), "storyloom-admin-"));
const file = join(dir, "admin.sql");
writeFileSync(file, sql);
const target = values.remote ? ["--remote"] : ["--local", ...(values["persist-to"] === undefined ? [] : ["--persist-to", values["persist-to"]])];
const result = spawnSync("wrangler", ["d1", "execute", "DB", ...target, "--file", file, "--json"], {
  encoding: "utf8",
  env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
});
rmSync(dir, { recursive: true, force: true });
if (result.status !== 0) {
  const reason = reasonOf(result);
  const hint = /no such table/.test(reason) ? " (is this database migrated? `npm run dev` with the same --persist-to migrates it)" : "";
  fail(`wrangler d1 execute failed: ${reason}${hint}`, 1);
}
console.log(`admin created: ${id} (${values.email}); log in with POST /api/v1/auth/login`);
