// `npm run test:conformance [-- --port N --inspector-port I --credential --verbose]`: the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in package.json) against `/mcp` under `npm run dev` (wrangler dev: real
// workerd) on 127.0.0.1, with its own state directory. It runs the server scenarios server-initialize, ping,
// tools-list, prompts-list and dns-rebinding-protection at the 2025-11-25 revision, and those of them that the
// 2026-07-28 revision keeps (tools-list, prompts-list, dns-rebinding-protection) at that revision too. One line per
// run, the suite's own report under a failure; the exit status is non-zero when any check fails or a scenario is
// skipped.
//
// --credential: the suite connects with a bot's key (registered here) through a small local proxy that adds the
// `Authorization` header to every request and forwards the rest unchanged, `Host` and `Origin` included (the
// rebinding scenario sends its own): for a `/mcp` that requires a credential.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { api, freePort, startDev } from "../bench/lib.mjs";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    // wrangler's devtools port (else its shared default), for a machine where several servers run at once.
    "inspector-port": { type: "string" },
    credential: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
  },
});
/** Each scenario with the revisions it runs at (the suite skips a scenario a revision no longer has). */
const RUNS = [
  ["server-initialize", "2025-11-25"],
  ["ping", "2025-11-25"],
  ["tools-list", "2025-11-25"],
  ["prompts-list", "2025-11-25"],
  ["dns-rebinding-protection", "2025-11-25"],
  ["tools-list", "2026-07-28"],
  ["prompts-list", "2026-07-28"],
  ["dns-rebinding-protection", "2026-07-28"],
];
const PORT = values.port ? Number(values.port) : await freePort();
const ORIGIN = `http://127.0.0.1:${PORT}`;
const tmp = mkdtempSync(path.join(tmpdir(), "storyloom-conformance-"));

/** A proxy on 127.0.0.1 that forwards every request to `target` with `Authorization: Bearer <credential>` added. */
async function credentialProxy(target, credential) {
  const port = await freePort();
  const proxy = createServer((req, res) => {
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${credential}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise((resolve) => proxy.listen(port, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => proxy.close() };
}

/** One scenario at one revision: the suite's exit status and its output (which names every check). */
function runScenario(url, scenario, revision) {
  return new Promise((resolve) => {
    const child = spawn("conformance", ["server", "--url", url, "--scenario", scenario, "--spec-version", revision], {
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("close", (status) => resolve({ status, output }));
  });
}

const server = await startDev(PORT, path.join(tmp, "state"), values["inspector-port"] ? ["--inspector-port", values["inspector-port"]] : []);
let proxy = null;
let failed = 0;
try {
  if (server.child.exitCode !== null) throw new Error(`port ${PORT} answered, but not from this run's server`);
  let url = `${ORIGIN}/mcp`;
  if (values.credential) {
    const bot = (await api(`${ORIGIN}/api/v1`)("/auth/bot/register", { body: { name: `conformance-${Date.now()}`, model: "conformance" } })).data;
    proxy = await credentialProxy(new URL(ORIGIN), bot.api_key);
    url = `${proxy.url}/mcp`;
  }
  for (const [scenario, revision] of RUNS) {
    const { status, output } = await runScenario(url, scenario, revision);
    const summary = /Passed: \d+\/\d+.*/.exec(output)?.[0] ?? "no result";
    const ok = status === 0 && !/^SKIPPED/m.test(output) && !/\b[1-9]\d* failed/.test(summary);
    if (!ok) failed++;
    console.log(`${ok ? "pass" : "FAIL"}  ${scenario} (${revision}): ${summary}`);
    if (!ok || values.verbose) console.log(output.replace(/^/gm, "      "));
  }
  // The access log says who called: with --credential, the suite's calls must have reached /mcp as the bot.
  const asBot = server
    .log()
    .split("\n")
    .filter((l) => l.includes('"route":"/mcp') && l.includes('"actor":"bot"')).length;
  if (values.credential) console.log(`${asBot ? "pass" : "FAIL"}  ${asBot} requests reached /mcp with the bot's key`);
  if (values.credential && !asBot) failed++;
} catch (e) {
  console.error(e);
  console.error(server.log().slice(-3000));
  failed++;
} finally {
  proxy?.close();
  server.stop();
  await new Promise((r) => setTimeout(r, 500));
  rmSync(tmp, { recursive: true, force: true });
}
console.log(failed ? `${failed} failed` : `all ${RUNS.length} runs passed`);
process.exit(failed ? 1 : 0);
