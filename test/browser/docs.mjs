// `npm run test:browser [-- --port 8798]`: the API reference at /api/v1/docs in a real browser, offline.
// Starts its own `wrangler dev` (own port and state directory) and a headless Debian Chromium (test/browser/harness.mjs),
// then checks: the page answers under its Content-Security-Policy; the reference renders the operation list (every
// tag of the OpenAPI document in the sidebar); clicking one operation (POST /auth/register) shows its request body
// schema and, once its 201 response is opened, the response schema; its "Test Request" client sends GET /health to
// this origin itself and shows the answer; no request of the page leaves 127.0.0.1; no
// CSP violation but zod's known eval probe; no uncaught page error. Screenshots go to test/browser/screenshots/.
// Prints `N passed, M failed` last and exits non-zero on any failure.
import { parseArgs } from "node:util";
import { assert, checks, cleanup, launchBrowser, screenshot, startWorker } from "./harness.mjs";

const { values: opt } = parseArgs({ options: { port: { type: "string", default: "8798" } } });
const started = Date.now();
const t = checks();
const TIMEOUT = 30_000;

/** zod (inside the bundle) probes `Function("")` in a try/catch to choose its fast path; blocked, it falls back. */
const knownProbe = (v) => v.directive === "script-src" && v.blocked === "eval";

let worker;
let browser;
try {
  worker = await startWorker({ port: Number(opt.port) });
  console.log(`wrangler dev ready at ${worker.origin} after ${Date.now() - started} ms`);
  browser = await launchBrowser();
  const page = await browser.page();
  const docsUrl = `${worker.origin}/api/v1/docs`;
  const doc = await (await fetch(`${worker.origin}/api/v1/openapi.json`)).json();

  await t.check("the docs page answers HTML with a same-origin CSP and nosniff", async () => {
    const res = await page.goto(docsUrl, { waitUntil: "load", timeout: TIMEOUT });
    assert(res?.status() === 200, `status ${res?.status()}`);
    const h = res.headers();
    assert(h["content-type"]?.includes("text/html"), `content-type ${h["content-type"]}`);
    assert(h["content-security-policy"]?.includes("default-src 'self'"), `CSP ${h["content-security-policy"]}`);
    assert(h["content-security-policy"]?.includes("script-src 'self';"), `script-src in ${h["content-security-policy"]}`);
    assert(h["x-content-type-options"] === "nosniff", "no nosniff");
    return h["content-security-policy"];
  });

  await t.check("the reference renders the operation list (every tag in the sidebar)", async () => {
    await page.getByText("Liveness check").first().waitFor({ timeout: TIMEOUT });
    const sidebar = page.locator("aside").first();
    await sidebar.waitFor({ timeout: TIMEOUT });
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, one line per element, is what is checked
    const text = await sidebar.innerText();
    const tags = [...new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags ?? [])))];
    const missing = tags.filter((tag) => !text.includes(tag));
    assert(tags.length > 5 && missing.length === 0, `tags missing from the sidebar: ${missing.join(", ")}`);
    await screenshot(page, "docs-overview");
    return `${tags.length} tags`;
  });

  const op = doc.paths["/auth/register"].post;
  // Scalar ids an operation's section "<document>/tag/<tag>/<METHOD>/<path>" and its parts "<that>.body.<field>" etc.
  const OP_ID = "/tag/authentication/POST/auth/register";
  const section = page.locator(`section[id$="${OP_ID}"]`).first();
  await t.check("clicking POST /auth/register shows its request body schema", async () => {
    await page
      .getByRole("button", { name: /Authentication/ })
      .first()
      .click({ timeout: TIMEOUT });
    await page.locator("aside").getByText(op.summary, { exact: true }).first().click({ timeout: TIMEOUT });
    await page.waitForURL(/#tag\/authentication\/POST\/auth\/register$/, { timeout: TIMEOUT });
    const schema = op.requestBody.content["application/json"].schema;
    const fields = Object.keys(schema.properties);
    await section.locator(`[id$="${OP_ID}.body.${fields[0]}"]`).waitFor({ timeout: TIMEOUT });
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, one line per element, is what is checked
    const text = await section.innerText();
    const missing = [];
    for (const name of fields) {
      const field = section.locator(`[id$="${OP_ID}.body.${name}"]`);
      // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, one line per element, is what is checked
      if (!(await field.count()) || !(await field.first().innerText()).includes(name)) missing.push(name);
    }
    assert(missing.length === 0, `request fields not shown: ${missing.join(", ")}`);
    assert(/min length:\s*8/.test(text), "the password's minLength is not shown");
    await screenshot(page, "docs-operation-request");
    return `fields ${Object.keys(schema.properties).join(", ")}`;
  });

  await t.check("opening its 201 response shows the response schema", async () => {
    const schema = op.responses["201"].content["application/json"].schema;
    const trigger = section.locator(`button[id$="${OP_ID}.responses.201"]`).first();
    assert((await trigger.getAttribute("aria-expanded", { timeout: TIMEOUT })) === "false", "the 201 response is open before the click");
    await trigger.click({ timeout: TIMEOUT });
    await page.waitForFunction(
      ([suffix, names]) => {
        const button = [...document.querySelectorAll("button[id]")].find((b) => b.id.endsWith(suffix));
        if (button?.getAttribute("aria-expanded") !== "true") return false;
        // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, one line per element, is what is checked
        const panel = button.parentElement?.innerText ?? "";
        return names.every((n) => new RegExp(`^${n}$`, "m").test(panel));
      },
      [`${OP_ID}.responses.201`, Object.keys(schema.properties)],
      { timeout: TIMEOUT },
    );
    await screenshot(page, "docs-operation-response");
    return `fields ${Object.keys(schema.properties).join(", ")}`;
  });

  await t.check('"Test Request" on GET /health calls this origin directly (no proxy) and shows 200', async () => {
    const health = page.locator('section[id$="/tag/health/GET/health"]').first();
    await health.scrollIntoViewIfNeeded({ timeout: TIMEOUT });
    await health
      .getByRole("button", { name: /Test Request/ })
      .first()
      .click({ timeout: TIMEOUT });
    const sent = page.waitForRequest((r) => r.url() === `${worker.origin}/api/v1/health`, { timeout: TIMEOUT });
    await page.getByRole("button", { name: /^Send/ }).first().click({ timeout: TIMEOUT });
    await sent;
    await page.getByText("200 OK").first().waitFor({ timeout: TIMEOUT });
    await page.getByText('"Storyloom API is running"').first().waitFor({ timeout: TIMEOUT });
    await screenshot(page, "docs-test-request");
    await page.keyboard.press("Escape");
  });

  await t.check("no request leaves 127.0.0.1", async () => {
    const foreign = browser.foreign();
    assert(browser.requests.length > 0, "no request recorded");
    assert(foreign.length === 0, `requests to other hosts: ${foreign.map((r) => `${r.method} ${r.url}`).join(", ")}`);
    const hosts = [...new Set(browser.requests.map((r) => r.host ?? "data:"))];
    return `${browser.requests.length} requests, hosts: ${hosts.join(", ")}`;
  });

  await t.check("the CSP blocks nothing the page needs, and no page error", async () => {
    const unexpected = browser.violations.filter((v) => !knownProbe(v));
    assert(unexpected.length === 0, `violations: ${JSON.stringify(unexpected)}`);
    assert(browser.errors.length === 0, `page errors: ${browser.errors.join(" | ")}`);
    return `${browser.violations.length - unexpected.length} known eval probe(s) blocked`;
  });
} catch (err) {
  t.fail("setup", err);
  if (worker) console.log(worker.log().slice(-2000));
} finally {
  await browser?.stop();
  await worker?.stop();
  cleanup();
}
console.log(`browser test took ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(t.report() ? 1 : 0);
