// `npm run dev [-- --port N --ip ADDR]`: makes .dev.vars when missing, migrates local D1, then runs `wrangler dev`.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };
const args = process.argv.slice(2);

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("created .dev.vars from .dev.vars.example (local development secrets)");
}

// The local database must be the one `wrangler dev` will use, so a --persist-to option goes to both.
const persist = args.indexOf("--persist-to");
const persistArgs = persist >= 0 ? args.slice(persist, persist + 2) : [];
// stdin is closed so wrangler never stops to ask for confirmation.
const migrate = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local", ...persistArgs], {
  stdio: ["ignore", "inherit", "inherit"],
  env,
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

const devArgs = ["dev", ...args];
if (!args.includes("--ip")) devArgs.push("--ip", "127.0.0.1");
if (!args.includes("--port")) devArgs.push("--port", "8787");

const child = spawn("wrangler", devArgs, { stdio: "inherit", env });
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
