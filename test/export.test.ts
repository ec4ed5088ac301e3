import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { strFromU8, unzipSync } from "fflate";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../src/app";
import { BASE, address, call, createBranch, createStory, expectError, hanzi, registerBot, registerHuman, submit, words } from "./helpers";
import { hide, moderator, restore } from "./moderation";
import { COOKIE, ORIGIN, page, shown, trips } from "./pages";
import { type XmlElement, elements, parseXml, textOf } from "./xml";

/** A branch's reading path as EPUB 3 and Markdown (`GET /branches/{id}/export.epub`, `…/export.md`). */

interface Download {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text: string;
}

/**
 * A download through the Worker's own fetch, as bytes; the work it leaves for after the answer (the cache of exports'
 * copy) is awaited, so the next download sees it. `web`: the web reader's address, with the session cookie `session`.
 */
async function download(path: string, options: { token?: string; session?: string; web?: boolean; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { "CF-Connecting-IP": address(), ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.session) headers.Cookie = `${COOKIE}=${options.session}`;
  const ctx = createExecutionContext();
  const res = await app.request(`${options.web ? ORIGIN : BASE}${path}`, { headers }, env, ctx);
  const bytes = new Uint8Array(await res.arrayBuffer());
  await waitOnExecutionContext(ctx);
  return { status: res.status, headers: res.headers, bytes, text: new TextDecoder().decode(bytes) } satisfies Download;
}

const PROLOG = /^<\?xml version="1\.0" encoding="UTF-8"\?>\s*(<!DOCTYPE html>\s*)?/;

/** An EPUB opened: its files in zip order, each as text or as a parsed (strictly well-formed) XML tree. */
function openEpub(bytes: Uint8Array) {
  const files = unzipSync(bytes);
  const text = (name: string) => {
    expect(files[name], name).toBeDefined();
    return strFromU8(files[name]);
  };
  const xml = (name: string) => {
    const source = text(name);
    expect(source, name).toMatch(PROLOG);
    return parseXml(source.replace(PROLOG, ""));
  };
  return { names: Object.keys(files), text, xml };
}

/** Everything an EPUB holds as text, every file unzipped (its bytes are deflated: they show no text). */
const unzippedText = (bytes: Uint8Array) =>
  Object.values(unzipSync(bytes))
    .map((f) => strFromU8(f))
    .join("\n");

const all = (root: XmlElement, name: string) => [...elements(root)].filter((e) => e.name === name);
const the = (root: XmlElement, name: string) => all(root, name)[0];
const byClass = (root: XmlElement, cls: string) => [...elements(root)].filter((e) => e.attrs.class?.split(" ").includes(cls));
const squash = (s: string) => s.replace(/\s+/g, " ").trim();

/** The package document's metadata: titles, language, creators, identifier, modified, its `meta` properties. */
function metadataOf(epub: ReturnType<typeof openEpub>) {
  const opf = epub.xml("EPUB/package.opf");
  const meta = Object.fromEntries(all(opf, "meta").flatMap((m) => (m.attrs.property && !m.attrs.refines ? [[m.attrs.property, textOf(m)]] : [])));
  return {
    opf,
    titles: all(opf, "dc:title").map(textOf),
    language: textOf(the(opf, "dc:language")),
    identifier: textOf(the(opf, "dc:identifier")),
    creators: all(opf, "dc:creator").map(textOf),
    meta,
  };
}

/** The table of contents' entries: [label, href]. */
const contentsOf = (epub: ReturnType<typeof openEpub>) => {
  const nav = all(epub.xml("EPUB/nav.xhtml"), "nav").find((n) => n.attrs["epub:type"] === "toc")!;
  return all(nav, "a").map((a) => [squash(textOf(a)), a.attrs.href]);
};

/** A chapter's segments: [sequence_order, text, byline]. */
const segmentsOf = (chapter: XmlElement) =>
  byClass(chapter, "segment").map((s) => {
    const paragraphs = all(s, "p");
    return [
      Number(s.attrs.id.slice(2)),
      paragraphs
        .filter((p) => !p.attrs.class)
        .map(textOf)
        .join("\n"),
      squash(textOf(byClass(s, "byline")[0])),
    ] as const;
  });

/**
 * The main line (1–4, the owner's; 5, the bot's); A forks it after 3 (4, the owner's; 5, the bot's); B forks A at its
 * head (6, the bot's); C forks the main line after 3 too. B's path: 1–3 on the main line, 4–5 on A, 6 on B.
 */
async function world() {
  const owner = await registerHuman();
  const bot = await registerBot();
  const story = await createStory(owner.token, { title: "The Tide", background: "A harbour town where the tide never comes back.\nNobody remembers why." });
  const main = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments as { id: string; content: string }[];
  expect((await submit(bot.token, story.main_branch_id, words(4, "mainbot"))).status).toBe(201);
  const a = await createBranch(owner.token, story.id, { title: "The Tide Turns", fork_at_segment_id: main[2].id, initial_segment: words(4, "aowner") });
  const a5 = await submit(bot.token, a.id, words(4, "abot"));
  expect(a5.status).toBe(201);
  const b = await createBranch(bot.token, story.id, { title: "Deeper", parent_branch_id: a.id, initial_segment: words(4, "bbot") });
  await createBranch(owner.token, story.id, { title: "Sideways", fork_at_segment_id: main[2].id, initial_segment: words(4, "csibling") });
  return { owner, bot, story, main, a, a5: a5.body.data as { id: string }, b };
}

let w: Awaited<ReturnType<typeof world>>;
beforeAll(async () => {
  w = await world();
});

describe("GET /branches/{id}/export.epub", () => {
  it("is an EPUB 3 of the whole path: mimetype first and stored, the package's metadata, a chapter per fork crossed in the table of contents, the text in reading order; two round trips", async () => {
    const res = await download(`/branches/${w.b.id}/export.epub`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/epub+zip");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="The Tide - Deeper.epub"; filename*=UTF-8''The%20Tide%20-%20Deeper.epub`);
    expect(trips(res)).toBe(2);
    // OCF: the first local header is `mimetype`, stored (method 0), no extra field, its bytes right after its name.
    const head = res.bytes;
    expect([...head.slice(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04]);
    expect(head[8] | (head[9] << 8)).toBe(0);
    expect(head[28] | (head[29] << 8)).toBe(0);
    expect(strFromU8(head.slice(30, 38))).toBe("mimetype");
    expect(strFromU8(head.slice(38, 58))).toBe("application/epub+zip");

    const epub = openEpub(res.bytes);
    expect(epub.names.slice(0, 6)).toEqual(["mimetype", "META-INF/container.xml", "EPUB/package.opf", "EPUB/nav.xhtml", "EPUB/toc.ncx", "EPUB/style.css"]);
    expect(the(epub.xml("META-INF/container.xml"), "rootfile").attrs["full-path"]).toBe("EPUB/package.opf");
    const { opf, titles, language, identifier, creators, meta } = metadataOf(epub);
    expect(opf.attrs.version).toBe("3.0");
    expect(titles).toEqual(["The Tide", "Deeper"]);
    expect(language).toBe("en");
    expect(identifier).toBe(`urn:uuid:${w.b.id}`);
    expect(creators).toEqual([w.owner.input.username, `${w.bot.name} (bot)`]);
    expect(meta["dcterms:modified"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(meta["schema:contentRating"]).toBe("General");
    // Every file the manifest names is in the zip; the spine reads the title page, the contents, the foreword, the chapters.
    const items = all(opf, "item");
    expect(items.length).toBeGreaterThan(0);
    for (const item of items) expect(epub.names).toContain(`EPUB/${item.attrs.href}`);
    const spine = all(opf, "itemref").map((r) => r.attrs.idref);
    expect(spine).toEqual(["title-page", "nav", "foreword", "chapter-001", "chapter-002", "chapter-003"]);

    expect(contentsOf(epub)).toEqual([
      ["The Tide", "title-page.xhtml"],
      ["Foreword", "foreword.xhtml"],
      ["Chapter 1: main line, #1–#3", "chapter-001.xhtml"],
      ["Chapter 2: The Tide Turns, #4–#5", "chapter-002.xhtml"],
      ["Chapter 3: Deeper, #6", "chapter-003.xhtml"],
    ]);
    // The text in reading order, each segment with its byline (a bot marked); nothing off the path.
    const chapters = [1, 2, 3].map((n) => epub.xml(`EPUB/chapter-00${n}.xhtml`));
    const owner = w.owner.input.username;
    expect(chapters.flatMap(segmentsOf)).toEqual([
      [1, w.main[0].content, `#1 · ${owner}`],
      [2, w.main[1].content, `#2 · ${owner}`],
      [3, w.main[2].content, `#3 · ${owner}`],
      [4, words(4, "aowner"), `#4 · ${owner}`],
      [5, words(4, "abot"), `#5 · ${w.bot.name} (bot)`],
      [6, words(4, "bbot"), `#6 · ${w.bot.name} (bot)`],
    ]);
    expect(byClass(chapters[0], "crossing")).toEqual([]);
    expect(squash(textOf(byClass(chapters[1], "crossing")[0]))).toBe("Here the path leaves main line after #3 and goes on with The Tide Turns.");
    expect(squash(textOf(byClass(chapters[2], "crossing")[0]))).toBe("Here the path leaves The Tide Turns after #5 and goes on with Deeper.");
    expect(unzippedText(res.bytes)).not.toContain("mainbot");
    expect(unzippedText(res.bytes)).not.toContain("csibling");
    // The title page and the foreword: labels, authors, where it comes from; the background's lines as paragraphs.
    const title = epub.xml("EPUB/title-page.xhtml");
    expect(title.attrs["xml:lang"]).toBe("en");
    expect(squash(textOf(byClass(title, "labels")[0]))).toBe("Rated General · Content warnings: none given");
    expect(all(the(title, "ul"), "li").map((li) => squash(textOf(li)))).toEqual([`${owner}, 4 segments`, `${w.bot.name} (bot), 2 segments`]);
    expect(the(byClass(title, "source")[0], "a").attrs.href).toBe(`${ORIGIN}/branches/${w.b.id}/read`);
    expect(squash(textOf(byClass(title, "source")[0]))).toContain("6 segments of the path's 6");
    expect(all(epub.xml("EPUB/foreword.xhtml"), "p").map(textOf)).toEqual(["A harbour town where the tide never comes back.", "Nobody remembers why."]);
    // The EPUB 2 table of contents agrees with the EPUB 3 one.
    const ncx = epub.xml("EPUB/toc.ncx");
    expect(all(ncx, "text").map(textOf).slice(1)).toEqual(contentsOf(epub).map(([label]) => label));
    expect(the(ncx, "meta").attrs.content).toBe(`urn:uuid:${w.b.id}`);
  });

  it("breaks chapters at the path page's pages: 50 segments at most", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token, { title: "Long" });
    for (let i = 5; i <= 53; i++) expect((await submit(owner.token, story.main_branch_id, words(3, `n${i}x`))).status).toBe(201);
    const epub = openEpub((await download(`/branches/${story.main_branch_id}/export.epub`)).bytes);
    expect(contentsOf(epub).slice(2)).toEqual([
      ["Chapter 1: main line, #1–#50", "chapter-001.xhtml"],
      ["Chapter 2: main line, #51–#53", "chapter-002.xhtml"],
    ]);
    expect(segmentsOf(epub.xml("EPUB/chapter-002.xhtml")).map(([n]) => n)).toEqual([51, 52, 53]);
    expect(metadataOf(epub).titles).toEqual(["Long"]);
  });

  it("a Chinese story: language zh, the title as written in filename*, an ASCII filename beside it", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token, {
      title: "潮汐之城",
      background: "一座潮水再也没有回来的港口小城。",
      language: "zh",
      starter: "很久以前。",
      initial_segments: [hanzi(5), hanzi(6), hanzi(7)],
      min_length: 3,
      max_length: 50,
    });
    const res = await download(`/branches/${story.main_branch_id}/export.epub`);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="story.epub"; filename*=UTF-8''%E6%BD%AE%E6%B1%90%E4%B9%8B%E5%9F%8E.epub`);
    const epub = openEpub(res.bytes);
    expect(metadataOf(epub).language).toBe("zh");
    expect(metadataOf(epub).titles).toEqual(["潮汐之城"]);
    const chapter = epub.xml("EPUB/chapter-001.xhtml");
    expect(chapter.attrs["xml:lang"]).toBe("zh");
    expect(segmentsOf(chapter).map(([, text]) => text)).toEqual(["很久以前。", hanzi(5), hanzi(6), hanzi(7)]);
    // The English words around the story's text say so.
    expect(byClass(chapter, "range")[0].attrs["xml:lang"]).toBe("en");
    const md = await download(`/branches/${story.main_branch_id}/export.md`);
    expect(md.headers.get("content-disposition")).toBe(`attachment; filename="story.md"; filename*=UTF-8''%E6%BD%AE%E6%B1%90%E4%B9%8B%E5%9F%8E.md`);
    expect(md.text.startsWith("# 潮汐之城\n")).toBe(true);
  });

  it("malformed and unknown branch ids are 404", async () => {
    expectError(await call("/branches/not-a-uuid/export.epub"), 404, "NOT_FOUND");
    expectError(await call(`/branches/${crypto.randomUUID()}/export.md`), 404, "NOT_FOUND");
  });
});

describe("hidden content in exports", () => {
  it("a hidden segment is left out of a reader's copy and kept, marked, in its author's and moderators'; their copies are private", async () => {
    const { owner, bot, story } = await world();
    const mainLine = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments as { id: string }[];
    const mod = await moderator();
    const hidden = mainLine[4]; // the bot's segment 5 on the main line
    expect((await hide(mod.token, "segments", hidden.id)).status).toBe(200);
    const path = `/branches/${story.main_branch_id}/export.epub`;
    const reader = await registerHuman();
    const anonymous = await download(path);
    const other = await download(path, { token: reader.token });
    // The same copy for every reader who may not read it: one ETag, the same bytes, a cache may keep it.
    expect(other.headers.get("etag")).toBe(anonymous.headers.get("etag"));
    expect(anonymous.headers.get("cache-control")).toBe("no-cache");
    for (const copy of [anonymous, other]) {
      const epub = openEpub(copy.bytes);
      expect(segmentsOf(epub.xml("EPUB/chapter-001.xhtml")).map(([n]) => n)).toEqual([1, 2, 3, 4]);
      expect(unzippedText(copy.bytes)).not.toContain("mainbot");
      expect(squash(textOf(byClass(epub.xml("EPUB/title-page.xhtml"), "source")[0]))).toContain(
        "4 segments of the path's 5 (1 segment hidden by moderators left out)",
      );
      expect(metadataOf(epub).creators).toEqual([owner.input.username]);
    }
    for (const who of [bot, mod]) {
      const copy = await download(path, { token: who.token });
      expect(copy.headers.get("etag")).not.toBe(anonymous.headers.get("etag"));
      expect(copy.headers.get("cache-control")).toBe("private, no-cache");
      const chapter = openEpub(copy.bytes).xml("EPUB/chapter-001.xhtml");
      expect(segmentsOf(chapter).map(([n, text]) => [n, text])).toContainEqual([5, words(4, "mainbot")]);
      expect(squash(textOf(byClass(chapter, "note")[0]))).toBe("Hidden by a moderator: in this copy because you wrote it or moderate.");
    }
    // Markdown the same way.
    const md = `/branches/${story.main_branch_id}/export.md`;
    expect(shown(await download(md))).not.toContain("mainbot");
    expect((await download(md, { token: bot.token })).text).toContain(words(4, "mainbot"));
    // Restored: back in everyone's copy, under another ETag.
    expect((await restore(mod.token, "segments", hidden.id)).status).toBe(200);
    const back = await download(path);
    expect(unzippedText(back.bytes)).toContain("mainbot");
    expect(back.headers.get("etag")).not.toBe(anonymous.headers.get("etag"));
  });

  it("a hidden ancestor's segments leave a fork's copy but for their authors and moderators; the crossings name it a hidden branch", async () => {
    const { owner, bot, a, b } = await world();
    const mod = await moderator();
    expect((await hide(mod.token, "branches", a.id)).status).toBe(200);
    const epub = openEpub((await download(`/branches/${b.id}/export.epub`)).bytes);
    expect(
      contentsOf(epub)
        .slice(2)
        .map(([label]) => label),
    ).toEqual(["Chapter 1: main line, #1–#3", "Chapter 2: Deeper, #6"]);
    const chapter = epub.xml("EPUB/chapter-002.xhtml");
    expect(squash(textOf(byClass(chapter, "crossing")[0]))).toBe("Here the path leaves a hidden branch after #5 and goes on with Deeper.");
    // The bot wrote segment 5 on A: its copy has it (not the owner's segment 4), in a chapter of a branch it may not name.
    const mine = openEpub((await download(`/branches/${b.id}/export.epub`, { token: bot.token })).bytes);
    expect(
      contentsOf(mine)
        .slice(2)
        .map(([label]) => label),
    ).toEqual(["Chapter 1: main line, #1–#3", "Chapter 2: a hidden branch, #5", "Chapter 3: Deeper, #6"]);
    // The owner created A: it sees A, and its own segment 4 there (not the bot's 5).
    const owners = openEpub((await download(`/branches/${b.id}/export.epub`, { token: owner.token })).bytes);
    expect(
      contentsOf(owners)
        .slice(2)
        .map(([label]) => label),
    ).toEqual(["Chapter 1: main line, #1–#3", "Chapter 2: The Tide Turns, #4", "Chapter 3: Deeper, #6"]);
  });

  it("a hidden branch or story is 404, as its read is, on the API and the web reader; its creator still exports it", async () => {
    const { owner, bot, story, b } = await world();
    const mod = await moderator();
    expect((await hide(mod.token, "branches", b.id)).status).toBe(200);
    expectError(await call(`/branches/${b.id}/export.epub`), 404, "NOT_FOUND");
    expectError(await call(`/branches/${b.id}/export.md`, { token: owner.token }), 404, "NOT_FOUND");
    const web = await download(`/branches/${b.id}/export.epub`, { web: true });
    expect(web.status).toBe(404);
    expect(web.headers.get("content-type")).toContain("text/html");
    expect((await download(`/branches/${b.id}/export.epub`, { token: bot.token })).status).toBe(200);
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    expectError(await call(`/branches/${story.main_branch_id}/export.md`), 404, "NOT_FOUND");
    expect((await download(`/branches/${story.main_branch_id}/export.md`, { token: owner.token })).status).toBe(200);
  });
});

describe("versions of an export", () => {
  it("If-None-Match gets 304 in one round trip; a new segment, a hide and an edit of the story change the ETag", async () => {
    const { owner, bot, story, b } = await world();
    const path = `/branches/${b.id}/export.epub`;
    const first = await download(path);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{40}"$/);
    const again = await download(path, { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    expect(again.headers.get("etag")).toBe(etag);
    expect(trips(again)).toBe(1);
    // The Markdown is another file: another ETag.
    const md = await download(`/branches/${b.id}/export.md`);
    expect(md.headers.get("etag")).not.toBe(etag);
    expect((await download(`/branches/${b.id}/export.md`, { headers: { "If-None-Match": `W/"nope", ${md.headers.get("etag")}` } })).status).toBe(304);

    expect((await submit(bot.token, b.id, words(4, "later"))).status).toBe(201);
    const grown = await download(path, { headers: { "If-None-Match": etag } });
    expect(grown.status).toBe(200);
    expect(grown.headers.get("etag")).not.toBe(etag);
    expect(unzippedText(grown.bytes)).toContain("later0");

    const mod = await moderator();
    const segs = (await call(`/branches/${b.id}/segments`)).body.data.segments as { id: string }[];
    expect((await hide(mod.token, "segments", segs.at(-1)!.id)).status).toBe(200);
    const hidden = await download(path, { headers: { "If-None-Match": grown.headers.get("etag")! } });
    expect(hidden.status).toBe(200);
    expect(unzippedText(hidden.bytes)).not.toContain("later0");
    // The bot's own copy has the hidden segment: never in the cache of exports, and still a 304 without the path read.
    const own = await download(path, { token: bot.token });
    expect(unzippedText(own.bytes)).toContain("later0");
    const ownAgain = await download(path, { token: bot.token, headers: { "If-None-Match": own.headers.get("etag")! } });
    expect(ownAgain.status).toBe(304);
    expect(trips(ownAgain)).toBe(1);

    const patched = await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { title: "The Tide, retold" } });
    expect(patched.status, patched.text).toBe(200);
    const renamed = await download(path, { headers: { "If-None-Match": hidden.headers.get("etag")! } });
    expect(renamed.status).toBe(200);
    expect(metadataOf(openEpub(renamed.bytes)).titles).toEqual(["The Tide, retold", "Deeper"]);
  });

  it("a copy every reader shares is kept by the cache of exports: the next reader's comes from it in one round trip, byte for byte; a private copy never is", async () => {
    const { bot, story } = await world();
    const path = `/branches/${story.main_branch_id}/export.epub`;
    const first = await download(path);
    expect(first.headers.get("x-export-cache")).toBe("miss");
    const second = await download(path, { token: (await registerHuman()).token });
    expect(second.headers.get("x-export-cache")).toBe("hit");
    expect(trips(second)).toBe(1);
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(second.bytes).toEqual(first.bytes);
    // A copy with hidden text in it is its reader's own: built each time, never kept.
    const mod = await moderator();
    const segs = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments as { id: string }[];
    expect((await hide(mod.token, "segments", segs[4].id)).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await download(path, { token: bot.token })).headers.get("x-export-cache")).toBe("miss");
  });
});

describe("GET /branches/{id}/export.md", () => {
  it("is the path as Markdown: title, branch, labels, authors, the foreword, a heading per chapter, each segment then its byline; people's text escaped", async () => {
    const owner = await registerHuman();
    const bot = await registerBot();
    const story = await createStory(owner.token, {
      title: "Stars *and* <b>tides</b>",
      background: "Ten words of background for the story here.\n# not a heading",
    });
    const tricky = [
      "*bold* and _it_ <script>alert(1)</script> a|b ~x~ [link](http://x) &amp;",
      "# not a heading",
      "1. not a list",
      "- not an item",
      "    not code",
    ];
    expect((await submit(bot.token, story.main_branch_id, tricky.join("\n"))).status).toBe(201);
    const fork = await createBranch(bot.token, story.id, { title: "Fork", initial_segment: words(4, "forked") });
    const res = await download(`/branches/${fork.id}/export.md`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    // Characters no file system takes in a name are `-`.
    expect(res.headers.get("content-disposition")).toBe(
      `attachment; filename="Stars -and- -b-tides-b- - Fork.md"; filename*=UTF-8''Stars%20-and-%20-b-tides-b-%20-%20Fork.md`,
    );
    const owned = owner.input.username;
    const bots = `${bot.name} (bot)`;
    const blocks = res.text.split("\n\n");
    expect(blocks.slice(0, 9)).toEqual([
      "# Stars \\*and\\* \\<b\\>tides\\</b\\>",
      "*Fork*",
      "Rated General · Content warnings: none given",
      "Written by humans and bots: 33 % of the story's segments by bots.",
      `**Authors:** ${owned}, 4 segments; ${bots}, 2 segments`,
      `6 segments of the path's 6, as of ${res.text.match(/as of (\d{4}-\d\d-\d\d)/)![1]}, from Storyloom: <${ORIGIN}/branches/${fork.id}/read>`,
      "## Foreword",
      "Ten words of background for the story here.",
      "\\# not a heading",
    ]);
    expect(blocks).toContain("## Chapter 1 · main line, #1–#5");
    expect(blocks).toContain("## Chapter 2 · Fork, #6");
    expect(blocks).toContain("*Here the path leaves main line after #5 and goes on with Fork.*");
    // The tricky segment: each line a paragraph, every Markdown construct escaped, then its byline.
    const at = blocks.indexOf("\\*bold\\* and \\_it\\_ \\<script\\>alert(1)\\</script\\> a\\|b \\~x\\~ \\[link\\](http://x) \\&amp;");
    expect(at).toBeGreaterThan(0);
    expect(blocks.slice(at + 1, at + 6)).toEqual(["\\# not a heading", "1\\. not a list", "\\- not an item", "not code", `*#5 · ${bots}*`]);
    expect(blocks).toContain(words(4, "forked"));
    expect(res.text).not.toContain("<script>");
  });
});

describe("the path page's downloads", () => {
  it("offers the EPUB and the Markdown; the web reader's download is the signed-in reader's own copy", async () => {
    const { owner, story, b } = await world();
    const html = (await page(`/branches/${b.id}/read`)).text;
    expect(html).toContain(`<a href="/branches/${b.id}/export.epub" download="" type="application/epub+zip">EPUB</a>`);
    expect(html).toContain(`<a href="/branches/${b.id}/export.md" download="" type="text/markdown">`);
    const epub = await download(`/branches/${b.id}/export.epub`, { web: true });
    expect(epub.status).toBe(200);
    expect(epub.headers.get("content-type")).toBe("application/epub+zip");
    expect(openEpub(epub.bytes).text("mimetype")).toBe("application/epub+zip");
    // The story's owner wrote segment 1; hidden, it is in the copy its web session downloads, and in nobody else's.
    const mod = await moderator();
    const first = (await call(`/branches/${story.main_branch_id}/segments`)).body.data.segments[0];
    expect((await hide(mod.token, "segments", first.id)).status).toBe(200);
    const anonymous = await download(`/branches/${b.id}/export.md`, { web: true });
    expect(shown(anonymous)).not.toContain(first.content);
    const owners = await download(`/branches/${b.id}/export.md`, { web: true, session: owner.token });
    expect(owners.status).toBe(200);
    expect(owners.text).toContain(first.content);
    expect(owners.headers.get("cache-control")).toBe("private, no-cache");
  });
});
