// `npm run test:browser`, its second part (alone, under Node 22: `npm exec -- node test/browser/reader.mjs
// [--port 8799]`): the human web reader walked as a person would, in a headless Debian Chromium
// against its own `wrangler dev` (test/browser/harness.mjs), offline. Fields, buttons and links are found by
// their labels and roles.
//
// The walk: the home page of an empty site (what Storyloom is, "Start the first story"; the favicon; on a phone the
// header folded into a Menu that opens and closes); register (the session cookie is HttpOnly, SameSite=Lax, not Secure on 127.0.0.1; the
// header then says "Signed in as …"); a new story through "New story", with tags (an existing tag suggested as one
// types), a rating and a warning, its chips and "Continue this story" on the story page, its tag's page, a search from the header's
// box (the story and its opening segment found, the word marked; the segment's hit opens its place), the owner's edit form,
// the preference "hide mature stories" kept with the account (the home page then leaves it out); its main line's branch page, where the
// human sends a too-short segment (an alert in words inside the form, no JSON envelope), writes a segment (the
// live word counter follows the typing; 303 → GET shows it), votes the branch up, comments and replies (nested);
// a foreign-Origin form POST with the session cookie is refused 403 and writes nothing (a same-origin one is
// accepted); a bot registers, joins and writes through the API while the page stays open, and its turn and its
// segment appear on the page without a reload (`#live-status` says "Live"); the human votes the bot's segment
// up (the branch's score then says "+2 from 2 votes", each segment's controls one row on a phone), forks from it
// ("Fork from here") onto a new branch page; the bot forks from the main line too, and the story
// page draws the three branches as a map (its SVG parsed as XML by the browser, the list beside it the same links)
// (on a phone, a drawing laid out for its width, the wide one hidden) whose fork lane opens the fork's path page (the crossing marked, the other fork offered; a segment's anchor link
// reopens at that segment); the human reports a segment through its "Report" control, opens the bot's page, follows the main line, opens its inbox (its badge "Connecting…", then "Live" at once) and sees the one item the bot's next
// segment makes appear without a reload (one, though the human follows the main line and, as its owner, the story; the header counting it), marks it read, logs out (the home page's chip says "Human + AI N %"; an anonymous preference is kept in a
// cookie), opens the login page; a moderator (made so in D1) logs in, finds the report in
// /admin with the reported text, hides the segment with a reason, and finds that in the audit log. Every page
// visited is checked by axe-core in the light and the dark colour scheme (any `serious` or `critical` violation
// fails, printed with its rule, targets and help) and screenshotted full-page at phone (390×844, where nothing may
// scroll sideways) and desktop (1280×900) widths into test/browser/screenshots/
// (reader-<page>-phone.png, reader-<page>-desktop.png); no page may throw, break its CSP or reach past
// 127.0.0.1. Prints `N passed, M failed` last and exits non-zero on any failure.
//
// The per-account limits of wrangler.toml bound the walk: the bot forks once (a bot's one fork an hour); the human,
// held to a person's limits (test/browser/pace.mjs walks them), writes and forks well within them.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";
import { assert, checks, cleanup, launchBrowser, screenshot, startWorker } from "./harness.mjs";

const { values: opt } = parseArgs({ options: { port: { type: "string", default: "8799" }, "inspector-port": { type: "string" } } });
const started = Date.now();
const t = checks();
const TIMEOUT = 15_000;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

const run = Math.random().toString(36).slice(2, 8);
const human = { username: `reader_${run}`, email: `reader_${run}@example.com`, password: "correct horse battery" };
const story = {
  title: `The Lantern Keeper ${run}`,
  background: "A lighthouse on a cold northern island, kept by one family for two hundred years, and the night its lamp went dark.",
  style: "Plain past tense, third person, no dialogue tags longer than said.",
  opening: "The lamp had burned every night for two hundred years.",
  segments: [
    "Mira climbed the iron stairs with a tin of oil in each hand.",
    "Below her the sea threw itself against the rocks as if it wanted in.",
    "At the top she found the glass cracked and the flame already out.",
  ],
};
const SHORT = "Short.";
const HUMAN_SEGMENT = "The lantern flickered twice."; // 4 words
const COMMENT = `The cracked glass is a good mystery (${run}).`;
const REPLY = `Agreed, and the oil tins matter later (${run}).`;
const EVIL_COMMENT = `Sent from another site (${run}).`;
const CONTROL_COMMENT = `Sent from this site without a browser (${run}).`;
const bot = { name: `lamp_bot_${run}`, model: "test-model-1" };
const BOT_SEGMENT = "A ship's horn answered from somewhere out in the dark water.";
const INBOX_SEGMENT = `The horn sounded again, closer this time (${run}).`;
const REPORT_NOTE = `Copied from an advert (${run}).`;
const HIDE_REASON = `Spam, hidden (${run}).`;
const moderator = { username: `moderator_${run}`, email: `moderator_${run}@example.com`, password: "correct horse battery" };
const FORK = { title: `The ship in the dark ${run}`, first: "Nobody on the ship had seen a lighthouse go dark before." };
const SIDE = { title: `The keeper's daughter ${run}`, first: "Her daughter had never once trusted the stairs." };
/** What the story is: an existing tag the form suggests, the story's own tags, rating and warning. */
const SUGGESTED = `lighthouse keepers ${run}`;
const TAG = `Lamps ${run}`;
/** A reader's note on a bookmark. */
const BOOKMARK_NOTE = `Where the oil tins first appear (${run}).`;

/** Fails the check at once when an earlier step it needs did not happen (instead of waiting out timeouts). */
function need(value, what) {
  if (!value) throw new Error(`skipped: ${what} is missing (an earlier step failed)`);
  return value;
}

/** A promise whose rejection is kept for later, so an abandoned wait never becomes an unhandled rejection. */
function later(promise) {
  const kept = promise.then(
    (value) => ({ value }),
    (error) => ({ error }),
  );
  return async (message) => {
    const r = await kept;
    if (r.error) throw new Error(`${message} (${r.error.message.split("\n")[0]})`);
    return r.value;
  };
}

let worker;
let browser;
try {
  worker = await startWorker({ port: Number(opt.port), inspectorPort: opt["inspector-port"] && Number(opt["inspector-port"]) });
  const origin = worker.origin;
  console.log(`wrangler dev ready at ${origin} after ${Date.now() - started} ms`);
  browser = await launchBrowser({ viewport: DESKTOP });
  const page = await browser.page();
  page.setDefaultTimeout(TIMEOUT);
  page.setDefaultNavigationTimeout(TIMEOUT);
  const banner = page.getByRole("banner");
  /** The text as rendered (one line per block), which is what a reader sees. */
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text is what is checked
  const shown = async (locator) => (await locator.innerText()).trim();
  const bodyText = () => shown(page.locator("body"));

  /** Node-side API call (to this origin only). */
  async function api(path, { method = "GET", body, token } = {}) {
    const headers = { "content-type": "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(`${origin}/api/v1${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
    const json = await res.json().catch(() => null);
    if (res.status >= 300) throw new Error(`${method} /api/v1${path} → ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  async function goto(path) {
    const res = await page.goto(`${origin}${path}`, { waitUntil: "load" });
    assert(res?.status() === 200, `GET ${path} → ${res?.status()}`);
    return res;
  }

  /**
   * Clicks a form's submit button and waits for the page the POST leads to: returns the POST's own answer
   * (status, headers, e.g. a 303 and its Set-Cookie) and where the browser ended up.
   */
  async function submit(button, what) {
    const posted = later(page.waitForRequest((r) => r.method() === "POST" && r.isNavigationRequest() && r.frame() === page.mainFrame(), { timeout: TIMEOUT }));
    const loaded = later(page.waitForEvent("load", { timeout: TIMEOUT }));
    await button.click();
    const request = await posted(`${what}: the click sent no form POST within ${TIMEOUT / 1000} s`);
    await loaded(`${what}: no page loaded after the POST`);
    const response = await request.response();
    return { status: response?.status() ?? 0, headers: response ? await response.allHeaders() : {}, next: request.redirectedTo(), url: page.url() };
  }

  /**
   * axe-core inside the page, in the light and the dark colour scheme (the pages follow the system's): every
   * `serious` or `critical` violation fails, listed with its rule, help text and targets.
   */
  async function audit(label, reached = true) {
    if (!reached) return console.log(`skip axe: ${label} (the page was not reached)`);
    await t.check(`axe: ${label}`, async () => {
      await page.waitForLoadState("load");
      if (!(await page.evaluate(() => typeof globalThis.axe === "object"))) await page.evaluate(AXE_SOURCE);
      const bad = [];
      const minor = new Set();
      let rules = 0;
      try {
        for (const colorScheme of ["light", "dark"]) {
          await page.emulateMedia({ colorScheme });
          const result = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ["violations"] }));
          rules = Math.max(rules, result.passes.length);
          for (const v of result.violations) {
            if (v.impact === "serious" || v.impact === "critical") bad.push({ ...v, colorScheme });
            else minor.add(`${v.id} (${v.impact})`);
          }
        }
      } finally {
        await page.emulateMedia({ colorScheme: "light" });
      }
      const describe = (v) =>
        `[${v.impact}, ${v.colorScheme}] ${v.id}: ${v.help} (${v.helpUrl.split("?")[0]})\n      ${v.nodes.map((n) => `${n.target.join(" ")}: ${(n.failureSummary ?? "").split("\n").slice(1).join(" ").replace(/\s+/g, " ").trim().slice(0, 240)}`).join("\n      ")}`;
      assert(bad.length === 0, `${bad.length} serious/critical violation(s) on ${page.url()}:\n    ${bad.map(describe).join("\n    ")}`);
      return minor.size ? `${minor.size} minor/moderate: ${[...minor].join(", ")}` : `${rules} rules pass, light and dark`;
    });
  }

  /** Full-page screenshots at phone and desktop width; at phone width nothing may scroll sideways. */
  async function capture(name, reached = true) {
    if (!reached) return console.log(`skip screenshots: ${name} (the page was not reached)`);
    await t.check(`screenshots: ${name} (phone: no horizontal scroll)`, async () => {
      await page.setViewportSize(PHONE);
      try {
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
        const { scrollWidth, innerWidth, wide } = await page.evaluate(() => ({
          scrollWidth: document.documentElement.scrollWidth,
          innerWidth: window.innerWidth,
          wide: [...document.querySelectorAll("body *")]
            .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
            .slice(0, 5)
            .map(
              (e) =>
                `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""}${e.className && typeof e.className === "string" ? `.${e.className.trim().split(/\s+/).join(".")}` : ""}`,
            ),
        }));
        await screenshot(page, `reader-${name}-phone`, { fullPage: true });
        assert(scrollWidth <= innerWidth, `scrolls sideways at ${PHONE.width} px: scrollWidth ${scrollWidth} > ${innerWidth}; wide: ${wide.join(", ")}`);
      } finally {
        await page.setViewportSize(DESKTOP);
      }
      await screenshot(page, `reader-${name}-desktop`, { fullPage: true });
      return `reader-${name}-{phone,desktop}.png`;
    });
  }

  /** Runs `fn` with the page at phone width, then back at desktop width. */
  async function atPhone(fn) {
    await page.setViewportSize(PHONE);
    try {
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      return await fn();
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  }

  // ---- home, signed out -------------------------------------------------------------------------------------
  let home = false;
  await t.check("home page: answers 200 HTML, a Log in link in the header", async () => {
    const res = await goto("/");
    assert(res.headers()["content-type"]?.includes("text/html"), `content-type ${res.headers()["content-type"]}`);
    home = true;
    await banner.getByRole("link", { name: "Log in" }).waitFor();
  });
  await t.check("home page, an empty site: what Storyloom is in one line, and an invitation to start the first story", async () => {
    need(home, "the home page");
    const line = await shown(page.getByRole("heading", { level: 1 }));
    assert(line.startsWith("Storyloom is where people and bots write branching stories together"), `the heading says ${JSON.stringify(line)}`);
    const start = page.getByRole("link", { name: "Start the first story" });
    assert((await start.getAttribute("href")) === "/stories/new", `"Start the first story" links to ${await start.getAttribute("href")}`);
    return line;
  });
  await t.check("favicon: /favicon.ico and the page's icon (/favicon.svg) are images (no 404 in the console)", async () => {
    const types = [];
    for (const path of ["/favicon.ico", "/favicon.svg"]) {
      const res = await fetch(`${origin}${path}`);
      assert(res.status === 200 && res.headers.get("content-type")?.startsWith("image/"), `${path} → ${res.status} ${res.headers.get("content-type")}`);
      types.push(`${path} ${res.headers.get("content-type")}`);
    }
    const icons = await page.locator('link[rel="icon"]').evaluateAll((links) => links.map((l) => l.getAttribute("href")));
    assert(icons.includes("/favicon.ico") && icons.includes("/favicon.svg"), `the page's icons: ${icons.join(", ")}`);
    return types.join(", ");
  });
  await t.check("phone: the header folds into a menu (the links behind a Menu button), the search box stays", async () => {
    need(home, "the home page");
    return atPhone(async () => {
      const header = await banner.boundingBox();
      assert(header && header.height <= 120, `the header is ${header?.height} px tall at ${PHONE.width} px`);
      const login = banner.getByRole("link", { name: "Log in" });
      assert(!(await login.isVisible()), '"Log in" shows before the menu is opened');
      await page.getByRole("searchbox").waitFor();
      const menu = banner.locator("summary", { hasText: "Menu" });
      await menu.click();
      await login.waitFor();
      await menu.click();
      await login.waitFor({ state: "hidden" });
      return `header ${Math.round(header.height)} px; the menu opens and closes`;
    });
  });
  await audit("home", home);
  await capture("home", home);

  // ---- 1. register ------------------------------------------------------------------------------------------
  let signedIn = false;
  let registerPage = false;
  await t.check("register page: answers 200 with its form", async () => {
    await goto("/register");
    await page.getByRole("button", { name: "Create account" }).waitFor();
    registerPage = true;
  });
  await audit("register", registerPage);
  await capture("register", registerPage);
  await t.check("register: the form creates the account, the header says Signed in as <username>", async () => {
    await page.getByLabel("Username", { exact: true }).fill(human.username);
    await page.getByLabel("Email", { exact: true }).fill(human.email);
    await page.getByLabel("Password", { exact: true }).fill(human.password);
    const sent = await submit(page.getByRole("button", { name: "Create account" }), "Create account");
    const header = await shown(banner);
    assert(
      new RegExp(`Signed in as\\s+${human.username}\\b`).test(header),
      `header after registering (${sent.status} → ${sent.url}): ${JSON.stringify(header)}`,
    );
    signedIn = true;
    const cookie = sent.headers["set-cookie"] ?? "";
    human.setCookie = cookie;
    return `POST → ${sent.status}, now at ${new URL(sent.url).pathname}`;
  });
  await t.check("register: the session cookie is HttpOnly, SameSite=Lax, not Secure on 127.0.0.1", async () => {
    need(signedIn, "the registered session");
    const header = human.setCookie;
    assert(header, "the register response set no cookie");
    // One Set-Cookie line per cookie; the session is the one that is not being deleted.
    const lines = header.split("\n").filter((l) => !/max-age=0\b/i.test(l));
    assert(lines.length >= 1, `only deletions in Set-Cookie: ${header}`);
    for (const line of lines) {
      const attrs = line.split(";").map((a) => a.trim().toLowerCase());
      assert(attrs.includes("httponly"), `not HttpOnly: ${line}`);
      assert(attrs.includes("samesite=lax"), `not SameSite=Lax: ${line}`);
      assert(!attrs.includes("secure"), `Secure on 127.0.0.1 (the browser would drop it on http): ${line}`);
    }
    const jar = await browser.context.cookies(origin);
    assert(jar.length >= 1, "the browser kept no cookie for this origin");
    human.cookieNames = jar.map((c) => c.name);
    for (const c of jar) assert(c.httpOnly && c.sameSite === "Lax" && !c.secure, `browser cookie ${c.name}: ${JSON.stringify(c)}`);
    return lines.map((l) => l.replace(/=[^;]*/, "=…")).join(" | ");
  });

  // ---- 2. a new story ---------------------------------------------------------------------------------------
  let storyPath = null;
  let newStoryPage = false;
  await t.check('new story: the header\'s "New story" link opens the form', async () => {
    need(signedIn, "the session");
    await banner.getByRole("link", { name: "New story" }).click();
    await page.waitForURL(/\/stories\/new$/);
    await page.getByLabel("Title", { exact: true }).waitFor();
    newStoryPage = true;
  });
  await audit("new story", newStoryPage);
  await capture("new-story", newStoryPage);
  await t.check("new story: typing a tag's beginning after a comma offers the existing tag, the tags before it kept (GET /api/v1/tags)", async () => {
    need(newStoryPage, "the new story form");
    const other = await api("/auth/register", {
      method: "POST",
      body: { username: `tagger_${run}`, email: `tagger_${run}@example.com`, password: "correct horse battery", user_type: "human" },
    });
    await api("/stories", {
      method: "POST",
      token: other.access_token,
      body: {
        title: `Keepers ${run}`,
        background: "Another lighthouse, far to the south.",
        starter: "It began.",
        initial_segments: ["one two three", "four five six", "seven eight nine"],
        language: "en",
        min_length: 3,
        max_length: 50,
        tags: [SUGGESTED],
      },
    });
    const field = page.getByLabel("Tags", { exact: true });
    await field.fill(`${TAG}, LIGHTHOUSE KEEP`);
    const wanted = `${TAG}, ${SUGGESTED}`;
    await page.waitForFunction((v) => [...document.querySelectorAll("#tags-suggestions option")].some((o) => o.value === v), wanted, { timeout: TIMEOUT });
    await field.fill("");
    return `offered: ${wanted}`;
  });
  await t.check("new story: the counter follows the form's language, with the server's rule (zh counts characters, en words)", async () => {
    need(newStoryPage, "the new story form");
    const field = page.getByLabel("Segment 1", { exact: true });
    const counter = page.locator("#segment_1-count");
    await page.getByLabel("Shortest segment", { exact: true }).fill("3");
    await page.getByLabel("Longest segment", { exact: true }).fill("200");
    await page.getByLabel("Language", { exact: true }).selectOption("zh");
    await field.fill("海风 吹过\n灯塔。");
    const zh = (await counter.textContent()) ?? "";
    assert(zh.startsWith("7 characters (allowed 3–200)"), `zh counter: ${zh}`);
    await page.getByLabel("Language", { exact: true }).selectOption("en");
    const en = (await counter.textContent()) ?? "";
    assert(en.startsWith("3 words (allowed 3–200) · ok"), `en counter after switching: ${en}`);
    await field.fill("");
    return `${zh} / ${en}`;
  });
  await t.check('new story: filled in and sent with "Create story", it lands on /stories/{id} showing title and main line', async () => {
    need(signedIn, "the session");
    await page.getByLabel("Title", { exact: true }).fill(story.title);
    await page.getByLabel("Language", { exact: true }).selectOption("en");
    await page.getByLabel("Background", { exact: true }).fill(story.background);
    await page.getByLabel("Style rules", { exact: true }).fill(story.style);
    await page.getByLabel("Shortest segment", { exact: true }).fill("3");
    await page.getByLabel("Longest segment", { exact: true }).fill("200");
    await page.getByLabel("Opening", { exact: true }).fill(story.opening);
    for (const [i, text] of story.segments.entries()) await page.getByLabel(`Segment ${i + 1}`, { exact: true }).fill(text);
    await page.getByLabel("Tags", { exact: true }).fill(`${TAG}, ${SUGGESTED}`);
    await page.getByLabel("Rating", { exact: true }).selectOption("teen");
    await page.getByLabel("death", { exact: true }).check();
    const sent = await submit(page.getByRole("button", { name: "Create story" }), "Create story");
    const path = new URL(page.url()).pathname;
    assert(
      /^\/stories\/[^/]+$/.test(path) && path !== "/stories/new",
      `after "Create story" (POST → ${sent.status}) the page is ${path}: ${(await bodyText()).slice(0, 300)}`,
    );
    await page.getByRole("heading", { level: 1, name: story.title }).waitFor();
    const text = await bodyText();
    const missing = [story.opening, ...story.segments].filter((s) => !text.includes(s));
    assert(missing.length === 0, `main line text not shown: ${missing.join(" | ")}`);
    storyPath = path;
    return `POST → ${sent.status}, ${path}`;
  });
  await t.check("story page: the chips say who wrote it (Human), the rating, the warning and the tags, each tag linking to its page", async () => {
    need(storyPath, "the story");
    const chips = page.getByRole("list", { name: "About this story" });
    const text = (await shown(chips)).replace(/\s+/g, " ");
    for (const want of ["Human", "Rated Teen", "death", TAG, SUGGESTED]) assert(text.includes(want), `the chips say ${JSON.stringify(text)}, without ${want}`);
    const href = await chips.getByRole("link", { name: TAG }).getAttribute("href");
    assert(href === `/tags/${encodeURIComponent(TAG.toLowerCase())}`, `the tag links to ${href}`);
    return text;
  });
  await t.check('story page: "Continue this story" under the main line opens the main line\'s write form', async () => {
    need(storyPath, "the story");
    const link = page.getByRole("link", { name: "Continue this story" });
    const href = await link.getAttribute("href");
    assert(/^\/branches\/[^/#]+#write-form$/.test(href ?? ""), `it links to ${href}`);
    return href;
  });
  await audit("story", storyPath);
  await capture("story", storyPath);

  let tagPath = null;
  await t.check("tag page: the story's tag chip opens its page, which lists the story with its chips", async () => {
    need(storyPath, "the story");
    await page.getByRole("list", { name: "About this story" }).getByRole("link", { name: TAG }).click();
    await page.waitForURL(/\/tags\//);
    await page.getByRole("heading", { level: 1, name: `Stories tagged “${TAG}”` }).waitFor();
    await page.getByRole("link", { name: story.title }).waitFor();
    tagPath = new URL(page.url()).pathname;
    return tagPath;
  });
  await audit("tag page", tagPath);
  await capture("tag", tagPath);

  let searched = false;
  await t.check("search: the header's box finds the story by a word of its background and its opening segment, the word marked", async () => {
    need(storyPath, "the story");
    await banner.getByRole("searchbox", { name: "Search stories and segments" }).fill("lamp");
    await banner.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/\/search\?q=lamp$/);
    await page.getByRole("heading", { level: 1, name: "Results for “lamp”" }).waitFor();
    const results = page.locator("ol.search-results");
    // Search finds a write some seconds after its answer (the index is copied to its shard through a queue): a person
    // who searched too soon searches again.
    for (let tries = 0; (await results.locator("mark").count()) < 2 && tries < 15; tries++) {
      await page.waitForTimeout(1000);
      await page.reload();
    }
    await results.getByRole("link", { name: story.title }).first().waitFor();
    const marks = await results.locator("mark").allInnerTexts();
    assert(marks.length >= 2 && marks.every((m) => m.toLowerCase() === "lamp"), `the marks say ${JSON.stringify(marks)}`);
    const box = await banner.getByRole("searchbox", { name: "Search stories and segments" }).inputValue();
    assert(box === "lamp", `the box keeps ${JSON.stringify(box)}`);
    searched = true;
    return `${marks.length} marks`;
  });
  await audit("search", searched);
  await capture("search", searched);
  await t.check("search: a segment's hit opens its place on its branch's page", async () => {
    need(searched, "the search");
    const hit = page.locator("ol.search-results").getByRole("link", { name: new RegExp(`^${story.title} #1$`) });
    await hit.click();
    await page.waitForURL(/\/branches\/[^/]+#s-/);
    const anchor = new URL(page.url()).hash;
    assert(await page.locator(anchor).isVisible(), `the page has no visible ${anchor}`);
    return anchor;
  });

  let editPage = false;
  await t.check("edit: \"Edit this story\" opens the owner's form, filled with the story's tags", async () => {
    need(storyPath, "the story");
    await goto(storyPath);
    await page.getByRole("link", { name: "Edit this story" }).click();
    await page.waitForURL(/\/edit$/);
    const tags = await page.getByLabel("Tags", { exact: true }).inputValue();
    assert(tags === `${TAG}, ${SUGGESTED}`, `the form's tags: ${tags}`);
    editPage = true;
  });
  await audit("edit story", editPage);
  await capture("edit-story", editPage);
  let mature = false;
  await t.check('edit: the rating changed to Mature and "Save": the story page shows "Rated Mature"', async () => {
    need(editPage, "the edit form");
    await page.getByLabel("Rating", { exact: true }).selectOption("mature");
    await submit(page.getByRole("button", { name: "Save" }), "Save");
    assert(new URL(page.url()).pathname === storyPath, `after saving the page is ${page.url()}`);
    await page.getByRole("list", { name: "About this story" }).getByText("Rated Mature").waitFor();
    mature = true;
  });

  let prefsSaved = false;
  await t.check('preferences: the header\'s "Preferences", "Hide stories rated mature" and "Save preferences": "Saved."', async () => {
    need(mature, "the mature story");
    await banner.getByRole("link", { name: "Preferences" }).click();
    await page.waitForURL(/\/preferences$/);
    await page.getByLabel("Hide stories rated mature", { exact: true }).check();
    await submit(page.getByRole("button", { name: "Save preferences" }), "Save preferences");
    await page.getByRole("status").getByText("Saved.").waitFor();
    prefsSaved = true;
  });
  await audit("preferences", prefsSaved);
  await capture("preferences", prefsSaved);
  await t.check("preferences: kept with the account, they leave the mature story out of the home page, which says so", async () => {
    need(prefsSaved, "the saved preference");
    await goto("/");
    const text = await bodyText();
    // The list, not the page: "Continue reading" may name the story the reader has a place in.
    const list = page.locator("ol.story-list");
    const listed = (await list.count()) ? ((await list.textContent()) ?? "") : "";
    assert(!listed.includes(story.title), "the mature story is still listed");
    assert(text.includes("Your preferences leave out mature stories"), "the home page does not say what it leaves out");
    // Back as it was, for the rest of the walk.
    await goto("/preferences");
    await page.getByLabel("Hide stories rated mature", { exact: true }).uncheck();
    await submit(page.getByRole("button", { name: "Save preferences" }), "Save preferences");
    await goto("/");
    assert((await bodyText()).includes(story.title), "the story is not listed again once the preference is off");
  });

  // Back on the story's page, where the walk goes on.
  if (storyPath) await page.goto(`${origin}${storyPath}`, { waitUntil: "load" });

  // ---- 3. the main line's branch page -----------------------------------------------------------------------
  let mainPath = null;
  await t.check('story page: "segments, votes and comments" in the main line heading opens its branch, whose path page the map links', async () => {
    need(storyPath, "the story");
    const link = page.getByRole("heading", { name: /The main line/ }).getByRole("link", { name: "segments, votes and comments" });
    const href = await link.getAttribute("href");
    const listed = await page
      .getByRole("navigation", { name: "Branch map as a list" })
      .getByRole("link")
      .evaluateAll((links) => links.map((a) => a.getAttribute("href")));
    assert(listed.includes(`${href}/read`), `the map's list does not link ${href}/read (it links ${listed.join(", ")})`);
    await link.click();
    await page.waitForURL(/\/branches\/[^/]+$/);
    mainPath = new URL(page.url()).pathname;
    await page.getByText(story.segments[2]).first().waitFor();
    return mainPath;
  });

  const writeForm = page.locator("form").filter({ has: page.getByLabel("Next segment", { exact: true }) });
  const reading = page.getByRole("region", { name: "The story so far" });
  await t.check('branch page: #live-status says "Live"', async () => {
    need(mainPath, "the branch page");
    const status = page.locator("#live-status");
    try {
      await page.waitForFunction(() => /^Live\b/.test(document.querySelector("#live-status")?.textContent?.trim() ?? ""), null, { timeout: TIMEOUT });
    } catch {
      const n = await status.count();
      throw new Error(n ? `#live-status says ${JSON.stringify(await status.first().textContent())} after ${TIMEOUT / 1000} s` : "no #live-status on the page");
    }
    return (await status.textContent()).trim();
  });
  await audit("branch (signed in)", mainPath);

  await t.check("write: a 1-word segment is refused in words (role=alert inside the form), not as a JSON envelope", async () => {
    need(mainPath, "the branch page");
    await page.getByLabel("Next segment", { exact: true }).fill(SHORT);
    // The server's check is the one under test: constraint validation in the browser is switched off for it.
    await writeForm.evaluate((f) => {
      f.noValidate = true;
    });
    const sent = await submit(writeForm.getByRole("button", { name: "Add segment" }), "Add segment (too short)");
    const alert = page
      .locator("form")
      .filter({ has: page.getByLabel("Next segment", { exact: true }) })
      .getByRole("alert");
    await alert
      .first()
      .waitFor()
      .catch(() => {
        throw new Error(`no role=alert inside the write form after POST → ${sent.status}; page: ${page.url()}`);
      });
    const said = await shown(alert.first());
    assert(/minimum|at least|too short|fewer/i.test(said), `the alert does not say why: ${JSON.stringify(said)}`);
    const text = await bodyText();
    assert(!text.includes('"error"') && !text.includes('"code"'), `the page shows a JSON envelope: ${text.slice(0, 300)}`);
    assert(!(await reading.getByText(SHORT, { exact: true }).count()), "the refused segment is shown in the story");
    return `POST → ${sent.status}: ${JSON.stringify(said)}`;
  });
  await audit("branch (write error)", mainPath);

  await t.check('write: the live counter follows the typing ("4 words", rule 3–200); "Add segment" 303 → GET shows it', async () => {
    need(mainPath, "the branch page");
    const box = page.getByLabel("Next segment", { exact: true });
    await box.fill("");
    await box.pressSequentially(HUMAN_SEGMENT);
    const counter = page.locator("output#write-count");
    await counter
      .filter({ hasText: /\b4 words\b/ })
      .waitFor()
      .catch(async () => {
        throw new Error(`output#write-count says ${JSON.stringify((await counter.count()) ? await counter.textContent() : "(missing)")} after typing 4 words`);
      });
    const count = (await counter.textContent()).trim();
    assert(/3\s*[–-]\s*200/.test(count), `the counter does not state the rule 3–200: ${JSON.stringify(count)}`);
    const sent = await submit(writeForm.getByRole("button", { name: "Add segment" }), "Add segment");
    assert(
      sent.status === 303 && sent.next?.method() === "GET",
      `the POST answered ${sent.status}${sent.next ? ` → ${sent.next.method()}` : ""}, not 303 → GET`,
    );
    await reading
      .getByText(HUMAN_SEGMENT)
      .first()
      .waitFor()
      .catch(() => {
        throw new Error(`the new segment is not in "The story so far" after 303 → ${sent.url}`);
      });
    return `counter ${JSON.stringify(count)}; 303 → ${new URL(sent.url).pathname}${new URL(sent.url).hash}`;
  });

  let branchVoted = false;
  await t.check('vote: "Vote this branch up" makes #branch-score +1 (the "down" button is there too)', async () => {
    need(mainPath, "the branch page");
    await page.getByRole("button", { name: "Vote this branch down" }).waitFor();
    await page.getByRole("button", { name: "Vote this branch up" }).click();
    const score = page.locator("#branch-score");
    await score
      .filter({ hasText: "+1" })
      .waitFor()
      .catch(async () => {
        throw new Error(`#branch-score says ${JSON.stringify((await score.count()) ? await score.textContent() : "(missing)")}`);
      });
    await page.waitForLoadState("load");
    branchVoted = true;
    return (await score.textContent()).trim();
  });

  let commented = false;
  await t.check('comment: "Post comment" shows it', async () => {
    need(mainPath, "the branch page");
    await page.getByLabel("Comment", { exact: true }).fill(COMMENT);
    const sent = await submit(page.getByRole("button", { name: "Post comment" }), "Post comment");
    await page
      .getByText(COMMENT)
      .first()
      .waitFor()
      .catch(() => {
        throw new Error(`the comment is not shown after POST → ${sent.status}`);
      });
    commented = true;
    return `POST → ${sent.status}`;
  });

  await t.check('reply: the comment\'s "Reply" opens a form; "Post reply" nests the reply under it', async () => {
    need(commented, "the comment");
    const item = page
      .locator("li")
      .filter({ has: page.getByText(COMMENT) })
      .last();
    const details = item
      .locator("details")
      .filter({ has: page.locator("summary", { hasText: "Reply" }) })
      .first();
    await details.locator("summary").click();
    assert(await details.evaluate((d) => d.open), "the Reply details did not open");
    await details.getByLabel("Reply", { exact: true }).fill(REPLY);
    const sent = await submit(details.getByRole("button", { name: "Post reply" }), "Post reply");
    await page.getByText(REPLY).first().waitFor();
    const nested = await page.evaluate(
      ([comment, reply]) => {
        const el = [...document.querySelectorAll("main *")].find((e) => e.children.length === 0 && e.textContent.trim() === reply);
        const own = el?.closest("li");
        const parent = own?.parentElement?.closest("li");
        return !!parent && parent.textContent.includes(comment) && !own.textContent.includes(comment);
      },
      [COMMENT, REPLY],
    );
    assert(nested, "the reply is not in a list nested inside the comment's item");
    return `POST → ${sent.status}`;
  });
  await audit("branch (comments)", mainPath);

  // ---- 6. a form POST from another site is refused ----------------------------------------------------------
  await t.check("origin: a form POST with Origin http://evil.example and the session cookie is 403 and writes nothing", async () => {
    need(commented, "the comment form");
    const form = page.locator("form").filter({ has: page.getByLabel("Comment", { exact: true }) });
    const box = page.getByLabel("Comment", { exact: true });
    await box.fill(EVIL_COMMENT);
    const { action, fields } = await form.evaluate((f) => ({ action: f.action, fields: [...new FormData(f)].map(([k, v]) => [k, String(v)]) }));
    await box.fill("");
    const cookie = (await browser.context.cookies(origin)).map((c) => `${c.name}=${c.value}`).join("; ");
    assert(cookie, "no session cookie in the browser");
    const post = (from, body) =>
      fetch(action, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, origin: from, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(body),
      });
    const evil = await post("http://evil.example", fields);
    const evilBody = await evil.text();
    assert(evil.status === 403, `${new URL(action).pathname} from another origin → ${evil.status}`);
    await new Promise((r) => setTimeout(r, 1100)); // past the 1 s public read micro-cache
    const branchId = mainPath.split("/").pop();
    const listed = async () => (await api(`/branches/${branchId}/comments?limit=100`)).data.comments.map((c) => c.content);
    assert(!(await listed()).includes(EVIL_COMMENT), "the refused comment was written");
    // The same request from this origin is accepted: the cookie was good, the Origin is what was refused.
    const control = await post(
      origin,
      fields.map(([k, v]) => [k, v === EVIL_COMMENT ? CONTROL_COMMENT : v]),
    );
    assert(control.status === 303, `the same POST with Origin ${origin} → ${control.status} (expected 303)`);
    assert((await listed()).includes(CONTROL_COMMENT), "the same-origin comment was not written");
    return `${new URL(action).pathname}: foreign 403 ${JSON.stringify(
      evilBody
        .replace(/<[^>]*>/g, " ")
        .replace(/\s+/g, " ")
        .trim()
        .slice(0, 80),
    )}; same-origin 303`;
  });

  // ---- 4. live: a bot writes through the API while the page is open -----------------------------------------
  let botId = null;
  let botSegmentShown = false;
  await t.check("live: a bot joins through the API; p.current-turn names it without a reload", async () => {
    need(mainPath, "the branch page");
    await page.reload({ waitUntil: "load" });
    await page.waitForFunction(() => /^Live\b/.test(document.querySelector("#live-status")?.textContent?.trim() ?? ""), null, { timeout: TIMEOUT });
    await page.evaluate(() => {
      window.__marker = "kept";
    });
    const turn = page.locator("p.current-turn");
    const before = (await turn.count()) ? await shown(turn) : "(none)";
    const reg = await api("/auth/bot/register", { method: "POST", body: { ...bot, language: "en", role: "narrator" } });
    bot.key = reg.data.api_key;
    botId = reg.data.bot_id;
    const joined = await api(`/branches/${mainPath.split("/").pop()}/join`, { method: "POST", token: bot.key, body: { role: "narrator" } });
    assert(joined.data.your_turn_order === 1, `join: ${JSON.stringify(joined.data)}`);
    await turn
      .filter({ hasText: bot.name })
      .waitFor()
      .catch(async () => {
        throw new Error(
          `p.current-turn says ${JSON.stringify((await turn.count()) ? await shown(turn) : "(missing)")} after the join (before: ${JSON.stringify(before)})`,
        );
      });
    assert((await page.evaluate(() => window.__marker)) === "kept", "the page was reloaded");
    return `${JSON.stringify(before)} → ${JSON.stringify(await shown(turn))}`;
  });

  await t.check("live: the bot's segment appears on the open page without a reload; the turn stays the bot's", async () => {
    need(botId, "the bot");
    const navigations = [];
    const onNav = (frame) => frame === page.mainFrame() && navigations.push(frame.url());
    page.on("framenavigated", onNav);
    try {
      const res = await api(`/branches/${mainPath.split("/").pop()}/segments`, { method: "POST", token: bot.key, body: { content: BOT_SEGMENT } });
      await reading
        .getByText(BOT_SEGMENT)
        .first()
        .waitFor()
        .catch(() => {
          throw new Error(`the bot's segment #${res.data.sequence_order} did not appear within ${TIMEOUT / 1000} s`);
        });
      assert((await page.evaluate(() => window.__marker)) === "kept" && navigations.length === 0, `the page navigated: ${navigations.join(", ")}`);
      const turn = await shown(page.locator("p.current-turn"));
      assert(turn.includes(bot.name), `p.current-turn after the bot wrote (one bot queued): ${JSON.stringify(turn)}`);
      botSegmentShown = true;
      return `segment #${res.data.sequence_order}; turn: ${JSON.stringify(turn)}`;
    } finally {
      page.off("framenavigated", onNav);
    }
  });
  await audit("branch (live update)", mainPath);

  await t.check('vote: "Vote segment #N up" on the bot\'s live segment (its buttons arrive without a reload) makes its .score +1', async () => {
    need(botId, "the bot's segment");
    assert((await page.evaluate(() => window.__marker)) === "kept", "the page was reloaded");
    const article = page
      .locator("article")
      .filter({ has: page.getByText(BOT_SEGMENT) })
      .last();
    const footer = await shown(article);
    const n = /#(\d+)/.exec(footer)?.[1];
    assert(n, `no "#N" in the bot segment's article: ${JSON.stringify(footer)}`);
    await page.getByRole("button", { name: `Vote segment #${n} down` }).waitFor();
    await page.getByRole("button", { name: `Vote segment #${n} up` }).click();
    const score = page
      .locator("article")
      .filter({ has: page.getByText(BOT_SEGMENT) })
      .last()
      .locator(".score");
    await score
      .filter({ hasText: "+1" })
      .waitFor()
      .catch(async () => {
        throw new Error(`the segment's .score says ${JSON.stringify((await score.count()) ? await score.first().textContent() : "(missing)")}`);
      });
    await page.waitForLoadState("load");
    return `segment #${n}: ${(await score.first().textContent()).trim()}${branchVoted ? `; #branch-score now ${(await page.locator("#branch-score").textContent()).trim()}` : ""}`;
  });
  await t.check("branch score: after one person's vote on the branch and one on a segment it says +2 from 2 votes, 1 on each", async () => {
    need(branchVoted, "the branch's vote");
    const line = (await shown(page.locator(".score-line"))).replace(/\s+/g, " ");
    assert(line === "score +2 from 2 votes: 1 on the branch, 1 on its segments", `the score says ${JSON.stringify(line)}`);
    return line;
  });
  await t.check("phone: each segment carries one row of controls (votes, fork, bookmark, report)", async () => {
    need(mainPath, "the branch page");
    return atPhone(async () => {
      const rows = await page.locator(".segment .segment-actions").evaluateAll((all) =>
        all.map((row) => {
          // A control starts a new line when it begins below the line so far (controls of one line differ in height).
          const boxes = [...row.children].map((c) => c.getBoundingClientRect()).sort((a, b) => a.top - b.top);
          let lines = 0;
          let bottom = Number.NEGATIVE_INFINITY;
          for (const b of boxes) {
            if (b.top >= bottom - 1) lines++;
            bottom = b.top >= bottom - 1 ? b.bottom : Math.max(bottom, b.bottom);
          }
          return { rows: lines, height: Math.round(row.getBoundingClientRect().height), controls: row.children.length };
        }),
      );
      assert(rows.length > 0, "no segment controls on the page");
      const wrapped = rows.filter((r) => r.rows > 1);
      assert(wrapped.length === 0, `segments whose controls take more than one row: ${JSON.stringify(wrapped)}`);
      return `${rows.length} segments, ${Math.max(...rows.map((r) => r.controls))} controls, ${Math.max(...rows.map((r) => r.height))} px tall at most`;
    });
  });
  await audit("branch (votes)", mainPath);
  await capture("branch", mainPath);

  // ---- fork -------------------------------------------------------------------------------------------------
  let forkPath = null;
  await t.check('fork: the last segment\'s "Fork from here" → "Create branch" lands on the new branch, titled', async () => {
    need(mainPath, "the branch page");
    // The segments are in reading order: the last "Fork from here" is the last segment's.
    const details = page
      .locator("details")
      .filter({ has: page.locator("summary", { hasText: "Fork from here" }) })
      .last();
    await details.locator("summary").click();
    await details.getByLabel("Branch title", { exact: true }).fill(FORK.title);
    await details.getByLabel("First segment (optional)", { exact: true }).fill(FORK.first);
    const sent = await submit(details.getByRole("button", { name: "Create branch" }), "Create branch");
    const path = new URL(page.url()).pathname;
    assert(/^\/branches\/[^/]+$/.test(path) && path !== mainPath, `after "Create branch" (POST → ${sent.status}) the page is ${path}`);
    await page.getByRole("heading", { level: 1, name: FORK.title }).waitFor();
    await reading.getByText(FORK.first).first().waitFor();
    if (botSegmentShown) await reading.getByText(BOT_SEGMENT).first().waitFor();
    forkPath = path;
    return `POST → ${sent.status}, ${path}`;
  });
  await audit("fork branch", forkPath);
  await capture("fork", forkPath);

  // ---- the story's map and one page per path -------------------------------------------------------
  let mapShown = null;
  await t.check("map: the story page draws its branches as an SVG the browser parses as XML, lanes in map order, the same links listed beside it", async () => {
    need(forkPath && botId, "the fork and the bot");
    // A second fork, by the bot through the API, from the main line's second segment: a map of three branches.
    const segments = (await api(`/branches/${mainPath.split("/").pop()}/segments`)).data.segments;
    const storyId = storyPath.split("/").pop();
    await api(`/stories/${storyId}/branches`, {
      method: "POST",
      token: bot.key,
      body: { title: SIDE.title, fork_at_segment_id: segments[1].id, initial_segment: SIDE.first },
    });
    await goto(storyPath);
    const html = await (await fetch(`${origin}${storyPath}`)).text();
    // Two drawings of the map (beside the bars on a wide screen, above them on a phone): each well-formed.
    const svgs = html.match(/<svg[\s\S]*?<\/svg>/g) ?? [];
    assert(svgs.length === 2, `${svgs.length} SVGs on the story page`);
    for (const svg of svgs) {
      const fault = await page.evaluate(
        (text) => new DOMParser().parseFromString(text, "image/svg+xml").querySelector("parsererror")?.textContent ?? null,
        svg,
      );
      assert(svg.length > 100 && fault === null, `the map's SVG is not well-formed XML: ${fault}`);
    }
    const map = page.locator("#map");
    const lanes = await map.locator("svg.wide a").evaluateAll((links) => links.map((a) => a.getAttribute("href")));
    const narrow = await map.locator("svg.narrow a").evaluateAll((links) => links.map((a) => a.getAttribute("href")));
    assert(JSON.stringify(narrow) === JSON.stringify(lanes), `the phone's map (${narrow.join(", ")}) is not the wide one (${lanes.join(", ")})`);
    const listed = await page
      .getByRole("navigation", { name: "Branch map as a list" })
      .getByRole("link")
      .evaluateAll((links) => links.map((a) => a.getAttribute("href")));
    const main = `${mainPath}/read`;
    assert(lanes.length === 3 && lanes[0] === main && lanes.includes(`${forkPath}/read`), `the map's lanes: ${lanes.join(", ")}`);
    assert(JSON.stringify(listed) === JSON.stringify(lanes), `the list beside the map (${listed.join(", ")}) is not its lanes (${lanes.join(", ")})`);
    await map.locator("svg.wide").getByText(SIDE.title, { exact: true }).waitFor();
    mapShown = storyPath;
    return `${lanes.length} lanes, well-formed`;
  });
  await t.check("phone: the map fits the screen's width, its text drawn near its own size (no sideways scrolling box)", async () => {
    need(mapShown, "the map");
    return atPhone(async () => {
      const svg = page.locator("#map svg.narrow");
      await svg.waitFor();
      assert(!(await page.locator("#map svg.wide").isVisible()), "the wide map shows on a phone");
      const box = await svg.boundingBox();
      assert(box && box.x >= 0 && box.x + box.width <= PHONE.width, `the map spans ${box?.x}–${box && box.x + box.width} px of ${PHONE.width}`);
      const size = await svg
        .locator("text.name")
        .first()
        .evaluate((e) => e.getBoundingClientRect().height);
      assert(size >= 12, `a branch's title is drawn ${size} px tall`);
      await svg.getByText(SIDE.title, { exact: true }).waitFor();
      return `${Math.round(box.width)} px wide; titles ${Math.round(size)} px tall`;
    });
  });
  await audit("story with its map", mapShown);
  await capture("map", mapShown);
  let pathPage = null;
  await t.check("path page: a lane of the map opens its branch's path as one page, the crossing marked, the choices under the fork point", async () => {
    need(mapShown, "the map");
    await page.locator("#map svg.wide").locator(`a[href="${forkPath}/read"]`).click();
    await page.waitForURL(new RegExp(`${forkPath}/read$`));
    await page.getByRole("heading", { level: 1, name: FORK.title }).waitFor();
    const text = await bodyText();
    const missing = [story.opening, ...story.segments, FORK.first].filter((s) => !text.includes(s));
    assert(missing.length === 0, `not on the path page: ${missing.join(" | ")}`);
    const crossing = await shown(page.locator(".crossing").first());
    assert(crossing.includes(`goes on with ${FORK.title}`), `the crossing says ${JSON.stringify(crossing)}`);
    const choices = await shown(page.locator(".choices").first());
    assert(choices.includes(`continue on ${SIDE.title}`), `the choices say ${JSON.stringify(choices)}`);
    pathPage = new URL(page.url()).pathname;
    return `${await page.locator('li[id^="s-"]').count()} segments; ${crossing}`;
  });
  await t.check("path page: a segment's number is a link to its anchor: the address keeps the place, and reopening it lands there", async () => {
    need(pathPage, "the path page");
    const last = page.locator('li[id^="s-"]').last();
    const id = await last.getAttribute("id");
    await last.getByRole("link", { name: `#${id.slice(2)}`, exact: true }).click();
    await page.waitForURL(new RegExp(`#${id}$`));
    const place = new URL(page.url());
    await page.goto("about:blank");
    await goto(place.pathname + place.hash);
    const seen = await page.evaluate((anchor) => {
      const r = document.getElementById(anchor).getBoundingClientRect();
      return r.top >= 0 && r.top < window.innerHeight;
    }, id);
    assert(seen, `reopening …#${id} did not show that segment`);
    return page.url();
  });
  await t.check('path page: "EPUB" downloads the whole path as a book (a zip: mimetype first and stored), "Markdown" as text', async () => {
    need(pathPage, "the path page");
    await goto(pathPage);
    const fetched = async (name) => {
      const [file] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name, exact: true }).click()]);
      return { name: file.suggestedFilename(), bytes: readFileSync(await file.path()) };
    };
    const epub = await fetched("EPUB");
    assert(epub.name === `${story.title} - ${FORK.title}.epub`, `the EPUB is named ${JSON.stringify(epub.name)}`);
    const head = epub.bytes;
    assert(head.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 3, 4])), "the EPUB is not a zip");
    assert(head.readUInt16LE(8) === 0 && head.toString("latin1", 30, 38) === "mimetype", "its first file is not mimetype, stored");
    assert(head.toString("latin1", 38, 58) === "application/epub+zip", "its mimetype is not application/epub+zip");
    const md = await fetched("Markdown");
    const text = md.bytes.toString("utf8");
    assert(md.name.endsWith(".md") && text.includes(FORK.first) && text.includes(story.opening), `the Markdown (${md.name}) misses the path's text`);
    return `${epub.name} (${epub.bytes.length} bytes), ${md.name} (${md.bytes.length} bytes)`;
  });
  await audit("path page", pathPage);
  await capture("path", pathPage);

  // ---- bookmarks and the reader's place -------------------------------------------------------
  let bookmarked = false;
  await t.check('bookmark: "Bookmark segment #2" on the path page comes back to that segment, which now says "Bookmarked"', async () => {
    need(pathPage, "the path page");
    await goto(pathPage);
    const sent = await submit(page.getByRole("button", { name: "Bookmark segment #2", exact: true }), "Bookmark");
    assert(new URL(page.url()).hash === "#s-2", `after "Bookmark" (POST → ${sent.status}) the page is ${page.url()}`);
    await page.locator("#s-2").getByRole("link", { name: "Bookmarked", exact: true }).waitFor();
    bookmarked = true;
    return `POST → ${sent.status}, ${page.url()}`;
  });
  let bookmarksPage = false;
  await t.check('bookmarks: the header\'s "Bookmarks" lists it with its text; "Add a note" → "Save the note" keeps the note', async () => {
    need(bookmarked, "the bookmark");
    await banner.getByRole("link", { name: "Bookmarks", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Bookmarks" }).waitFor();
    const item = page.locator('li[id^="b-"]').first();
    const text = await shown(item);
    assert(text.includes(story.segments[0]) && text.includes("#2"), `the bookmark says ${JSON.stringify(text)}`);
    await item.locator("summary", { hasText: "Add a note" }).click();
    await item.getByLabel("Note (empty: none)", { exact: true }).fill(BOOKMARK_NOTE);
    const sent = await submit(item.getByRole("button", { name: "Save the note" }), "Save the note");
    await page.locator('li[id^="b-"] .note', { hasText: BOOKMARK_NOTE }).waitFor();
    bookmarksPage = true;
    return `POST → ${sent.status}, ${new URL(page.url()).pathname}${new URL(page.url()).hash}`;
  });
  await audit("bookmarks", bookmarksPage);
  await capture("bookmarks", bookmarksPage);
  let continued = false;
  await t.check("continue reading: the path page read to its end keeps the place when left (its script's beacon); the home page offers it there", async () => {
    need(pathPage, "the path page");
    await goto(pathPage);
    const last = await page.locator('li[id^="s-"]').last().getAttribute("id");
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    // Leaving the page sends the beacon; the home page may be read before its write lands, so it is asked again.
    const section = page.getByRole("region", { name: "Continue reading" });
    for (let i = 0; i < 10 && !(await section.count()); i++) await goto("/");
    const link = section.getByRole("link", { name: `${story.title}: ${FORK.title}`, exact: true });
    const href = need(await link.getAttribute("href"), "a Continue reading link to the fork");
    assert(href === `${pathPage}#${last}`, `Continue reading links to ${href}, not ${pathPage}#${last}`);
    const said = await shown(section);
    assert(said.includes("up to date"), `Continue reading says ${JSON.stringify(said)}`);
    continued = true;
    return said.split("\n").find((l) => l.includes(FORK.title));
  });
  await audit("home (continue reading)", continued);
  await capture("home-continue", continued);

  // ---- report: a segment, through its "Report" control --------------------------------------------------------
  let reported = null;
  await t.check('report: "Report" under a segment → reason Spam and a note → "Send report" lands on "Report sent"', async () => {
    need(mainPath, "the branch page");
    await goto(mainPath);
    reported = botSegmentShown ? BOT_SEGMENT : story.segments[2];
    const details = page
      .locator("article")
      .filter({ has: page.getByText(reported) })
      .last()
      .locator("details")
      .filter({ has: page.locator("summary", { hasText: "Report" }) });
    await details.locator("summary").click();
    await details.getByLabel("Reason", { exact: true }).selectOption("spam");
    await details.getByLabel("Note for the moderators (optional)", { exact: true }).fill(REPORT_NOTE);
    const sent = await submit(details.getByRole("button", { name: "Send report" }), "Send report");
    await page.getByRole("heading", { level: 1, name: "Report sent" }).waitFor();
    assert(new URL(page.url()).searchParams.get("sent") === "1", `after "Send report" (POST → ${sent.status}) the page is ${page.url()}`);
    return `POST → ${sent.status}, ${new URL(page.url()).pathname}`;
  });
  await audit("report sent", reported);
  await capture("report-sent", reported);

  // ---- the bot's page ---------------------------------------------------------------------------------------
  let botPage = false;
  await t.check("bot page: /bots/{id} shows its name and its segment", async () => {
    need(botId, "the bot");
    await goto(`/bots/${botId}`);
    botPage = true;
    await page.getByRole("heading", { level: 1, name: new RegExp(bot.name) }).waitFor();
    await page.getByText(BOT_SEGMENT).first().waitFor();
  });
  await audit("bot", botPage);
  await capture("bot", botPage);

  // ---- 4b. My bots and Connected apps --------------------------------------------------------------
  const myBot = { name: `own_bot_${run}`, model: "gpt-test" };
  let ownKey = null;
  await t.check('my bots: the header\'s "My bots" → "Make the bot" shows its key once, with a working copy button', async () => {
    need(signedIn, "the session");
    await banner.getByRole("link", { name: "My bots" }).click();
    await page.getByRole("heading", { level: 1, name: "My bots" }).waitFor();
    await page.getByLabel("Bot name", { exact: true }).fill(myBot.name);
    await page.getByLabel("Model", { exact: true }).fill(myBot.model);
    const made = await submit(page.getByRole("button", { name: "Make the bot" }), "Make the bot");
    ownKey = await shown(page.locator("code#api-key"));
    assert(ownKey.startsWith("slk_"), `no key shown: ${ownKey}`);
    assert(made.headers["cache-control"] === "no-store", `the key's page may be stored: ${made.headers["cache-control"]}`);
    await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert(copied === ownKey, `the clipboard holds ${JSON.stringify(copied)}`);
    const me = await api("/auth/me", { token: ownKey });
    assert(me.name === myBot.name, `the key is not the bot's: ${JSON.stringify(me)}`);
    await goto("/me/bots");
    assert(!(await bodyText()).includes(ownKey), "the key is shown again on the list");
    return `key ${ownKey.slice(0, 8)}…, copied`;
  });
  await audit("my bots", !!ownKey);
  await capture("my-bots", !!ownKey);

  await t.check('my bots: "Rotate the key of …" shows a new key; the old one is refused at once', async () => {
    need(ownKey, "the bot's key");
    await submit(page.getByRole("button", { name: `Rotate the key of ${myBot.name}` }), "Rotate");
    const fresh = await shown(page.locator("code#api-key"));
    assert(fresh.startsWith("slk_") && fresh !== ownKey, `no new key: ${fresh}`);
    const old = await fetch(`${origin}/api/v1/auth/me`, { headers: { authorization: `Bearer ${ownKey}` } });
    assert(old.status === 401, `the old key answers ${old.status}`);
  });

  let connected = false;
  /** The host's PKCE verifier. */
  const VERIFIER = `verifier-${run}-0123456789-0123456789-0123456789`;
  await t.check('connected apps: an app approved on the consent page is listed; "Revoke …" ends it', async () => {
    need(signedIn, "the session");
    const callback = `${origin}/e2e-host/callback`;
    const reg = await fetch(`${origin}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: `Reader Host ${run}`, redirect_uris: [callback], token_endpoint_auth_method: "none" }),
    }).then((r) => r.json());
    const query = new URLSearchParams({
      response_type: "code",
      client_id: reg.client_id,
      redirect_uri: callback,
      code_challenge: createHash("sha256").update(VERIFIER).digest("base64url"),
      code_challenge_method: "S256",
      state: "s",
      scope: "stories:read stories:write",
    });
    await goto(`/oauth/authorize?${query}`);
    await page.getByRole("heading", { level: 1, name: `Connect Reader Host ${run} to Storyloom?` }).waitFor();
    await page.getByLabel(`My bot ${myBot.name}: it joins queues and writes at its turns`).check();
    await Promise.all([page.waitForURL(/\/e2e-host\/callback\?/), page.getByRole("button", { name: "Approve" }).click()]);
    const code = new URL(page.url()).searchParams.get("code");
    assert(code, `no code: ${page.url()}`);
    // The host exchanges it: an app is listed once it holds tokens.
    const exchanged = await fetch(`${origin}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        client_id: reg.client_id,
        code,
        code_verifier: VERIFIER,
        redirect_uri: callback,
      }),
    });
    assert(exchanged.status === 200, `the code's exchange answered ${exchanged.status}: ${await exchanged.text()}`);
    await goto("/me/apps");
    await page.getByRole("heading", { name: `Reader Host ${run}` }).waitFor();
    assert((await bodyText()).includes(`acts as the bot ${myBot.name}`), "the app's identity is not shown");
    connected = true;
    // Revoke asks first: its summary opens the question, whose own button revokes.
    await page.getByText(`Revoke Reader Host ${run}…`).click();
    await submit(page.getByRole("button", { name: `Yes, revoke Reader Host ${run}` }), "Revoke");
    assert(!(await bodyText()).includes(`Reader Host ${run}`), "the revoked app is still listed");
  });
  await audit("connected apps", connected);
  await capture("connected-apps", connected);

  // ---- 7. follow, and the inbox live ---------------------------------------------------------------
  let followed = false;
  await t.check('follow: the main line\'s "Follow" → "Following · Unfollow", 1 follower', async () => {
    need(mainPath, "the branch page");
    await goto(mainPath);
    const sent = await submit(page.getByRole("button", { name: "Follow this branch" }), "Follow");
    assert(new URL(page.url()).pathname === mainPath, `after "Follow" (POST → ${sent.status}) the page is ${page.url()}`);
    await page.getByRole("button", { name: "Unfollow this branch" }).waitFor();
    const count = await shown(page.locator(".follow-count"));
    assert(count === "1 follower", `the followers say ${JSON.stringify(count)}`);
    followed = true;
    return `POST → ${sent.status}; ${count}`;
  });
  let inboxShown = false;
  await t.check("inbox: open (Connecting…, then Live at once), the bot writes on the main line; one item appears without a reload, counted", async () => {
    need(followed && botId, "the follow and the bot");
    await banner.getByRole("link", { name: /^Inbox/ }).click();
    await page.waitForURL(/\/inbox$/);
    await page.getByRole("heading", { level: 1, name: "Inbox" }).waitFor();
    // The status is asked at once: "Live" well before the poll's five seconds, and nothing but "Connecting…" before.
    const live = await page.evaluate(() => document.getElementById("live-status")?.textContent?.trim());
    assert(live === "Connecting…" || live === "Live", `the inbox's badge first says ${JSON.stringify(live)}`);
    await page
      .waitForFunction(() => document.getElementById("live-status")?.textContent?.trim() === "Live", null, { timeout: 3000 })
      .catch(async () => {
        throw new Error(`the inbox's badge says ${JSON.stringify(await page.locator("#live-status").textContent())} after 3 s`);
      });
    await page.evaluate(() => {
      window.__marker = "kept";
    });
    // The human follows the main line and, as its owner, the story: one item for the segment, not two.
    await api(`/branches/${mainPath.split("/").pop()}/segments`, { method: "POST", token: bot.key, body: { content: INBOX_SEGMENT } });
    const item = page.locator("li.inbox-item.unread").filter({ hasText: INBOX_SEGMENT });
    await item
      .first()
      .waitFor({ timeout: 2 * TIMEOUT })
      .catch(async () => {
        throw new Error(`no unread item quoting the bot's segment within ${(2 * TIMEOUT) / 1000} s: ${(await bodyText()).slice(0, 300)}`);
      });
    assert((await item.count()) === 1, `${await item.count()} items quote the bot's segment`);
    assert((await item.first().textContent()).includes(`by ${bot.name}`), `the item does not name ${bot.name}`);
    assert((await page.evaluate(() => window.__marker)) === "kept", "the page was reloaded");
    const excerpt = await shown(item.first().locator(".excerpt"));
    assert(excerpt === INBOX_SEGMENT, `the item quotes ${JSON.stringify(excerpt)}`);
    const badge = await shown(banner.locator("#inbox-count"));
    const unread = await page.locator("li.inbox-item.unread").allInnerTexts();
    assert(badge === String(unread.length), `the header's count says ${JSON.stringify(badge)}; unread: ${JSON.stringify(unread)}`);
    inboxShown = true;
    // The bot forked a branch from the human's segment earlier in the walk: that is an item too.
    return `${(await shown(item.first().getByRole("link"))).replace(/\s+/g, " ")}; ${unread.length} unread`;
  });
  await audit("inbox", inboxShown);
  await capture("inbox", inboxShown);
  await t.check('inbox: "Mark read" → the item is read; "Mark all read" → the header counts nothing', async () => {
    need(inboxShown, "the inbox item");
    const before = await page.locator("li.inbox-item.unread").count();
    const item = page
      .locator("li.inbox-item")
      .filter({ hasText: `by ${bot.name}` })
      .first();
    const one = await submit(item.getByRole("button", { name: "Mark read" }), "Mark read");
    assert(new URL(page.url()).pathname === "/inbox", `after "Mark read" (POST → ${one.status}) the page is ${page.url()}`);
    assert((await page.locator("li.inbox-item.unread").count()) === before - 1, "not exactly that item was marked read");
    const all = await submit(page.getByRole("button", { name: "Mark all read" }), "Mark all read");
    assert((await page.locator("li.inbox-item.unread").count()) === 0, "an item is still unread");
    assert((await banner.locator("#inbox-count").count()) === 0, "the header still counts unread items");
    return `POST → ${one.status}, ${all.status}; ${(await shown(page.locator("#inbox-summary"))).replace(/\s+/g, " ")}`;
  });

  // ---- 5. log out, the login page ---------------------------------------------------------------------------
  await t.check('log out: the header\'s "Log out" → the header shows "Log in"', async () => {
    need(signedIn, "the session");
    await banner.getByRole("button", { name: "Log out" }).click();
    await banner.getByRole("link", { name: "Log in" }).waitFor();
    const header = await shown(banner);
    assert(!header.includes("Signed in as"), `still signed in: ${JSON.stringify(header)}`);
    const left = (await browser.context.cookies(origin)).filter((c) => human.cookieNames?.includes(c.name));
    assert(left.length === 0, `the session cookie is still there after logging out: ${left.map((c) => c.name).join(", ")}`);
  });
  await t.check("home, signed out: the story's chip says it was written by humans and a bot (Human + AI N %)", async () => {
    need(storyPath, "the story");
    await goto("/");
    const item = page.locator("ol.story-list > li").filter({ has: page.getByRole("link", { name: story.title }) });
    const chips = (await shown(item.locator("ul.chips"))).replace(/\s+/g, " ");
    assert(/^Human \+ AI \d+ %/.test(chips), `the chips: ${chips}`);
    return chips;
  });
  let anonymousPrefs = false;
  await t.check("preferences, signed out: kept in an HttpOnly cookie; the home page then leaves the mature story out", async () => {
    need(mature, "the mature story");
    await banner.getByRole("link", { name: "Preferences" }).click();
    await page.waitForURL(/\/preferences$/);
    await page.getByLabel("Hide stories rated mature", { exact: true }).check();
    await page.getByLabel("Hide stories with these tags", { exact: true }).fill("gore");
    await submit(page.getByRole("button", { name: "Save preferences" }), "Save preferences");
    const jar = await browser.context.cookies(origin);
    const cookie = jar.find((c) => c.name === "storyloom_prefs");
    assert(cookie?.httpOnly && cookie.sameSite === "Lax", `the preference cookie: ${JSON.stringify(cookie)}`);
    anonymousPrefs = true;
    await goto("/");
    assert(!(await bodyText()).includes(story.title), "the mature story is still listed");
    await browser.context.clearCookies({ name: "storyloom_prefs" });
    await goto("/");
    assert((await bodyText()).includes(story.title), "without the cookie the story is not listed");
    await goto("/preferences");
  });
  await audit("preferences (signed out)", anonymousPrefs);
  let loginPage = false;
  await t.check('login page: the header\'s "Log in" link opens it (a "Password" field)', async () => {
    const link = banner.getByRole("link", { name: "Log in" });
    if (await link.count()) await link.first().click();
    else await goto("/login");
    await page.waitForURL(/\/login\b/);
    await page.getByLabel("Password", { exact: true }).waitFor();
    loginPage = true;
  });
  await audit("login", loginPage);
  await capture("login", loginPage);

  // ---- 6. a moderator acts on the report -------------------------------------------------------------------
  let moderatorIn = false;
  await t.check("moderator: an account made moderator in D1 logs in through the login form", async () => {
    need(reported, "the report");
    const reg = await api("/auth/register", { method: "POST", body: { ...moderator, user_type: "human" } });
    await worker.sql(`UPDATE users SET role = 'moderator' WHERE id = '${reg.user.id}'`);
    await goto("/login");
    await page.getByLabel("Email", { exact: true }).fill(moderator.email);
    await page.getByLabel("Password", { exact: true }).fill(moderator.password);
    await submit(page.getByRole("button", { name: "Log in" }), "Log in");
    const header = await shown(banner);
    assert(header.includes(`Signed in as ${moderator.username}`), `header after logging in: ${JSON.stringify(header)}`);
    moderatorIn = true;
  });
  let queueShown = false;
  await t.check("moderator: /admin lists the report with the reported text and the reporter's note", async () => {
    need(moderatorIn, "the moderator's session");
    await goto("/admin");
    await page.getByRole("heading", { level: 1, name: "Open reports" }).waitFor();
    const item = page.locator("article.report-item").filter({ has: page.getByText(REPORT_NOTE) });
    await item.locator("blockquote").filter({ hasText: reported }).waitFor();
    queueShown = true;
    return (await shown(item.locator("header"))).replace(/\s+/g, " ");
  });
  await audit("admin queue", queueShown);
  await capture("admin", queueShown);
  await t.check('moderator: a reason and "Hide the segment" resolve it: the queue no longer lists it, the audit log does', async () => {
    need(queueShown, "the queue");
    const item = page.locator("article.report-item").filter({ has: page.getByText(REPORT_NOTE) });
    await item.getByLabel("Reason (recorded in the audit log)", { exact: true }).fill(HIDE_REASON);
    const sent = await submit(item.getByRole("button", { name: "Hide the segment" }), "Hide the segment");
    assert(new URL(page.url()).pathname === "/admin", `after hiding (POST → ${sent.status}) the page is ${page.url()}`);
    assert((await page.getByText(REPORT_NOTE).count()) === 0, "the resolved report is still in the open queue");
    await goto("/admin/audit");
    const row = page.locator("table.audit tr").filter({ hasText: HIDE_REASON }).filter({ hasText: "resolve_report (hide)" });
    await row.waitFor();
    return `POST → ${sent.status}; audit: ${(await shown(row)).replace(/\s+/g, " ")}`;
  });
  await audit("audit log", queueShown);
  await capture("audit", queueShown);
  await t.check('hidden: the branch page says "hidden by a moderator"; a visitor\'s copy of the page has no trace of the text', async () => {
    need(queueShown, "the hide");
    await goto(mainPath);
    await page.getByText("hidden by a moderator").first().waitFor();
    const visitor = await fetch(`${origin}${mainPath}`);
    const html = await visitor.text();
    assert(visitor.status === 200 && html.includes("hidden by a moderator"), `a visitor's page (${visitor.status}) does not say the segment is hidden`);
    assert(!html.includes(reported), "a visitor's page still carries the hidden text");
    return `${mainPath}: the notice shown; the visitor's HTML (${html.length} bytes) has no trace of the segment`;
  });
  await capture("hidden", queueShown);

  // ---- 8. the whole walk ------------------------------------------------------------------------------------
  await t.check("no request leaves 127.0.0.1", async () => {
    const foreign = browser.foreign();
    assert(foreign.length === 0, `requests to other hosts: ${foreign.map((r) => `${r.method} ${r.url}`).join(", ")}`);
    const sockets = browser.requests.filter((r) => r.resourceType === "websocket").length;
    return `${browser.requests.length} requests (${sockets} WebSocket), all to 127.0.0.1`;
  });
  await t.check("no page error and no CSP violation on any page", async () => {
    assert(browser.errors.length === 0, `page errors: ${browser.errors.join(" | ")}`);
    assert(browser.violations.length === 0, `CSP violations: ${JSON.stringify(browser.violations)}`);
  });
} catch (err) {
  t.fail("setup", err);
  if (worker) console.log(worker.log().slice(-2000));
} finally {
  await browser?.stop();
  await worker?.stop();
  cleanup();
}
console.log(`reader browser test took ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(t.report() ? 1 : 0);
