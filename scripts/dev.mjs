// `npm run dev [-- --port N --ip ADDR --persist-to DIR]`: makes .dev.vars when missing, migrates local D1 (saying
// so in one line), then runs `wrangler dev` and, once it answers, says where to go.
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";

// Offline and quiet: no request.cf look-up (it prints a stack trace without internet), no metrics, and wrangler at its
// `info` level, so its table of bindings (printed twice, once per start of the runtime) and banner stay out of the way;
// its "Ready" line, request lines, warnings and errors stay, and so does the access log (written with console.info).
const env = { WRANGLER_LOG: "info", ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);

if (!existsSync(".dev.vars")) {
  copyFileSync(".dev.vars.example", ".dev.vars");
  console.log("created .dev.vars from .dev.vars.example (local development secrets)");
}

// The local database must be the one `wrangler dev` will use, so a --persist-to option goes to both.
const persist = args.indexOf("--persist-to");
const persistArgs = persist >= 0 ? args.slice(persist, persist + 2) : [];
// stdin is closed so wrangler never stops to ask for confirmation.
const migrate = spawnSync("wrangler", ["d1", "migrations", "apply", "DB", "--local", ...persistArgs], { env, encoding: "utf8" });
if (migrate.status !== 0) {
  process.stdout.write(migrate.stdout ?? "");
  process.stderr.write(migrate.stderr ?? "");
  process.exit(migrate.status ?? 1);
}
const applied = [...new Set([...(migrate.stdout ?? "").matchAll(/│\s*(\d{4}_[\w-]+\.sql)\s*│\s*✅/g)].map((m) => m[1]))];
console.log(applied.length ? `local D1: applied ${applied.join(", ")}` : "local D1: migrations up to date");

const ip = option("--ip", "127.0.0.1");
const port = option("--port", "8787");
const devArgs = ["dev", ...args];
if (!args.includes("--ip")) devArgs.push("--ip", ip);
if (!args.includes("--port")) devArgs.push("--port", port);
// The pages' absolute addresses follow the address actually served (wrangler.toml's PUBLIC_ORIGIN is 8787's),
// unless the caller sets PUBLIC_ORIGIN itself; a wildcard address is reached as the loopback one.
const host = ip === "0.0.0.0" || ip === "::" ? "127.0.0.1" : ip.includes(":") ? `[${ip}]` : ip;
if (!args.some((a) => a.startsWith("PUBLIC_ORIGIN:"))) devArgs.push("--var", `PUBLIC_ORIGIN:http://${host}:${port}`);

// wrangler writes straight to this terminal: re-printing its lines through this process would cost every request
// a second process's CPU on the same cores (each request logs a line). Readiness is seen by asking the server.
const child = spawn("wrangler", devArgs, { stdio: "inherit", env });
const site = `http://${host}:${port}`;
const base = `${site}/api/v1`;
(async () => {
  for (let i = 0; i < 600 && child.exitCode === null; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) {
        console.log(
          `\n  Storyloom is ready: open ${site}/ in your browser\n  API        ${base}\n  API docs   ${base}/docs\n  master key MASTER_KEY in .dev.vars (local value: dev-master-key)\n`,
        );
        return;
      }
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
  }
})();
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
