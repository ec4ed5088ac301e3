import { env } from "cloudflare:workers";
import { parseFeed } from "feedsmith";
import { describe, expect, it } from "vitest";
import type { Env } from "../src/env";
import { DATA_TABLES, call, createBranch, createStory, registerAdmin, registerBot, registerHuman, unique, words } from "./helpers";
import { followOf, settled } from "./inbox";
import { hide, moderator } from "./moderation";
import { planOf, recordingD1, unindexedScans } from "./recording-d1";
import { sweep } from "../src/queue/sweeper";
import { ORIGIN, get, post, shown, trips } from "./pages";
import { type XmlElement, parseXml, textOf } from "./xml";

/**
 * The Atom feeds: each parsed by a real feed parser (feedsmith) and checked against RFC 4287's
 * required elements; what each shows, newest first, 50 at most; hidden content and suspended accounts' never;
 * ETag and 304, cached once for everyone; the links from the pages; the private inbox feed, its token minted,
 * rotated and revoked, a suspended account's refused.
 */

const ATOM = "http://www.w3.org/2005/Atom";
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A feed as a feed reader fetches it: no credential (unless `headers` carry one); `bindings` changes some for it. */
const fetchFeed = (path: string, headers: Record<string, string> = {}, bindings?: Partial<Env>) =>
  get(path, { headers: { Accept: "application/atom+xml", ...headers }, env: bindings });

const children = (el: XmlElement, name: string) => el.children.filter((c): c is XmlElement => typeof c !== "string" && c.name === name);
const one = (el: XmlElement, name: string, where: string) => {
  const found = children(el, name);
  expect(found, `${where} has exactly one <${name}>`).toHaveLength(1);
  return found[0];
};

/** RFC 4287's required elements of a feed and its entries (§4.1.1, §4.1.2), and its links. */
function checkAtom(root: XmlElement) {
  expect(root.name).toBe("feed");
  expect(root.attrs.xmlns).toBe(ATOM);
  for (const name of ["id", "title", "updated"]) expect(textOf(one(root, name, "the feed")).trim()).not.toBe("");
  expect(textOf(one(root, "updated", "the feed"))).toMatch(RFC3339);
  const self = children(root, "link").find((l) => l.attrs.rel === "self");
  expect(self?.attrs.href, "a self link").toMatch(/^https:\/\/storyloom\.test\/feeds\//);
  const feedAuthor = children(root, "author").length > 0;
  const ids = new Set<string>();
  for (const entry of children(root, "entry")) {
    const id = textOf(one(entry, "id", "an entry"));
    expect(id).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
    expect(ids.has(id), `entry ${id} twice`).toBe(false);
    ids.add(id);
    expect(textOf(one(entry, "title", "an entry")).trim()).not.toBe("");
    expect(textOf(one(entry, "updated", "an entry"))).toMatch(RFC3339);
    const authors = children(entry, "author");
    expect(feedAuthor || authors.length > 0, "an entry's author").toBe(true);
    for (const a of authors) expect(textOf(one(a, "name", "an author")).trim()).not.toBe("");
    const alternate = children(entry, "link").filter((l) => l.attrs.rel === "alternate");
    expect(alternate, "an entry's alternate link").toHaveLength(1);
    expect(alternate[0].attrs.href).toMatch(/^https:\/\/storyloom\.test\//);
    expect(one(entry, "content", "an entry").attrs.type).toBe("text");
  }
}

/** A text construct as feedsmith gives it: a string, or `{value, type}` for one with a `type`. */
const text = (t: any): string => (typeof t === "string" ? t : t?.value);

/** The feed at `path`: 200, Atom's media type, well-formed, valid per RFC 4287's required elements, and as feedsmith reads it. */
async function feedAt(path: string, headers: Record<string, string> = {}) {
  const res = await fetchFeed(path, headers);
  expect(res.status, `${path}: ${res.text.slice(0, 300)}`).toBe(200);
  expect(res.headers.get("content-type")).toBe("application/atom+xml; charset=utf-8");
  const root = parseXml(res.text);
  checkAtom(root);
  const parsed = parseFeed(res.text);
  expect(parsed.format).toBe("atom");
  const feed = parsed.feed as any;
  const entries = ((feed.entries ?? []) as any[]).map((e) => ({ ...e, title: text(e.title), content: text(e.content) }));
  expect(entries.map((e) => e.id)).toEqual(children(root, "entry").map((e) => textOf(one(e, "id", "an entry"))));
  return { res, root, feed, entries, link: (e: any) => e.links.find((l: any) => l.rel === "alternate").href as string };
}

const idsOf = (entries: any[]) => entries.map((e) => e.id.replace("urn:uuid:", ""));
const segmentsOf = async (branchId: string) => (await call(`/branches/${branchId}/segments`)).body.data.segments as any[];
const write = (token: string, branchId: string, content = words(4)) => call(`/branches/${branchId}/segments`, { token, body: { content } });
const suspend = async (id: string) => {
  const admin = await registerAdmin();
  expect((await call(`/admin/accounts/${id}/suspend`, { token: admin.token, body: { reason: "spam" } })).status).toBe(200);
  return admin;
};

describe("public feeds", () => {
  it("a story's feed: its new branches and its main line's segments, newest first, each linked to its page; valid Atom by a real parser; one round trip", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token, { language: "en" });
    const main = await segmentsOf(story.main_branch_id);
    const branch = await createBranch(owner.token, story.id, { title: "The Tide Turns", fork_at_segment_id: main[1].id });
    const writer = await registerHuman();
    const latest = (await write(writer.token, story.main_branch_id, "The bell rang under the water.")).body.data;
    const { res, feed, entries, link } = await feedAt(`/feeds/stories/${story.id}.atom`);
    expect(trips(res)).toBe(1);
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(text(feed.title)).toBe(story.title);
    expect(feed.id).toBe(`${ORIGIN}/feeds/stories/${story.id}.atom`);
    expect(feed.links).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ rel: "self", href: `${ORIGIN}/feeds/stories/${story.id}.atom` }),
        expect.objectContaining({ rel: "alternate", href: `${ORIGIN}/stories/${story.id}` }),
      ]),
    );
    // The newest first: the segment just written, the branch, then the main line from its end.
    expect(idsOf(entries)).toEqual([latest.id, branch.id, ...main.map((s) => s.id).reverse()]);
    expect(feed.updated).toBe(entries[0].updated);
    expect(entries[0]).toMatchObject({
      title: `Segment ${latest.sequence_order} on “main line” of “${story.title}”`,
      content: "The bell rang under the water.",
      authors: [{ name: writer.input.username, uri: `${ORIGIN}/users/${writer.id}` }],
    });
    expect(link(entries[0])).toBe(`${ORIGIN}/branches/${story.main_branch_id}/read#s-${latest.sequence_order}`);
    expect(entries[1]).toMatchObject({ title: `New branch “The Tide Turns” of “${story.title}”`, authors: [{ name: owner.input.username }] });
    expect(link(entries[1])).toBe(`${ORIGIN}/branches/${branch.id}`);
  });

  it("a branch's feed: its own new segments only; an author's: the stories they start and the segments they write (a bot's too)", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const branch = await createBranch(owner.token, story.id, { initial_segment: words(4, "own") });
    const own = await segmentsOf(branch.id);
    const { entries, feed } = await feedAt(`/feeds/branches/${branch.id}.atom`);
    expect(idsOf(entries)).toEqual([own.at(-1).id]);
    expect(text(feed.title)).toBe(`“${branch.title}” of “${story.title}”`);
    const bot = await registerBot();
    const botStory = await createStory(bot.token, { title: unique("Bot story ") });
    const botSegment = (await write(bot.token, branch.id, words(4, "beep"))).body.data;
    const byBot = await feedAt(`/feeds/authors/${bot.id}.atom`);
    const botStarted = await segmentsOf(botStory.main_branch_id);
    // Newest first; a story and its first segments, written at once, read up from the story: its segments, then it.
    expect(idsOf(byBot.entries)).toEqual([botSegment.id, ...botStarted.map((s) => s.id).reverse(), botStory.id]);
    expect(byBot.feed.authors).toEqual([{ name: bot.name, uri: `${ORIGIN}/bots/${bot.id}` }]);
    expect(byBot.entries.find((e: any) => e.id === `urn:uuid:${botStory.id}`)).toMatchObject({ title: `New story: “${botStory.title}”` });
    const byOwner = await feedAt(`/feeds/authors/${owner.id.toUpperCase()}.atom`);
    expect(idsOf(byOwner.entries)).toContain(story.id);
    expect(idsOf(byOwner.entries)).toContain(own.at(-1).id);
    expect(idsOf(byOwner.entries)).not.toContain(botSegment.id);
  });

  it("an author's feed keeps the segments whose log entries the sweeper pruned (past LOGS_KEEP_DAYS)", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const writer = await registerHuman();
    for (let i = 0; i < 2; i++) expect((await write(writer.token, story.main_branch_id)).status).toBe(201);
    const before = await feedAt(`/feeds/authors/${writer.id}.atom`);
    expect(before.entries).toHaveLength(2);
    const at = new Date(Date.now() - 100 * 86_400_000).toISOString();
    await env.DB.prepare("UPDATE logs SET created_at = ? WHERE author_id = ?").bind(at, writer.id).run();
    await sweep(env);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM logs WHERE author_id = ?").bind(writer.id).first<{ n: number }>())!.n).toBe(0);
    expect((await feedAt(`/feeds/authors/${writer.id}.atom`)).entries).toEqual(before.entries);
  });

  it("a tag's feed: the stories listed with it, found by the tag in any spelling; its self link is the tag's key", async () => {
    const owner = await registerHuman();
    const tag = unique("Harbour Tales ");
    const first = await createStory(owner.token, { tags: [tag] });
    const second = await createStory(owner.token, { tags: ["other", tag.toUpperCase()] });
    await createStory(owner.token, { tags: ["other"] });
    const { feed, entries } = await feedAt(`/feeds/tags/${encodeURIComponent(`  ${tag.toUpperCase()} `)}.atom`);
    expect(idsOf(entries)).toEqual([second.id, first.id]);
    expect(feed.id).toBe(`${ORIGIN}/feeds/tags/${encodeURIComponent(tag.toLowerCase())}.atom`);
    expect(text(feed.title)).toBe(`Stories tagged “${tag}”`);
  });

  it("50 entries at most, the newest", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    // Sixty more segments on the main line, written straight into D1 (with their log rows, as a write makes them).
    const base = Date.now();
    const rows = Array.from({ length: 60 }, (_, i) => ({ id: crypto.randomUUID(), seq: 5 + i, at: new Date(base + i * 1000).toISOString() }));
    await env.DB.batch(
      rows.flatMap((r) => [
        env.DB.prepare(
          `INSERT INTO segments (id, branch_id, story_id, author_id, author_type, author_name, content, content_length, sequence_order, is_starter, created_at)
           VALUES (?, ?, ?, ?, 'human', ?, ?, 4, ?, 0, ?)`,
        ).bind(r.id, story.main_branch_id, story.id, owner.id, owner.input.username, words(4, `s${r.seq}`), r.seq, r.at),
        env.DB.prepare(
          `INSERT INTO logs (id, story_id, branch_id, segment_id, author_id, author_type, author_name, content_length, is_continuation, created_at)
           VALUES (?, ?, ?, ?, ?, 'human', ?, 4, 'continuation', ?)`,
        ).bind(crypto.randomUUID(), story.id, story.main_branch_id, r.id, owner.id, owner.input.username, r.at),
      ]),
    );
    const newest = rows
      .map((r) => r.id)
      .reverse()
      .slice(0, 50);
    for (const path of [`/feeds/stories/${story.id}.atom`, `/feeds/branches/${story.main_branch_id}.atom`, `/feeds/authors/${owner.id}.atom`]) {
      const { entries } = await feedAt(path);
      expect(idsOf(entries), path).toEqual(newest);
    }
  });

  it("nothing hidden: a hidden segment leaves every feed; a hidden branch's feed is 404 and it leaves the story's; a hidden story's feeds are 404", async () => {
    const owner = await registerHuman();
    const tag = unique("hidden-tag-");
    const story = await createStory(owner.token, { tags: [tag] });
    const branch = await createBranch(owner.token, story.id, { initial_segment: words(4, "fork") });
    const writer = await registerHuman();
    const secret = (await write(writer.token, story.main_branch_id, words(4, "secret"))).body.data;
    const kept = (await write(writer.token, story.main_branch_id, words(4, "kept"))).body.data;
    const mod = await moderator();
    expect((await hide(mod.token, "segments", secret.id)).status).toBe(200);
    for (const path of [`/feeds/stories/${story.id}.atom`, `/feeds/branches/${story.main_branch_id}.atom`, `/feeds/authors/${writer.id}.atom`]) {
      const { entries, res } = await feedAt(path);
      expect(idsOf(entries), path).toContain(kept.id);
      expect(idsOf(entries), path).not.toContain(secret.id);
      expect(res.text, path).not.toContain("secret0");
    }
    expect(idsOf((await feedAt(`/feeds/stories/${story.id}.atom`)).entries)).toContain(branch.id);
    expect((await hide(mod.token, "branches", branch.id)).status).toBe(200);
    expect((await fetchFeed(`/feeds/branches/${branch.id}.atom`)).status).toBe(404);
    expect(idsOf((await feedAt(`/feeds/stories/${story.id}.atom`)).entries)).not.toContain(branch.id);
    expect((await feedAt(`/feeds/authors/${owner.id}.atom`)).res.text).not.toContain("fork0");
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    for (const path of [`/feeds/stories/${story.id}.atom`, `/feeds/branches/${story.main_branch_id}.atom`]) {
      const res = await fetchFeed(path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.text).error.code).toBe("NOT_FOUND");
    }
    expect(idsOf((await feedAt(`/feeds/tags/${encodeURIComponent(tag)}.atom`)).entries)).toEqual([]);
    expect(idsOf((await feedAt(`/feeds/authors/${writer.id}.atom`)).entries)).toEqual([]);
  });

  it("nothing by an account suspended now (a bot whose owner is, too); restored, it is back", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const person = await registerHuman();
    const owned = (await call("/auth/bot/register", { token: person.token, body: { name: unique("owned"), model: "m" } })).body.data;
    const human = await registerHuman();
    const bySomeone = (await write(human.token, story.main_branch_id)).body.data;
    const byBot = (await write(owned.api_key, story.main_branch_id)).body.data;
    const admin = await suspend(person.id);
    await suspend(human.id);
    const { entries } = await feedAt(`/feeds/stories/${story.id}.atom`);
    expect(idsOf(entries)).not.toContain(bySomeone.id);
    expect(idsOf(entries)).not.toContain(byBot.id);
    expect(idsOf((await feedAt(`/feeds/authors/${owned.bot_id}.atom`)).entries)).toEqual([]);
    expect((await call(`/admin/accounts/${person.id}/restore`, { method: "POST", token: admin.token })).status).toBe(200);
    expect(idsOf((await feedAt(`/feeds/stories/${story.id}.atom`)).entries)).toContain(byBot.id);
  });

  it("404 (the API's envelope) for an unknown or malformed id, a tag no story carried, an unknown author, and a name without .atom", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    for (const path of [
      `/feeds/stories/${crypto.randomUUID()}.atom`,
      "/feeds/stories/not-an-id.atom",
      `/feeds/stories/${story.id}`,
      `/feeds/stories/${story.id}.rss`,
      `/feeds/branches/${crypto.randomUUID()}.atom`,
      `/feeds/authors/${crypto.randomUUID()}.atom`,
      "/feeds/authors/no%20such%20one.atom",
      `/feeds/tags/${unique("never")}.atom`,
      "/feeds/tags/%20.atom",
      `/feeds/inbox/${crypto.randomUUID()}`,
    ]) {
      const res = await fetchFeed(path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.text).error.code, path).toBe("NOT_FOUND");
    }
  });

  it("ETag and If-None-Match: 304 while unchanged (a micro-cache hit too), a new body and tag after a write; one cached answer for every reader", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const path = `/feeds/stories/${story.id}.atom`;
    const cached = { READ_CACHE_MS: "60000" };
    const first = await fetchFeed(path, {}, cached);
    expect(first.headers.get("x-read-cache")).toBeNull();
    const tag = first.headers.get("etag")!;
    expect(tag).toMatch(/^"/);
    // Signed in or not, a feed is the same: a reader with a credential gets the one cached answer.
    const signedIn = await fetchFeed(path, { Authorization: `Bearer ${owner.token}` }, cached);
    expect(signedIn.headers.get("x-read-cache")).toBe("hit");
    expect(signedIn.text).toBe(first.text);
    const again = await fetchFeed(path, { "If-None-Match": tag }, cached);
    expect(again.status).toBe(304);
    expect(again.text).toBe("");
    expect(again.headers.get("etag")).toBe(tag);
    expect(again.headers.get("cache-control")).toBe("public, max-age=60");
    expect((await call(`/branches/${story.main_branch_id}/segments`, { token: owner.token, body: { content: words(4) }, env: cached })).status).toBe(201);
    const changed = await fetchFeed(path, { "If-None-Match": tag }, cached);
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).not.toBe(tag);
  });

  it("each page links its feed in its head (story, branch, path, bot, writer, tag), and each link answers a feed", async () => {
    const owner = await registerHuman();
    const tag = unique("linked-");
    const story = await createStory(owner.token, { tags: [tag] });
    const bot = await registerBot();
    const pages: [string, string][] = [
      [`/stories/${story.id}`, `/feeds/stories/${story.id}.atom`],
      [`/branches/${story.main_branch_id}`, `/feeds/branches/${story.main_branch_id}.atom`],
      [`/branches/${story.main_branch_id}/read`, `/feeds/branches/${story.main_branch_id}.atom`],
      [`/bots/${bot.id}`, `/feeds/authors/${bot.id}.atom`],
      [`/users/${owner.id}`, `/feeds/authors/${owner.id}.atom`],
      [`/tags/${tag}`, `/feeds/tags/${tag}.atom`],
    ];
    for (const [pagePath, feedPath] of pages) {
      const res = await get(pagePath);
      expect(res.status, pagePath).toBe(200);
      const head = /<head>([\s\S]*?)<\/head>/.exec(res.text)![1];
      const links = [...head.matchAll(/<link rel="alternate" type="application\/atom\+xml" title="([^"]+)" href="([^"]+)"\/>/g)];
      expect(
        links.map((m) => m[2]),
        pagePath,
      ).toEqual([feedPath]);
      // And on the page itself (the path page leaves it to its branch's page).
      if (!pagePath.endsWith("/read")) expect(res.text, pagePath).toContain(`href="${feedPath}" type="application/atom+xml" class="feed-link"`);
      await feedAt(new URL(links[0][2], `${ORIGIN}${pagePath}`).pathname);
    }
  });

  it("EXPLAIN QUERY PLAN: the feeds' queries scan no growing table", async () => {
    const owner = await registerHuman();
    const tag = unique("plan-");
    const story = await createStory(owner.token, { tags: [tag] });
    const { url } = (await call("/me/feed-token", { method: "POST", token: owner.token })).body.data;
    const seen = new Set<string>();
    const DB = recordingD1(env.DB, (q) => seen.add(q));
    for (const path of [
      `/feeds/stories/${story.id}.atom`,
      `/feeds/branches/${story.main_branch_id}.atom`,
      `/feeds/authors/${owner.id}.atom`,
      `/feeds/tags/${tag}.atom`,
      new URL(url).pathname,
    ]) {
      expect((await get(path, { env: { DB } })).status, path).toBe(200);
    }
    // An author's segments, newest first, from the segments' index by author and time (the logs are pruned).
    const byAuthor = [...seen].filter((q) => q.includes("fs.author_id = ?"));
    expect(byAuthor).toHaveLength(1);
    expect((await planOf(env.DB, byAuthor[0])).join("\n")).toMatch(/SEARCH fs USING (COVERING )?INDEX segments_author_created_idx \(author_id=\?\)/);
    expect(await unindexedScans(env.DB, seen, DATA_TABLES)).toEqual([]);
  });
});

describe("the private inbox feed", () => {
  const mint = (token: string) => call("/me/feed-token", { method: "POST", token });
  const pathOf = (url: string) => new URL(url).pathname;

  it("POST /me/feed-token answers its address once (201); the feed is the account's inbox, newest first, private and never cached by others", async () => {
    const reader = await registerHuman();
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    await followOf(reader.token, "branch", story.main_branch_id);
    const writer = await registerHuman();
    const segment = (await write(writer.token, story.main_branch_id, words(4, "news"))).body.data;
    await settled(story.id);
    const minted = await mint(reader.token);
    expect(minted.status, minted.text).toBe(201);
    expect(minted.body.data).toEqual({
      url: expect.stringMatching(/^https:\/\/storyloom\.test\/feeds\/inbox\/slf_[A-Za-z0-9_-]{43}\.atom$/),
      created_at: expect.any(String),
    });
    const { res, feed, entries, link } = await feedAt(pathOf(minted.body.data.url));
    expect(res.headers.get("cache-control")).toBe("private, no-cache");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-read-cache")).toBeNull();
    expect(text(feed.title)).toBe(`Inbox of ${reader.input.username}`);
    const [item] = (await call("/me/inbox", { token: reader.token })).body.data.items;
    expect(entries).toEqual([
      expect.objectContaining({
        id: `urn:uuid:${item.id}`,
        title: item.message,
        content: words(4, "news"),
        authors: [expect.objectContaining({ name: writer.input.username })],
      }),
    ]);
    expect(link(entries[0])).toBe(`${ORIGIN}/branches/${story.main_branch_id}#s-${segment.id}`);
    // Its ETag answers a reader that polls: 304 while nothing changed.
    expect((await fetchFeed(pathOf(minted.body.data.url), { "If-None-Match": res.headers.get("etag")! })).status).toBe(304);
    // A bot has an inbox too.
    const bot = await registerBot();
    expect((await feedAt(pathOf((await mint(bot.apiKey)).body.data.url))).entries).toEqual([]);
  });

  it("a rotated or revoked token is refused (401) at once; a suspended account's feed is 403 ACCOUNT_SUSPENDED until restored", async () => {
    const reader = await registerHuman();
    const first = pathOf((await mint(reader.token)).body.data.url);
    expect((await fetchFeed(first)).status).toBe(200);
    const second = pathOf((await mint(reader.token)).body.data.url);
    expect(second).not.toBe(first);
    const old = await fetchFeed(first);
    expect(old.status).toBe(401);
    expect(JSON.parse(old.text).error.code).toBe("UNAUTHORIZED");
    expect((await fetchFeed(second)).status).toBe(200);
    const admin = await suspend(reader.id);
    const refused = await fetchFeed(second);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).error.code).toBe("ACCOUNT_SUSPENDED");
    expect((await call(`/admin/accounts/${reader.id}/restore`, { method: "POST", token: admin.token })).status).toBe(200);
    expect((await fetchFeed(second)).status).toBe(200);
    const revoked = await call("/me/feed-token", { method: "DELETE", token: reader.token });
    expect(revoked.body.data).toEqual({ revoked: true });
    expect((await fetchFeed(second)).status).toBe(401);
    expect((await call("/me/feed-token", { method: "DELETE", token: reader.token })).body.data).toEqual({ revoked: false });
    // A bot whose owner is suspended: refused as the bot's key is.
    const person = await registerHuman();
    const owned = (await call("/auth/bot/register", { token: person.token, body: { name: unique("owned"), model: "m" } })).body.data;
    const botFeed = pathOf((await mint(owned.api_key)).body.data.url);
    await suspend(person.id);
    expect((await fetchFeed(botFeed)).status).toBe(403);
  });

  it("quotes only what anyone may read: a hidden segment's text is left out even of its own author's feed", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const writer = await registerHuman();
    const seg = (await write(writer.token, story.main_branch_id, words(4, "hush"))).body.data;
    await settled(story.id);
    const mod = await moderator();
    expect((await hide(mod.token, "segments", seg.id)).status).toBe(200);
    await settled(story.id);
    const url = (await mint(writer.token)).body.data.url;
    const { entries, res } = await feedAt(pathOf(url));
    expect(entries.map((e: any) => e.title)).toEqual([expect.stringContaining("A moderator hid your segment")]);
    expect(res.text).not.toContain("hush0");
  });

  it("the inbox page: make an address (shown once, no-store), see when it was made, make another, revoke it", async () => {
    const reader = await registerHuman();
    const before = await get("/inbox", reader.token);
    expect(before.text).toContain('<form method="post" action="/inbox/feed" class="inline"><button type="submit">Make a feed address</button></form>');
    const made = await post("/inbox/feed", {}, { session: reader.token });
    expect(made.status, made.text).toBe(200);
    expect(made.headers.get("cache-control")).toBe("no-store");
    const url = /<a href="([^"]+)" id="feed-url"/.exec(made.text)![1];
    expect((await fetchFeed(pathOf(url))).status).toBe(200);
    const after = await get("/inbox", reader.token);
    expect(shown(after)).not.toContain(url);
    expect(after.text).toContain("Your feed&#39;s address was made");
    expect(after.text).toContain("Make a new address (the old one stops)");
    const revoked = await post("/inbox/feed/revoke", {}, { session: reader.token });
    expect(revoked.status).toBe(303);
    expect(revoked.location).toBe("/inbox");
    expect((await fetchFeed(pathOf(url))).status).toBe(401);
    expect((await post("/inbox/feed", {}, { session: reader.token, origin: "https://evil.example" })).status).toBe(403);
    expect(shown(await get("/inbox", reader.token))).not.toContain("Revoke the address");
  });
});
