// `npm run types`: writes src/worker-configuration.d.ts, the Worker's bindings and vars as wrangler.toml declares
// them (`wrangler types`), for src/env.ts to extend. `npm run types -- --check` (run by `npm run lint`) writes nothing
// and exits 1 when the file is stale: wrangler.toml changed since, or the file was edited by hand.
//
// The options, and why (docs/decisions.md, "Architecture"):
// - --include-runtime=false: the runtime's types come from @cloudflare/workers-types (tsconfig.json), as before.
// - --strict-vars=false: a var is a `string`, not its wrangler.toml value as a literal type (tests and deployments
//   set other values; `configOf` parses them).
// - --env-file=/dev/null: wrangler would otherwise type every name in the developer's own .dev.vars (or .env) as a
//   secret, so the file would differ from machine to machine. The secrets are declared in src/env.ts instead, with
//   whether each is required, which no env file can say. A missing file is read as empty too (Windows).
// - --env-interface=WranglerEnv: the generated interface's name; `Env` is src/env.ts's, which adds the secrets.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = "src/worker-configuration.d.ts";
const ARGS = ["types", "--env-file=/dev/null", "--include-runtime=false", "--strict-vars=false", "--env-interface=WranglerEnv", OUT];
const check = process.argv.includes("--check");

const run = spawnSync(join(ROOT, "node_modules", ".bin", "wrangler"), check ? [...ARGS, "--check"] : ARGS, {
  cwd: ROOT,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "pipe"],
  // No metrics, no banner (its update check asks the npm registry); no process.env read as secrets either.
  env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_HIDE_BANNER: "true", CLOUDFLARE_INCLUDE_PROCESS_ENV: "false" },
});
if (run.status !== 0) {
  console.error(run.stdout + run.stderr);
  console.error(check ? `${OUT} is stale: run \`npm run types\` and commit it.` : `wrangler types failed (${run.status ?? run.signal})`);
  process.exit(1);
}
// wrangler's own check compares the hash in the file's header with what wrangler.toml generates now; the header's
// hash must also be the hash of the file's body, or the body was edited by hand after generation.
const [, header, ...body] = readFileSync(join(ROOT, OUT), "utf8").split("\n");
const hash = /\(hash: ([0-9a-f]+)\)$/.exec(header)?.[1];
if (!hash || createHash("sha256").update(body.join("\n")).digest("hex").slice(0, 32) !== hash) {
  console.error(`${OUT} was edited by hand: run \`npm run types\` and commit it.`);
  process.exit(1);
}
if (!check) console.log(`wrote ${OUT}`);
