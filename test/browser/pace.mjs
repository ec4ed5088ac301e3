// `npm run test:browser`, its third part (alone: `npm exec -- node test/browser/pace.mjs [--port 8797] [--inspector-port N]`): a person's
// first evening of writing, at their own pace, in a headless Debian Chromium whose clock is in Tokyo, against its own
// `wrangler dev` with wrangler.toml's real limits (test/browser/harness.mjs), offline.
//
// The walk: register; "New story": the form says lengths are counted in words and suggests a rule a person can meet
// (30–300 words), switching the language to Chinese says characters and suggests 50–500, and back; the counter under
// a segment counts as one types; sent with two segments too short, the page names both at once; fixed, the story is
// made with the suggested rule. On its main line the person writes 10 segments in a row through "Add segment" and
// forks it 3 times through "Fork from here" (the limits that pace bots, 2 segments a branch and 1 fork an hour, do
// not hold a person); then, with 10 more written through the API (one limit for every door), the 21st segment of the
// hour is refused on the page, which says when the person can write again in the reader's own clock (Tokyo's), not
// a count of seconds. No page may throw, break its CSP or reach past 127.0.0.1. Prints `N passed, M failed` last.
import { parseArgs } from "node:util";
import { assert, checkClean, checks, launchBrowser, screenshot, startWorker, walk } from "./harness.mjs";

const { values: opt } = parseArgs({ options: { port: { type: "string", default: "8797" }, "inspector-port": { type: "string" } } });
const t = checks();
const TIMEOUT = 15_000;
const ZONE = "Asia/Tokyo";

const run = Math.random().toString(36).slice(2, 8);
const person = { username: `pace_${run}`, email: `pace_${run}@example.com`, password: "correct horse battery" };
/** A paragraph of `n` words (the suggested rule is 30 to 300 words). */
const paragraph = (n, seed) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ");

/** Fails the check at once when an earlier step it needs did not happen (instead of waiting out timeouts). */
function need(value, what) {
  if (!value) throw new Error(`skipped: ${what} is missing (an earlier step failed)`);
  return value;
}

await walk("pace browser test", t, async (open) => {
  const worker = await startWorker({ port: Number(opt.port), inspectorPort: opt["inspector-port"] && Number(opt["inspector-port"]) });
  open.worker = worker;
  const origin = worker.origin;
  console.log(`wrangler dev ready at ${origin}`);
  const browser = await launchBrowser({ timezoneId: ZONE });
  open.browser = browser;
  const page = await browser.page();
  page.setDefaultTimeout(TIMEOUT);
  page.setDefaultNavigationTimeout(TIMEOUT);
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is checked
  const shown = async (locator) => (await locator.innerText()).trim();

  /** Clicks a form's submit button and waits for the page the POST leads to: the POST's status and where it ended. */
  async function submit(button) {
    const posted = page.waitForRequest((r) => r.method() === "POST" && r.isNavigationRequest() && r.frame() === page.mainFrame());
    const loaded = page.waitForEvent("load");
    await button.click();
    const request = await posted;
    await loaded;
    const response = await request.response();
    // A 303's own response is the redirect; the page loaded after it is the answer a person sees.
    return { status: response?.status() ?? 0, path: new URL(page.url()).pathname };
  }

  let signedIn = false;
  await t.check("register: the form signs the person in", async () => {
    await page.goto(`${origin}/register`);
    await page.getByLabel("Username", { exact: true }).fill(person.username);
    await page.getByLabel("Email", { exact: true }).fill(person.email);
    await page.getByLabel("Password", { exact: true }).fill(person.password);
    const sent = await submit(page.getByRole("button", { name: "Create account" }));
    assert(sent.status < 400, `register → ${sent.status}`);
    signedIn = true;
  });

  // ---- starting a story, as a person's step ------------------------------------------------------------------
  let formShown = false;
  await t.check("new story: lengths are said in words with a rule a person can meet; Chinese says characters and suggests its own", async () => {
    need(signedIn, "the session");
    await page.goto(`${origin}/stories/new`);
    const unit = page.locator("#length-rule-hint strong");
    const min = page.getByLabel("Shortest segment", { exact: true });
    const max = page.getByLabel("Longest segment", { exact: true });
    const counter = page.locator("#segment_1-count");
    const read = async () => `${await unit.textContent()} ${await min.inputValue()}–${await max.inputValue()} | ${await counter.textContent()}`;
    const en = await read();
    assert(en === "words 30–300 | Length: 30–300 words", `English: ${en}`);
    await page.getByLabel("Language", { exact: true }).selectOption("zh");
    const zh = await read();
    assert(zh === "characters 50–500 | Length: 50–500 characters", `Chinese: ${zh}`);
    await page.getByLabel("Language", { exact: true }).selectOption("en");
    const back = await read();
    assert(back === en, `back in English: ${back}`);
    // What a person typed is theirs: a changed length stays when the language changes.
    await max.fill("250");
    await page.getByLabel("Language", { exact: true }).selectOption("ja");
    const kept = await max.inputValue();
    await page.getByLabel("Language", { exact: true }).selectOption("en");
    assert(kept === "250", `a typed maximum became ${kept} when the language changed`);
    await max.fill("300");
    formShown = true;
    return `${en} / ${zh}`;
  });

  await t.check("new story: the counter under a segment counts as one types", async () => {
    need(formShown, "the form");
    await page.getByLabel("Segment 1", { exact: true }).fill("one two three");
    const text = (await page.locator("#segment_1-count").textContent()) ?? "";
    assert(text === "3 words (allowed 30–300) · 27 more needed", `counter: ${text}`);
    return text;
  });

  let storyMade = null;
  await t.check("new story: two segments too short are named at once; fixed, the story is made with the suggested rule", async () => {
    need(formShown, "the form");
    await page.getByLabel("Title", { exact: true }).fill(`An evening ${run}`);
    await page.getByLabel("Background", { exact: true }).fill("A seaside town where every lamp is lit by hand at dusk.");
    await page.getByLabel("Opening", { exact: true }).fill("The lamplighter was late.");
    await page.getByLabel("Segment 1", { exact: true }).fill("Too short.");
    await page.getByLabel("Segment 2", { exact: true }).fill(paragraph(40, "b"));
    await page.getByLabel("Segment 3", { exact: true }).fill("Also too short.");
    const refused = await submit(page.getByRole("button", { name: "Create story" }));
    assert(refused.path === "/stories", `sent with short segments, the page is ${refused.path}`);
    const alert = (await shown(page.getByRole("alert"))).replace(/\s+/g, " ");
    for (const want of ["Segment 1: is 2 words; the shortest allowed is 30: add 28 more words", "Segment 3: is 3 words; the shortest allowed is 30"]) {
      assert(alert.includes(want), `the alert says ${JSON.stringify(alert)}, without ${JSON.stringify(want)}`);
    }
    assert((await page.getByLabel("Segment 2", { exact: true }).inputValue()) === paragraph(40, "b"), "the good segment was not kept");
    await screenshot(page, "pace-new-story-errors", { fullPage: true });
    await page.getByLabel("Segment 1", { exact: true }).fill(paragraph(30, "a"));
    await page.getByLabel("Segment 3", { exact: true }).fill(paragraph(35, "c"));
    const made = await submit(page.getByRole("button", { name: "Create story" }));
    assert(/^\/stories\/[0-9a-f-]{36}$/.test(made.path), `after fixing, the page is ${made.path}`);
    storyMade = made.path;
    return alert;
  });

  // ---- writing at one's own pace ----------------------------------------------------------------------------
  let mainPath = null;
  let written = 0;
  await t.check("a person writes 10 segments in a row on their own story's main line (no per-branch limit)", async () => {
    need(storyMade, "the story");
    const story = await (await fetch(`${origin}/api/v1${storyMade}`)).json();
    mainPath = `/branches/${story.data.main_branch_id}`;
    await page.goto(`${origin}${mainPath}`);
    for (let i = 0; i < 10; i++) {
      await page.getByLabel("Next segment", { exact: true }).fill(paragraph(30, `n${i}_`));
      const sent = await submit(page.getByRole("button", { name: "Add segment" }));
      assert(sent.path === mainPath && !(await page.getByRole("alert").count()), `segment ${i + 1}: the page is ${sent.path} with an alert`);
      written++;
    }
    return `${written} segments`;
  });

  await t.check('a person forks 3 times in the hour through "Fork from here"', async () => {
    need(mainPath, "the main line");
    const forks = [];
    for (let i = 0; i < 3; i++) {
      await page.goto(`${origin}${mainPath}`);
      const details = page
        .locator("details")
        .filter({ has: page.locator("summary", { hasText: "Fork from here" }) })
        .nth(i);
      await details.locator("summary").click();
      await details.getByLabel("Branch title", { exact: true }).fill(`What if ${i} (${run})`);
      const sent = await submit(details.getByRole("button", { name: "Create branch" }));
      assert(/^\/branches\/[^/]+$/.test(sent.path) && sent.path !== mainPath, `fork ${i + 1}: the page is ${sent.path}`);
      forks.push(sent.path);
    }
    return forks.join(", ");
  });

  await t.check("the 21st segment of the hour is refused on the page with when, in the reader's clock (Tokyo), not seconds", async () => {
    need(written === 10, "the 10 segments");
    // 10 more through the API: one limit whichever door the writing comes through.
    const login = await fetch(`${origin}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: person.email, password: person.password }),
    });
    const { access_token: token } = await login.json();
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${origin}/api/v1${mainPath}/segments`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: JSON.stringify({ content: paragraph(30, `api${i}_`) }),
      });
      assert(res.status === 201, `API segment ${i + 1} → ${res.status} ${await res.text()}`);
    }
    await page.goto(`${origin}${mainPath}`);
    await page.getByLabel("Next segment", { exact: true }).fill(paragraph(30, "late"));
    const sent = await submit(page.getByRole("button", { name: "Add segment" }));
    assert(sent.status === 429, `the 21st → ${sent.status}`);
    const time = page.getByRole("alert").locator("time[data-local]");
    const iso = await time.getAttribute("datetime");
    const local = new Date(iso).toLocaleString("en-GB", { timeZone: ZONE, hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
    const text = (await time.textContent()) ?? "";
    const alert = (await shown(page.getByRole("alert"))).replace(/\s+/g, " ");
    assert(alert.startsWith("Limit reached: 20 per hour. You can write again at"), `the alert: ${alert}`);
    assert(!/\bs\b|seconds|UTC/.test(alert), `the alert counts seconds or says UTC: ${alert}`);
    // The browser's own way of writing the time (its locale: 17:24 or 05:24 PM), in Tokyo's clock, as hour and minute:
    // the last two numbers (past Tokyo's midnight the page also names the day: "Mon, Nov 30, 12:14 AM").
    const [hour, minute] = (text.match(/\d+/g) ?? []).slice(-2).map(Number);
    const h23 = /pm/i.test(text) ? (hour % 12) + 12 : /am/i.test(text) ? hour % 12 : hour;
    const said = `${String(h23).padStart(2, "0")}:${String(minute).padStart(2, "0")}`;
    assert(said === local, `shown ${JSON.stringify(text)} (${said}), Tokyo's clock says ${local} for ${iso}`);
    await screenshot(page, "pace-limit-refusal");
    return alert;
  });

  await checkClean(t, browser);
});
