// Runs alone (vitest.config.ts): the home page lists every story, in an order it checks.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../src/app";
import { DATA_TABLES, call, createBranch, join, registerBot, registerHuman, storyWithSegments, submit, unique, vote, words } from "./helpers";
import { ORIGIN, type Page, get, page, trips, visible } from "./pages";
import { recordingD1, unindexedScans } from "./recording-d1";

function expectPage(res: Omit<Page, "location">, status: number) {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^text\/html; charset=utf-8/i);
  expect(res.text.startsWith("<!DOCTYPE html>")).toBe(true);
  expect(res.text).toMatch(/<html lang="en">/);
  expect(res.text).toMatch(/<title>[^<]+ · Storyloom<\/title>/);
  expect(res.text).toMatch(/<link rel="stylesheet" href="\/assets\/reader.css"\/?>/);
  for (const tag of ["header", "main", "nav", "footer"]) expect(res.text).toContain(`<${tag}`);
}

const canonicalOf = (res: Omit<Page, "location">) => /<link rel="canonical" href="([^"]+)"/.exec(res.text)?.[1];

const XSS = "<script>alert(1)</script>";
/** Every script tag of a page: only the reader's own static module may appear. */
const scriptsOf = (html: string) => html.match(/<script\b[^>]*>/gi) ?? [];
const READER_SCRIPT_TAG = '<script type="module" src="/reader/reader.js">';

let w: Awaited<ReturnType<typeof world>>;
async function world() {
  const { owner, story, segments } = await storyWithSegments({
    title: `Tide ${unique()} & <b>co</b>`,
    style_rules: "Present tense. No <em>markup</em>.",
  });
  const pin = await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "Read me", content: "Pinned context", type: "context" } });
  expect(pin.status, pin.text).toBe(201);
  const inactive = await call(`/stories/${story.id}/pins`, { token: owner.token, body: { title: "Old news", content: "gone", is_active: false } });
  expect(inactive.status, inactive.text).toBe(201);
  const bot = await registerBot();
  const other = await registerBot();
  const reader = await registerHuman();
  // A branch forked from the main line's third segment, with a bot writing on it in turn.
  const branch = await createBranch(owner.token, story.id, {
    title: "The <dry> harbour",
    fork_at_segment_id: segments[2].id,
    initial_segment: words(4, "fork"),
  });
  expect((await join(bot.token, branch.id)).status).toBe(201);
  expect((await join(other.token, branch.id)).status).toBe(201);
  const botSeg = await submit(bot.token, branch.id, `${XSS} the bot wrote`);
  expect(botSeg.status, botSeg.text).toBe(201);
  // A main-line segment after the fork point: on the story page, not on the branch's reading path.
  const later = await submit(owner.token, story.main_branch_id, "Later on the main line only.");
  expect(later.status, later.text).toBe(201);
  expect((await vote(reader.token, "segment", botSeg.body.data.id, 1)).status).toBe(201);
  expect((await vote(reader.token, "segment", segments[1].id, -1)).status).toBe(201);
  const rewrite = await call(`/segments/${segments[1].id}/rewrites`, { token: reader.token, body: { content: words(4, "rewritten") } });
  expect(rewrite.status, rewrite.text).toBe(201);
  const comment = await call(`/branches/${branch.id}/comments`, { token: reader.token, body: { content: `Top comment ${XSS}` } });
  expect(comment.status, comment.text).toBe(201);
  const reply = await call(`/branches/${branch.id}/comments`, {
    token: bot.token,
    body: { content: "A bot's reply", parent_comment_id: comment.body.data.id },
  });
  expect(reply.status, reply.text).toBe(201);
  // A branch of the branch, for the tree.
  const grandchild = await createBranch(reader.token, story.id, { title: "Deeper", parent_branch_id: branch.id });
  return {
    owner,
    story,
    segments,
    bot,
    other,
    reader,
    branch,
    grandchild,
    botSegId: botSeg.body.data.id as string,
    laterId: later.body.data.id as string,
    commentId: comment.body.data.id as string,
    replyId: reply.body.data.id as string,
  };
}

beforeAll(async () => {
  w = await world();
});

describe("the web reader", () => {
  it("home: stories newest first, each with language, owner kind, branch and segment counts, in one round trip", async () => {
    const newer = await storyWithSegments({
      language: "zh",
      min_length: 3,
      max_length: 50,
      initial_segments: ["故事故事故事", "故事故事故事", "故事故事故事"],
      starter: "开始。",
    });
    const res = await page("/");
    expectPage(res, 200);
    expect(trips(res)).toBe(1);
    expect(canonicalOf(res)).toBe(`${ORIGIN}/`);
    const text = visible(res.text);
    // Newest first: the story made just now comes before the world's.
    const at = (title: string) => text.indexOf(title);
    expect(at(newer.story.title)).toBeGreaterThan(-1);
    expect(at(w.story.title)).toBeGreaterThan(at(newer.story.title));
    expect(res.text).toContain(`href="/stories/${w.story.id}"`);
    // The world's story: 3 branches, 4 + 1 main-line segments + 2 on the branch.
    const item = text.slice(at(w.story.title), at(w.story.title) + 300);
    expect(item).toContain(`by ${w.owner.input.username} human · 3 branches · 7 segments · last written`);
    expect(res.text).toContain(`<article lang="zh">`);
  });

  it("home: ?sort=active puts the story with the most segments this week first, and ?page= pages", async () => {
    const res = await page("/?sort=active");
    expectPage(res, 200);
    expect(trips(res)).toBe(1);
    expect(canonicalOf(res)).toBe(`${ORIGIN}/?sort=active`);
    expect(visible(res.text)).toMatch(/Most active stories/);
    // A story with a week's writing sorts above the freshly made ones with fewer segments.
    const busy = await storyWithSegments();
    for (let i = 0; i < 4; i++) expect((await submit(busy.owner.token, busy.story.main_branch_id, words(4, `busy${i}`))).status).toBe(201);
    const fresh = await storyWithSegments();
    const active = visible((await page("/?sort=active")).text);
    expect(active.indexOf(busy.story.title)).toBeGreaterThan(-1);
    expect(active.indexOf(busy.story.title)).toBeLessThan(active.indexOf(fresh.story.title));
    expect(active).toContain(
      `${busy.story.title} A harbour town where the tide never comes back. Human Rated General by ${busy.owner.input.username} human · 1 branch · 8 segments · 8 this week · last written`,
    );
    // Newest first, the fresh story comes first instead.
    const newest = visible((await page("/")).text);
    expect(newest.indexOf(fresh.story.title)).toBeLessThan(newest.indexOf(busy.story.title));

    const second = await page("/?page=2");
    expectPage(second, 200);
    expect(trips(second)).toBe(1);
    expect(canonicalOf(second)).toBe(`${ORIGIN}/?page=2`);
    expect(second.text).toContain('rel="prev" href="/"');
    expect(visible(second.text)).toMatch(/Page 2 of \d+/);
    // Nonsense page numbers read as the first page.
    expect(canonicalOf(await page("/?page=abc"))).toBe(`${ORIGIN}/`);
  });

  it("a story: background, style rules, active pins, the main line in reading order, the branch map; one round trip", async () => {
    const res = await page(`/stories/${w.story.id}`);
    expectPage(res, 200);
    expect(trips(res)).toBe(1);
    expect(canonicalOf(res)).toBe(`${ORIGIN}/stories/${w.story.id}`);
    const text = visible(res.text);
    expect(res.text).toContain(`<title>${"Tide"}`);
    expect(text).toContain(w.story.title); // its "&" and "<b>" as text
    expect(res.text).not.toContain("<b>co</b>");
    expect(text).toContain("A harbour town where the tide never comes back.");
    expect(text).toContain("Present tense. No <em>markup</em>.");
    expect(text).toContain("Read me");
    expect(text).toContain("Pinned context");
    expect(text).not.toContain("Old news");
    // The main line, starter first, every segment once and in order, the later one included.
    const order = [...w.segments.map((s) => s.content as string), "Later on the main line only."].map((c) => text.indexOf(c));
    expect(order.every((i) => i > -1)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text).not.toContain("the bot wrote"); // the branch's segment is not the main line's
    // The map's list: main line, its branch, and the branch's branch nested inside it, each linked to its path page,
    // with score and count (the picture beside it: test/map.test.ts).
    expect(res.text).toContain(`href="/branches/${w.story.main_branch_id}"`);
    expect(res.text).toContain(`href="/branches/${w.story.main_branch_id}/read"`);
    expect(res.text).toContain(`href="/branches/${w.branch.id}/read"`);
    expect(res.text).toContain(`href="/branches/${w.grandchild.id}/read"`);
    expect(text).toMatch(/The <dry> harbour · score \+1 · 2 segments/);
    expect(text).toMatch(/Deeper · score 0 · 0 segments/);
    const tree = res.text.slice(res.text.indexOf('class="tree"'));
    expect(tree.indexOf(w.grandchild.id)).toBeGreaterThan(tree.indexOf(w.branch.id));
    expect(res.text).toMatch(/<article lang="en">/);
  });

  it("a branch: its reading path with authors, scores and rewrites, comments with replies, the turn queue; one round trip", async () => {
    const res = await page(`/branches/${w.branch.id}`);
    expectPage(res, 200);
    expect(trips(res)).toBe(1);
    expect(canonicalOf(res)).toBe(`${ORIGIN}/branches/${w.branch.id}`);
    const text = visible(res.text);
    // Ancestors up to the fork (the main line's first three segments), then the branch's own; not the later one.
    const path = [w.segments[0].content, w.segments[1].content, w.segments[2].content, words(4, "fork"), `${XSS} the bot wrote`].map((c) => text.indexOf(c));
    expect(path.every((i) => i > -1)).toBe(true);
    expect([...path].sort((a, b) => a - b)).toEqual(path);
    expect(text).not.toContain(w.segments[3].content);
    expect(text).not.toContain("Later on the main line only.");
    expect(text).toMatch(/#3 · \S+ human · score 0 · 0 rewrites · from main line ·/);
    expect(res.text).toContain(`from <a href="/branches/${w.story.main_branch_id}">main line</a>`);
    // Authors: the human as text, the bot linked to its page.
    expect(res.text).toContain(`href="/bots/${w.bot.id}"`);
    expect(text).toContain(`${w.bot.input.name} bot`);
    expect(text).toContain(`${w.owner.input.username} human`);
    // Scores and rewrites per segment.
    expect(text).toMatch(/#2 · \S+ human · score -1 · 1 rewrite /);
    expect(text).toMatch(/#5 · \S+ bot · score \+1 · 0 rewrites /);
    // Comments, the reply nested under its comment.
    expect(text).toContain(`Top comment ${XSS}`);
    const top = res.text.indexOf(`c-${w.commentId}`);
    const nested = res.text.indexOf(`c-${w.replyId}`);
    expect(top).toBeGreaterThan(-1);
    expect(nested).toBeGreaterThan(top);
    expect(res.text.slice(top, nested)).toContain("<ul>");
    expect(text).toContain("Comments (2)");
    // The queue, and whose turn it is (the bot wrote, so the other bot's).
    expect(text).toMatch(new RegExp(`Now writing: ${w.other.input.name} bot`));
    expect(text).toMatch(new RegExp(`1\\. ${w.bot.input.name} bot`));
    expect(text).toMatch(new RegExp(`2\\. ${w.other.input.name} bot · \\w+ writing`));
    // A reload link to the page itself, for readers without JavaScript; no script but the reader's own.
    expect(res.text).toContain(`href="/branches/${w.branch.id}">Reload</a>`);
    expect(scriptsOf(res.text)).toEqual([READER_SCRIPT_TAG]);
    // Breadcrumbs back to the story.
    expect(res.text).toContain(`href="/stories/${w.story.id}"`);
  });

  it("a bot: its name, model, reputation as the API computes it, and its latest segments; one round trip", async () => {
    const res = await page(`/bots/${w.bot.id}`);
    expectPage(res, 200);
    expect(trips(res)).toBe(1);
    expect(canonicalOf(res)).toBe(`${ORIGIN}/bots/${w.bot.id}`);
    const api = (await call(`/bots/${w.bot.id}/reputation`)).body.data;
    expect(api).toMatchObject({ reputation: 1, total_segments: 1, avg_score: 1 });
    const text = visible(res.text);
    expect(text).toContain(`${w.bot.input.name} bot`);
    expect(text).toContain("model test-model");
    expect(text).toMatch(/Reputation \+1 Segments written 1 Average score \+1/);
    expect(text).toContain(`${XSS} the bot wrote`);
    expect(res.text).not.toContain(XSS);
    expect(res.text).toContain(`href="/branches/${w.branch.id}#s-${w.botSegId}"`);
    expect(res.text).toContain(`href="/api/v1/bots/${w.bot.id}/reputation"`);
    expect(res.text).not.toMatch(/slk_|webhook/i);
  });

  it("a branch nobody queued on says anyone may write; the main line's page shows its own segments", async () => {
    const res = await page(`/branches/${w.story.main_branch_id}`);
    expectPage(res, 200);
    expect(trips(res)).toBe(1);
    const text = visible(res.text);
    expect(text).toContain("No bot has joined this branch");
    expect(text).toContain("Later on the main line only.");
    expect(text).toContain("No comments yet.");
  });

  it("a branch whose bots sit out (a limit refused each at its turn): each bot's return, and nobody's turn until the first", async () => {
    const { story } = await storyWithSegments();
    const branch = story.main_branch_id;
    const [a, b] = [await registerBot(), await registerBot()];
    for (const bot of [a, b]) await join(bot.token, branch);
    const sitOut = async (token: string) => {
      const res = await call(`/branches/${branch}/segments`, { token, body: { content: words(4) }, env: { LIMIT_SEGMENTS_PER_HOUR: "0" } });
      expect(res.status).toBe(429);
      return `${(res.body.error.details.sits_out_until as string).slice(0, 16).replace("T", " ")} UTC`;
    };
    const aBack = await sitOut(a.token);
    let text = visible((await page(`/branches/${branch}`)).text);
    expect(text).toMatch(new RegExp(`Now writing: ${b.input.name} bot`));
    expect(text).toContain(`1. ${a.input.name} bot · narrator · sits out until ${aBack}`);
    const bBack = await sitOut(b.token);
    text = visible((await page(`/branches/${branch}`)).text);
    expect(text).toMatch(new RegExp(`Nobody's turn until ${aBack} ?: every bot in the queue sits out`));
    expect(text).toContain(`2. ${b.input.name} bot · narrator · sits out until ${bBack}`);
  });

  it("user text is escaped everywhere: a segment containing a script tag shows as text", async () => {
    for (const path of ["/", `/stories/${w.story.id}`, `/branches/${w.branch.id}`, `/branches/${w.branch.id}/read`, `/bots/${w.bot.id}`]) {
      const res = await page(path);
      expect(res.status).toBe(200);
      expect(res.text, path).not.toContain(XSS);
      for (const tag of scriptsOf(res.text)) expect(tag, path).toBe(READER_SCRIPT_TAG);
    }
    const branch = await page(`/branches/${w.branch.id}`);
    expect(branch.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt; the bot wrote");
    expect(branch.text).toContain("The &lt;dry&gt; harbour");
  });

  it("every page has a strong ETag, and If-None-Match answers 304 with no body", async () => {
    for (const path of [
      "/",
      "/?sort=active",
      `/stories/${w.story.id}`,
      `/stories/${w.story.id}?expand=${w.branch.id}`,
      `/branches/${w.branch.id}`,
      `/branches/${w.branch.id}/read`,
      `/bots/${w.bot.id}`,
      "/assets/reader.css",
    ]) {
      const first = await page(path);
      const tag = first.headers.get("etag");
      expect(tag, path).toMatch(/^"[0-9a-f]+"$/);
      const again = await page(path, { "If-None-Match": tag! });
      expect(again.status, path).toBe(304);
      expect(again.text).toBe("");
      expect(again.headers.get("etag")).toBe(tag);
      const cacheControl = path === "/assets/reader.css" ? "public, max-age=3600" : "no-cache";
      expect(first.headers.get("cache-control"), path).toBe(cacheControl);
      expect(again.headers.get("cache-control"), path).toBe(cacheControl);
      if (path !== "/assets/reader.css") expect(trips(again), path).toBe(1);
    }
    // The tag follows the content: a new comment changes the branch page's.
    const before = (await page(`/branches/${w.branch.id}`)).headers.get("etag")!;
    expect((await call(`/branches/${w.branch.id}/comments`, { token: w.reader.token, body: { content: "Another" } })).status).toBe(201);
    const after = await page(`/branches/${w.branch.id}`, { "If-None-Match": before });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(before);
  });

  it("the stylesheet: served as CSS, no external font or URL, a CJK system font stack, one column", async () => {
    const res = await page("/assets/reader.css");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/css/);
    expect(trips(res)).toBe(0);
    expect(res.text).not.toMatch(/url\(|@import|@font-face|https?:/);
    expect(res.text).toMatch(/PingFang SC/);
    expect(res.text).toMatch(/Noto Sans CJK SC/);
    expect(res.text).toMatch(/max-width: 44rem/);
  });

  it("unknown ids and paths are HTML 404 pages; the API's unknown paths stay JSON", async () => {
    for (const path of [
      `/stories/${crypto.randomUUID()}`,
      `/branches/${crypto.randomUUID()}`,
      `/branches/${crypto.randomUUID()}/read`,
      `/branches/${w.branch.id}/read?page=2`,
      "/stories/not-an-id",
      `/bots/${crypto.randomUUID()}`,
      "/branches/%3Cscript%3E",
      "/nowhere",
    ]) {
      const res = await page(path);
      expectPage(res, 404);
      expect(visible(res.text), path).toMatch(/Not found/);
      expect(scriptsOf(res.text)).toEqual([]);
      expect(res.headers.get("etag")).toBeNull();
    }
    const story404 = await page(`/stories/${crypto.randomUUID()}`);
    expect(trips(story404)).toBe(1);
    const api = await call("/nowhere");
    expect(api.status).toBe(404);
    expect(api.headers.get("content-type")).toMatch(/application\/json/);
    expect(api.body.error.code).toBe("NOT_FOUND");
    const apiStory = await call(`/stories/${crypto.randomUUID()}`);
    expect(apiStory.status).toBe(404);
    expect(apiStory.body.status).toBe("error");
    // The API itself is unchanged beside the pages.
    const list = await call("/stories");
    expect(list.status).toBe(200);
    expect(list.body.status).toBe("success");
  });

  it("the anonymous read limit covers the pages too, refusing with an HTML 429 and Retry-After", async () => {
    const refuse = { limit: async () => ({ success: false }) } as unknown as RateLimit;
    const ctx = createExecutionContext();
    const res = await app.request(
      `${ORIGIN}/stories/${w.story.id}`,
      { headers: { "CF-Connecting-IP": "203.0.113.77" } },
      { ...env, READ_LIMITER: refuse },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const text = await res.text();
    expectPage({ status: res.status, headers: res.headers, text }, 429);
    expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(visible(text)).toContain("Too many requests");
  });

  it("the public read micro-cache serves a repeat page from memory, and a write through this isolate empties it", async () => {
    const cached = (path: string, headers: Record<string, string> = {}) => get(path, { headers, env: { READ_CACHE_MS: "60000" } });
    const path = `/branches/${w.branch.id}`;
    const first = await cached(path);
    expect(first.headers.get("x-read-cache")).toBeNull();
    expect(trips(first)).toBe(1);
    const hit = await cached(path);
    expect(hit.headers.get("x-read-cache")).toBe("hit");
    expect(trips(hit)).toBe(0);
    expect(hit.text).toBe(first.text);
    expect(hit.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(hit.headers.get("cache-control")).toBe("no-cache");
    const notModified = await cached(path, { "If-None-Match": first.headers.get("etag")! });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("cache-control")).toBe("no-cache");
    // The API's and the pages' entries never alias: the API's story read is still JSON.
    expect((await call(`/stories/${w.story.id}`, { env: { READ_CACHE_MS: "60000" } })).body.status).toBe("success");
    expect(
      (await call(`/branches/${w.branch.id}/comments`, { token: w.reader.token, body: { content: "Fresh ink" }, env: { READ_CACHE_MS: "60000" } })).status,
    ).toBe(201);
    const after = await cached(path);
    expect(after.headers.get("x-read-cache")).toBeNull();
    expect(visible(after.text)).toContain("Fresh ink");
  });

  it("absolute addresses come from PUBLIC_ORIGIN, never the request's Host: a page asked for under a foreign host never shows it, nor does the next reader's cached copy", async () => {
    const cached = async (url: string, bindings: Partial<typeof env> = {}) => {
      const ctx = createExecutionContext();
      const host = new URL(url).host;
      const headers = { Host: host, Accept: "text/html", "CF-Connecting-IP": "203.0.113.78" };
      const res = await app.request(url, { headers }, { ...env, READ_CACHE_MS: "60000", ...bindings }, ctx);
      await waitOnExecutionContext(ctx);
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    const { story } = await storyWithSegments(); // a page no other test has put in the micro-cache
    for (const path of [`/stories/${story.id}`, `/branches/${story.main_branch_id}`, "/?page=7"]) {
      const foreign = await cached(`http://attacker.example${path}`);
      expect(foreign.status).toBe(200);
      expect(foreign.text).not.toContain("attacker.example");
      expect(canonicalOf(foreign)).toBe(`${ORIGIN}${path}`);
      const next = await cached(`${ORIGIN}${path}`);
      expect(next.headers.get("x-read-cache")).toBe("hit");
      expect(canonicalOf(next)).toBe(`${ORIGIN}${path}`);
    }
    const missing = await cached("http://attacker.example/no-such-page");
    expect(missing.status).toBe(404);
    expect(missing.text).not.toContain("attacker.example");
    // The origin is the configuration's, whatever host served the page.
    const elsewhere = await cached(`${ORIGIN}/bots/${w.bot.id}`, { PUBLIC_ORIGIN: "https://storyloom.example", READ_CACHE_MS: "0" });
    expect(canonicalOf(elsewhere)).toBe(`https://storyloom.example/bots/${w.bot.id}`);
  });

  it("EXPLAIN QUERY PLAN: the pages' queries scan no growing table", async () => {
    const seen = new Set<string>();
    const DB = recordingD1(env.DB, (q) => seen.add(q));
    for (const path of [
      "/",
      "/?sort=active&page=2",
      `/stories/${w.story.id}`,
      `/branches/${w.branch.id}`,
      `/branches/${w.grandchild.id}`,
      `/stories/${w.story.id}?expand=${w.branch.id}`,
      `/branches/${w.branch.id}/read`,
      `/branches/${w.grandchild.id}/read`,
      `/bots/${w.bot.id}`,
      `/users/${w.owner.id}`,
    ]) {
      expect((await get(path, { env: { DB } })).status, path).toBe(200);
    }
    expect(seen.size).toBeGreaterThanOrEqual(10);
    const scans = await unindexedScans(env.DB, seen, DATA_TABLES);
    expect(scans).toEqual([]);
  });
});
