// Browser-test harness: a `wrangler dev` of its own (own port, own state directory, migrated first) and a headless
// Debian Chromium driven by playwright-core, which records every request the page makes. Reusable by any browser
// test (test/browser/docs.mjs is the first): start a Worker, launch a browser, run checks, report, stop.
//
//   const worker = await startWorker({ port: 8798 });   // { origin, sql(command), stop() }
//   const browser = await launchBrowser();               // { context, page(), requests, foreign(), violations, stop() }
//   const t = checks(); await t.check("name", async () => {...}); ...; t.report() // prints "N passed, M failed"
//
// Nothing may leave the machine: requests to any host other than 127.0.0.1 are recorded as foreign and aborted
// (so a test sees them, and an offline machine behaves the same as one with internet).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { sleep, startServer } from "../../bench/lib.mjs";
import { copyAssets } from "../../scripts/copy-assets.mjs";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const SCREENSHOTS = join(ROOT, "test", "browser", "screenshots");
const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");
export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const LOCAL_HOSTS = new Set(["127.0.0.1"]);

// Keep wrangler on this machine: no cf.json fetch for request.cf, no banner (its update check asks the registry).
const WRANGLER_ENV = { CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_HIDE_BANNER: "true", WRANGLER_SEND_METRICS: "false" };
Object.assign(process.env, WRANGLER_ENV);

const cleanups = [];
const runCleanups = () => {
  while (cleanups.length) {
    try {
      cleanups.pop()();
    } catch {}
  }
};
process.on("exit", runCleanups);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(130));

function run(cmd, args, { timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: process.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => process.kill(-child.pid, "SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(" ")} failed (${code ?? signal})\n${out}`));
    });
  });
}

/**
 * `wrangler dev` on 127.0.0.1:`port` with a fresh state directory, its local D1 migrated first (as scripts/dev.mjs
 * does), the docs bundle copied into the assets. `vars` are extra `--var NAME:value` pairs. Its inspector listens on
 * `inspectorPort` (else `INSPECTOR_PORT`, else `port` + 500), never wrangler's shared default, so walks on other
 * ports run side by side.
 */
export async function startWorker({ port = 8798, vars = {}, inspectorPort = process.env.INSPECTOR_PORT ?? port + 500 } = {}) {
  copyAssets({ quiet: true });
  const state = mkdtempSync(join(tmpdir(), "storyloom-browser-"));
  const removeState = () => rmSync(state, { recursive: true, force: true });
  cleanups.push(removeState);
  await run(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", state]);
  const varArgs = Object.entries({ JWT_SECRET: "browser-test-jwt-secret-0123456789abcdef", ...vars }).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
  const origin = `http://127.0.0.1:${port}`;
  const server = await startServer(
    WRANGLER,
    [
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      state,
      "--show-interactive-dev-session=false",
      ...varArgs,
    ],
    `${origin}/api/v1/health`,
    { cwd: ROOT },
  );
  const kill = (signal) => {
    try {
      process.kill(-server.child.pid, signal);
    } catch {}
  };
  cleanups.push(() => kill("SIGKILL"));
  return {
    origin,
    log: server.log,
    /** Runs SQL on the Worker's local D1 (what an operator does with `wrangler d1 execute`), e.g. to make a moderator. */
    sql: (command) => run(WRANGLER, ["d1", "execute", "DB", "--local", "--persist-to", state, "--command", command]),
    async stop() {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        const exited = new Promise((r) => server.child.once("exit", r));
        kill("SIGTERM");
        await Promise.race([exited, sleep(5000)]);
        kill("SIGKILL");
      }
      removeState();
    },
  };
}

/**
 * Headless Chromium with a fresh profile. Every request any page of the context makes is recorded in `requests`
 * ({url, method, resourceType, host}); those to hosts other than 127.0.0.1 are aborted and listed by `foreign()`.
 * `violations` collects Content-Security-Policy violations; `errors` uncaught page errors. `timezoneId` (e.g.
 * "Asia/Tokyo"): the browser's time zone, else the machine's.
 */
export async function launchBrowser({ viewport = { width: 1280, height: 900 }, timezoneId = undefined } = {}) {
  const profile = mkdtempSync(join(tmpdir(), "storyloom-chromium-"));
  const removeProfile = () => rmSync(profile, { recursive: true, force: true });
  cleanups.push(removeProfile);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    // A reader somewhere else than the server (a page that says a time in the reader's clock is checked so).
    ...(timezoneId ? { timezoneId } : {}),
    serviceWorkers: "block",
  });
  cleanups.push(() => context.close().catch(() => {}));
  const requests = [];
  const violations = [];
  const errors = [];
  const hostOf = (url) => {
    try {
      const u = new URL(url);
      return ["data:", "blob:", "about:"].includes(u.protocol) ? null : u.hostname;
    } catch {
      return url;
    }
  };
  // Every request of every page, as Chromium makes it; routing only decides whether it may go out.
  context.on("request", (req) => requests.push({ url: req.url(), method: req.method(), resourceType: req.resourceType(), host: hostOf(req.url()) }));
  await context.route("**/*", (route) => {
    const host = hostOf(route.request().url());
    return host === null || LOCAL_HOSTS.has(host) ? route.continue() : route.abort("blockedbyclient");
  });
  await context.exposeBinding("__reportCspViolation", (_source, v) => violations.push(v));
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      globalThis.__reportCspViolation({ directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample, source: e.sourceFile, line: e.lineNumber }),
    );
  });
  const page = async () => {
    const p = context.pages()[0] ?? (await context.newPage());
    p.on("pageerror", (err) => errors.push(String(err)));
    p.on("websocket", (ws) => requests.push({ url: ws.url(), method: "GET", resourceType: "websocket", host: hostOf(ws.url()) }));
    return p;
  };
  return {
    context,
    page,
    requests,
    violations,
    errors,
    foreign: () => requests.filter((r) => r.host !== null && !LOCAL_HOSTS.has(r.host)),
    async stop() {
      await context.close().catch(() => {});
      removeProfile();
    },
  };
}

/**
 * Saves a screenshot of the viewport (or, with `fullPage`, of the whole page) as
 * test/browser/screenshots/<name>.png and returns its path.
 */
export async function screenshot(page, name, { fullPage = false } = {}) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage });
  return path;
}

/** Named checks, each passing or failing on its own; report() prints "N passed, M failed" last. */
export function checks() {
  let passed = 0;
  let failed = 0;
  return {
    async check(name, fn) {
      const started = Date.now();
      try {
        const note = await fn();
        passed++;
        console.log(`ok   ${name} (${Date.now() - started} ms)${note ? `: ${note}` : ""}`);
      } catch (err) {
        failed++;
        console.log(`FAIL ${name}: ${err?.message ?? err}`);
      }
    },
    fail(name, err) {
      failed++;
      console.log(`FAIL ${name}: ${err?.message ?? err}`);
    },
    get failed() {
      return failed;
    },
    report() {
      console.log(`${passed} passed, ${failed} failed`);
      return failed;
    },
  };
}

/**
 * Runs a walk to its end: `body(open)` starts what it needs and keeps it in `open` (`worker`, `browser`); a failure
 * outside any check is one failed "setup" (with the Worker's last log). Then everything stops, and the process
 * exits non-zero on any failure, after `N passed, M failed`.
 */
export async function walk(name, t, body) {
  const started = Date.now();
  const open = {};
  try {
    await body(open);
  } catch (err) {
    t.fail("setup", err);
    if (open.worker) console.log(open.worker.log().slice(-2000));
  } finally {
    await open.browser?.stop();
    await open.worker?.stop();
    runCleanups();
  }
  console.log(`${name} took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(t.report() ? 1 : 0);
}

/** The check a walk ends with: no request left 127.0.0.1, no page threw, the CSP blocked nothing. */
export function checkClean(t, browser) {
  return t.check("no request leaves 127.0.0.1; no page error and no CSP violation", async () => {
    const foreign = browser.foreign();
    assert(foreign.length === 0, `requests to other hosts: ${foreign.map((r) => `${r.method} ${r.url}`).join(", ")}`);
    assert(browser.errors.length === 0, `page errors: ${browser.errors.join(" | ")}`);
    assert(browser.violations.length === 0, `CSP violations: ${JSON.stringify(browser.violations)}`);
    return `${browser.requests.length} requests, all to 127.0.0.1`;
  });
}

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

export { runCleanups as cleanup };
