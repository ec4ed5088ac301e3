import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DATA_TABLES, call, createStory, registerBot, registerHuman, storyInput, submit, unique, vote, words } from "./helpers";
import { hide, moderator } from "./moderation";
import { ORIGIN, PREFS, get, post, shown, trips, visible } from "./pages";
import { recordingD1, unindexedScans } from "./recording-d1";

/**
 * Labels on the web reader: the chips on lists and story pages, tag pages, the new-story and edit forms, and a
 * reader's preference (hide mature stories and chosen tags), kept with the account or, for an anonymous reader, in a
 * cookie; §2: the search box on every page and the search page. Everything through the Worker's own fetch, as a
 * browser sends it.
 */

/** The chips of the story whose title is `title` on a list page, as read. */
function chipsOf(html: string, title: string): string {
  const at = html.indexOf(`>${title}</a>`);
  expect(at, `${title} is listed`).toBeGreaterThan(-1);
  const list = /<ul class="chips"[^>]*>([\s\S]*?)<\/ul>/.exec(html.slice(at))?.[1] ?? "";
  return visible(list).trim();
}

/** A tag page's stories: a fresh tag on three stories (human; mixed and mature; a bot's, teen with a warning). */
async function world() {
  const tag = unique("Tide");
  const other = unique("gore");
  const owner = await registerHuman();
  const bot = await registerBot();
  const human = await createStory(owner.token, { title: unique("Human story "), tags: [tag] });
  const mixed = await createStory(owner.token, { title: unique("Mixed story "), tags: [tag, other], rating: "mature" });
  for (let i = 0; i < 4; i++) expect((await submit(bot.token, mixed.main_branch_id, words(4, `m${i}`))).status).toBe(201);
  const robot = await createStory(bot.token, { title: unique("Bot story "), tags: [tag], rating: "teen", warnings: ["violence", "self_harm"] });
  return { tag, other, owner, bot, human, mixed, robot };
}

describe("chips", () => {
  it("a tag's page lists its stories (any spelling of the tag), each with its chips: who wrote it, the rating, warnings, tags linked to their pages", async () => {
    const w = await world();
    const res = await get(`/tags/${encodeURIComponent(w.tag.toUpperCase())}`);
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(trips(res)).toBe(1);
    expect(visible(res.text)).toContain(`Stories tagged “${w.tag}”`);
    expect(res.text).toContain(`<link rel="canonical" href="${ORIGIN}/tags/${encodeURIComponent(w.tag.toLowerCase())}"`);
    expect(chipsOf(res.text, w.human.title)).toBe(`Human Rated General ${w.tag}`);
    expect(chipsOf(res.text, w.mixed.title)).toBe(`Human + AI 50 % Rated Mature ${w.tag} ${w.other}`);
    expect(chipsOf(res.text, w.robot.title)).toBe(`AI Rated Teen ⚠ Content warning: violence ⚠ Content warning: self-harm ${w.tag}`);
    expect(res.text).toContain(`<a href="/tags/${encodeURIComponent(w.other.toLowerCase())}">${w.other}</a>`);
    expect(res.text).toContain('title="Written by humans and bots: 50 % of its segments by bots"');
    // Newest first, then by activity and by votes.
    const order = (html: string) => [w.human.title, w.mixed.title, w.robot.title].sort((a, b) => html.indexOf(a) - html.indexOf(b));
    expect(order(res.text)).toEqual([w.robot.title, w.mixed.title, w.human.title]);
    expect(order((await get(`/tags/${w.tag}?sort=active`)).text)).toEqual([w.mixed.title, w.robot.title, w.human.title]);
    expect(visible((await get(`/tags/${w.tag}?sort=top`)).text)).toContain("highest vote score first");
    expect((await get(`/tags/${unique("nobody")}`)).status).toBe(404);
  });

  it("the home page and a story page show them too", async () => {
    const w = await world();
    const home = await get("/");
    expect(trips(home)).toBe(1);
    expect(chipsOf(home.text, w.robot.title)).toContain("AI Rated Teen");
    const story = await get(`/stories/${w.mixed.id}`);
    expect(story.status).toBe(200);
    expect(trips(story)).toBe(1);
    expect(visible(/<ul class="chips"[^>]*>[\s\S]*?<\/ul>/.exec(story.text)![0]).trim()).toBe(`Human + AI 50 % Rated Mature ${w.tag} ${w.other}`);
    expect(story.text).not.toContain("Edit this story");
  });
});

describe("a tag's page is the list every door shows", () => {
  /** The reader's lists' page size. */
  const PER_PAGE = 20;

  it("newest or top first, paged by 20 with the total, never a hidden or archived story: the same stories in the same order as GET /stories", async () => {
    const tag = unique("Pager");
    const owner = await registerHuman();
    const made: Awaited<ReturnType<typeof createStory>>[] = [];
    for (let i = 0; i < PER_PAGE + 3; i++) made.push(await createStory(owner.token, { title: unique(`Paged ${i} `), tags: [tag] }));
    const mod = await moderator();
    expect((await hide(mod.token, "stories", made[5].id)).status).toBe(200);
    expect((await call(`/stories/${made[9].id}`, { method: "PATCH", token: owner.token, body: { status: "archived" } })).status).toBe(200);
    // The oldest listed story tops the votes: `top` puts it first, then the rest newest first.
    expect((await vote((await registerHuman()).token, "branch", made[0].main_branch_id, 1)).status).toBe(201);
    const listed = made.filter((_, i) => i !== 5 && i !== 9);
    const newest = [...listed].reverse();
    const top = [made[0], ...newest.filter((s) => s !== made[0])];
    /** The listed titles of a page, in the page's order. */
    const titlesOf = (html: string) =>
      made
        .map((s) => s.title)
        .filter((t) => html.includes(`>${t}</a>`))
        .sort((a, b) => html.indexOf(`>${a}</a>`) - html.indexOf(`>${b}</a>`));
    for (const [sort, order] of [
      ["new", newest],
      ["top", top],
    ] as const) {
      const path = `/tags/${tag}${sort === "new" ? "?" : `?sort=${sort}&`}`;
      const first = await get(path);
      const second = await get(`${path}page=2`);
      expect(first.status, first.text.slice(0, 300)).toBe(200);
      expect(visible(first.text), sort).toContain(`${listed.length} stories`);
      expect(titlesOf(first.text), sort).toEqual(order.slice(0, PER_PAGE).map((s) => s.title));
      expect(titlesOf(second.text), sort).toEqual(order.slice(PER_PAGE).map((s) => s.title));
      expect(visible(second.text), sort).toContain("Page 2 of 2");
      // The API's list of the same tag and sort: the same stories, in the same order.
      const api = (await call(`/stories?tag=${tag}&sort=${sort}&limit=100`)).body.data;
      expect(
        api.stories.map((s: { id: string }) => s.id),
        sort,
      ).toEqual(order.map((s) => s.id));
      expect(api.pagination.total).toBe(listed.length);
    }
  });
});

describe("the new-story and edit forms", () => {
  it("a story is started with tags (commas, Chinese ones too), a rating and warnings", async () => {
    const human = await registerHuman();
    const form = await get("/stories/new", { session: human.token });
    for (const field of ['name="tags"', 'name="rating"', 'name="warning_violence"', 'data-suggest="/api/v1/tags"']) expect(form.text).toContain(field);
    const input = storyInput();
    const tag = unique("harbour");
    const res = await post(
      "/stories",
      {
        title: input.title,
        background: input.background,
        language: "en",
        min_length: "3",
        max_length: "50",
        starter: input.starter,
        segment_1: input.initial_segments[0],
        segment_2: input.initial_segments[1],
        segment_3: input.initial_segments[2],
        tags: `${tag}, Slow Burn，灯塔, `,
        rating: "teen",
        warning_death: "on",
      },
      { session: human.token },
    );
    expect(res.status, res.text.slice(0, 500)).toBe(303);
    const id = res.location!.split("/").at(-1)!;
    expect((await call(`/stories/${id}`)).body.data).toMatchObject({ tags: [tag, "Slow Burn", "灯塔"], rating: "teen", warnings: ["death"] });
    // Eleven tags: the form again, the error in words, what was typed kept.
    const many = Array.from({ length: 11 }, (_, i) => `t${i}`).join(", ");
    const refused = await post("/stories", { title: input.title, background: input.background, tags: many }, { session: human.token });
    expect(refused.status).toBe(400);
    expect(visible(refused.text)).toMatch(/Tags: /);
    expect(refused.text).toContain(`value="${many}"`);
  });

  it("the owner edits what the story is; others are refused; a bad tag is shown in words", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token, { tags: ["before"], warnings: ["abuse"] });
    const page = await get(`/stories/${story.id}`, { session: owner.token });
    expect(page.text).toContain(`<a href="/stories/${story.id}/edit">Edit this story</a>`);
    const form = await get(`/stories/${story.id}/edit`, { session: owner.token });
    expect(form.status).toBe(200);
    expect(form.text).toContain('value="before"');
    expect(form.text).toMatch(/name="warning_abuse" checked/);
    const saved = await post(
      `/stories/${story.id}/edit`,
      { title: "Edited", background: story.background, style_rules: "", tags: "after, Later", rating: "mature" },
      { session: owner.token },
    );
    expect(saved.status, saved.text.slice(0, 400)).toBe(303);
    expect(saved.location).toBe(`/stories/${story.id}`);
    expect((await call(`/stories/${story.id}`)).body.data).toMatchObject({ title: "Edited", tags: ["after", "Later"], rating: "mature", warnings: [] });

    const bad = await post(`/stories/${story.id}/edit`, { title: "Edited", background: story.background, tags: "x".repeat(51) }, { session: owner.token });
    expect(bad.status).toBe(400);
    expect(visible(bad.text)).toContain("Tags: may have at most 50 characters");

    const stranger = await registerHuman();
    expect((await get(`/stories/${story.id}/edit`, { session: stranger.token })).status).toBe(403);
    expect((await post(`/stories/${story.id}/edit`, { title: "Mine", background: story.background }, { session: stranger.token })).status).toBe(403);
    expect((await call(`/stories/${story.id}`)).body.data.title).toBe("Edited");
    expect((await get(`/stories/${story.id}/edit`)).location).toBe(`/login?next=${encodeURIComponent(`/stories/${story.id}/edit`)}`);
  });
});

describe("a reader's preference: hide mature stories and chosen tags", () => {
  const preferenceRows = async () => (await env.DB.prepare("SELECT count(*) AS n FROM preferences").first<{ n: number }>())!.n;

  it("an anonymous reader's is kept in a cookie (nothing written to D1) and applied by the lists; no shared cache serves it", async () => {
    const w = await world();
    const before = await preferenceRows();
    const saved = await post("/preferences", { hide_mature: "on", hidden_tags: ` ${w.tag.toUpperCase()} ` });
    expect(saved.status, saved.text.slice(0, 300)).toBe(303);
    expect(saved.location).toBe("/preferences?saved=1");
    const cookie = saved.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(new RegExp(`^${PREFS}=`));
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Max-Age=31536000/);
    expect(await preferenceRows()).toBe(before);
    const prefs = new RegExp(`${PREFS}=([^;]+)`).exec(cookie)![1];
    const form = await get("/preferences?saved=1", { prefs });
    expect(form.text).toMatch(/name="hide_mature" checked/);
    expect(form.text).toContain(`value="${w.tag.toLowerCase()}"`);
    expect(visible(form.text)).toContain("Saved.");

    // Hidden here: every story with the tag; on the other tag's page, the mature story too.
    const tagged = await get(`/tags/${w.other}`, { prefs });
    expect(visible(tagged.text)).toContain("0 stories");
    expect(visible(tagged.text)).toContain("Your preferences leave out mature stories and stories with 1 hidden tag");
    expect(visible((await get(`/tags/${w.other}`)).text)).toContain(w.mixed.title);
    // With the micro-cache on, a page read with the cookie is neither served from it nor stored in it.
    const cached = { READ_CACHE_MS: "60000" };
    const plain = await get(`/tags/${w.other}`, { env: cached });
    expect(visible(plain.text)).toContain(w.mixed.title);
    const withCookie = await get(`/tags/${w.other}`, { prefs, env: cached });
    expect(withCookie.headers.get("x-read-cache")).toBeNull();
    expect(visible(shown(withCookie))).not.toContain(w.mixed.title);
    expect((await get(`/tags/${w.other}`, { env: cached })).headers.get("x-read-cache")).toBe("hit");
    // A cookie that is not ours is ignored.
    expect(visible((await get(`/tags/${w.other}`, { prefs: "garbage%7B" })).text)).toContain(w.mixed.title);
  });

  it("a signed-in reader's is kept with the account (the API's preferences), read by the list's own query: one round trip", async () => {
    const w = await world();
    const reader = await registerHuman();
    const saved = await post("/preferences", { hide_mature: "on", hidden_tags: "" }, { session: reader.token });
    expect(saved.status).toBe(303);
    expect(saved.headers.get("set-cookie") ?? "").not.toContain(PREFS);
    expect((await call("/me/preferences", { token: reader.token })).body.data).toMatchObject({ hide_mature: true, hidden_tags: [] });
    const page = await get(`/tags/${w.tag}`, { session: reader.token });
    expect(trips(page)).toBe(1);
    const text = visible(shown(page));
    expect(text).not.toContain(w.mixed.title);
    expect(text).toContain(w.robot.title);
    expect(text).toContain("Your preferences leave out mature stories");
    await call("/me/preferences", { method: "PUT", token: reader.token, body: { hide_mature: false, hidden_tags: [w.tag] } });
    expect(visible((await get(`/tags/${w.tag}`, { session: reader.token })).text)).toContain("0 stories");
    expect(visible((await get(`/tags/${w.tag}`)).text)).toContain(w.mixed.title); // others are unaffected
    // Too many tags: the form again, in words; nothing changed.
    const many = Array.from({ length: 21 }, (_, i) => `t${i}`).join(", ");
    const refused = await post("/preferences", { hidden_tags: many }, { session: reader.token });
    expect(refused.status).toBe(400);
    expect(visible(refused.text)).toContain("Hidden tags:");
    expect((await call("/me/preferences", { token: reader.token })).body.data.hidden_tags).toEqual([w.tag.toLowerCase()]);
  });

  it("EXPLAIN QUERY PLAN: the lists' queries with each kind of preference scan no growing table", async () => {
    const w = await world();
    const reader = await registerHuman();
    await call("/me/preferences", { method: "PUT", token: reader.token, body: { hide_mature: true, hidden_tags: [w.other] } });
    const prefs = encodeURIComponent(JSON.stringify({ m: true, t: [w.other] }));
    const seen = new Set<string>();
    const DB = recordingD1(env.DB, (q) => seen.add(q));
    for (const [path, c] of [
      ["/?sort=top", {}],
      [`/tags/${w.tag}`, {}],
      [`/tags/${w.tag}?sort=active`, { session: reader.token }],
      ["/", { prefs }],
      ["/preferences", { session: reader.token }],
      [`/stories/${w.human.id}/edit`, { session: w.owner.token }],
      [`/search?q=${w.tag}`, { session: reader.token }],
      [`/search?q=${w.tag}&type=segment`, { prefs }],
    ] as const) {
      expect((await get(path, { ...c, env: { DB } })).status, path).toBe(200);
    }
    expect(await unindexedScans(env.DB, seen, DATA_TABLES)).toEqual([]);
  });
});

describe("search (§2): the box on every page, the results page", () => {
  it("every page's header has the search box: a GET form to /search, labelled, no script", async () => {
    const w = await world();
    for (const path of ["/", `/tags/${w.tag}`, `/stories/${w.human.id}`, `/branches/${w.human.main_branch_id}`, "/login", "/search", "/nowhere"]) {
      const res = await get(path);
      const box = /<search class="site-search">([\s\S]*?)<\/search>/.exec(res.text)?.[1] ?? "";
      expect(box, path).toContain('<form action="/search" method="get">');
      expect(box, path).toContain('<label for="site-search" class="visually-hidden">Search stories and segments</label>');
      expect(box, path).toMatch(/<input id="site-search" type="search" name="q" required="" maxlength="200"/);
    }
  });

  it("the results: each story linked with its chips, each segment linked to its place on its branch's page, the matches marked and the text escaped", async () => {
    const word = unique("lantern");
    const owner = await registerHuman();
    const story = await createStory(owner.token, { title: `The ${word} keeper`, tags: ["Night"], rating: "teen", max_length: 200 });
    const segment = (await submit(owner.token, story.main_branch_id, `The ${word} <script>alert(1)</script> & "glowed" at night.`)).body.data.segment;
    const res = await get(`/search?q=${word}`);
    expect(res.status).toBe(200);
    expect(trips(res)).toBe(1);
    expect(res.text).toContain(`<title>Search: ${word} · Storyloom</title>`);
    expect(res.text).toContain(`<link rel="canonical" href="${ORIGIN}/search?q=${word}"`);
    expect(res.text).toContain(`value="${word}"`); // the box keeps the words
    expect(res.text).toContain(`<a href="/stories/${story.id}">The ${word} keeper</a>`);
    expect(chipsOf(res.text, `The ${word} keeper`)).toBe("Human Rated Teen Night");
    expect(res.text).toContain(`<p class="snippet">The <mark>${word}</mark> keeper</p>`);
    expect(res.text).toContain(`href="/branches/${story.main_branch_id}#s-${segment.id}"`);
    expect(res.text).toContain(`The <mark>${word}</mark> &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;glowed&quot; at night.`);
    expect(res.text).not.toContain("<script>alert(1)");
    expect(visible(res.text)).toContain("2 results: stories first, then segments, best first");
    expect(visible(res.text)).toContain("Everything (2) Stories (1) Segments (1)");
    // The segment's place is on its branch's page.
    expect((await get(`/branches/${story.main_branch_id}`)).text).toContain(`id="s-${segment.id}"`);
    const segments = await get(`/search?q=${word}&type=segment`);
    expect(segments.text).toContain(`<strong aria-current="page">Segments (1)</strong>`);
    expect(segments.text).not.toContain(`<a href="/stories/${story.id}">The ${word} keeper</a>`);
    expect(segments.text).toContain(`<a href="/search?q=${word}">Everything</a>`);
  });

  it("Chinese words are found and marked whole; the pager pages through", async () => {
    const owner = await registerHuman();
    const word = `${unique("p")}`;
    const story = await createStory(owner.token, {
      language: "zh",
      title: "灯塔看守人的故事",
      background: `海边的灯塔里住着一位看守人。${word}`,
      min_length: 2,
    });
    const page = await get(`/search?q=${encodeURIComponent("灯塔")}&type=story`);
    expect(page.text).toContain(`<article lang="zh">`);
    expect(page.text).toContain("<mark>灯塔</mark>看守人的故事");
    for (let i = 0; i < 21; i++) expect((await submit(owner.token, story.main_branch_id, `第${i}段：${word}在灯塔里。`)).status).toBe(201);
    const first = await get(`/search?q=${word}&type=segment`);
    expect(visible(first.text)).toContain("Page 1 of 2");
    expect(first.text).toContain(`<a rel="next" href="/search?q=${word}&amp;type=segment&amp;page=2">`);
    const second = await get(`/search?q=${word}&type=segment&page=2`);
    expect(second.text.match(/<li><article/g)).toHaveLength(1);
    expect(second.text).toContain(`<a rel="prev" href="/search?q=${word}&amp;type=segment">`);
  });

  it("no words: how to search (200); bad words: a 400 page saying why, the box keeping them", async () => {
    const blank = await get("/search");
    expect(blank.status).toBe(200);
    expect(visible(blank.text)).toContain("Type words into the search box");
    for (const [q, why] of [
      ["", "Type a word to search for."],
      ["%20%20", "Type a word to search for."],
      ["a".repeat(201), "Search for at most 200 characters."],
      ["%22%20*%20()", "Type a word to search for: punctuation alone finds nothing."],
    ]) {
      const res = await get(`/search?q=${q}`);
      expect(res.status, q).toBe(400);
      expect(res.text).toContain("<title>Error: Search · Storyloom</title>");
      expect(/<div class="form-error" role="alert">([\s\S]*?)<\/div>/.exec(res.text)?.[1], q).toContain(why);
    }
  });

  it("the reader's preference applies and is said: an anonymous cookie's, a signed-in account's (one round trip)", async () => {
    const w = await world();
    const prefs = encodeURIComponent(JSON.stringify({ m: true, t: [] }));
    const anonymous = await get(`/search?q=${w.tag}&type=story`, { prefs });
    expect(visible(shown(anonymous))).not.toContain(w.mixed.title);
    expect(visible(anonymous.text)).toContain(w.human.title);
    expect(visible(anonymous.text)).toContain("Your preferences leave out mature stories");
    expect(visible((await get(`/search?q=${w.tag}&type=story`)).text)).toContain(w.mixed.title);
    const reader = await registerHuman();
    await call("/me/preferences", { method: "PUT", token: reader.token, body: { hide_mature: false, hidden_tags: [w.other] } });
    const signedIn = await get(`/search?q=${w.tag}&type=story`, { session: reader.token });
    expect(trips(signedIn)).toBe(1);
    expect(visible(shown(signedIn))).not.toContain(w.mixed.title);
    expect(visible(signedIn.text)).toContain("Your preferences leave out stories with 1 hidden tag");
  });
});
