// Runs alone (vitest.config.ts): fills and empties D1's own search index, and waits for every story's sync.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { indexText } from "../src/lib/search-text";
import { call, createBranch, createStory, expectError, join, registerAdmin, registerBot, registerHuman, searchable, submit, unique } from "./helpers";
import { closeClients, hide, mcpTool, moderator, restore } from "./moderation";
import { page } from "./pages";
import { hanziWord, written, zhStory } from "./search";

/**
 * Full-text search: `GET /search` and MCP's `search` over the search shards the writes feed through the search
 * queue (a search waits for them: `searchable`); English by whole words and prefixes, Chinese by words of one, two and three characters; snippets; ranking;
 * the filters of `GET /stories`; injection-shaped queries; what may not be read, never found.
 */

afterEach(closeClients);

/** `GET /search`, once the writes before it reached the search shards (their story is handed over after the answer). */
const searchFor = async (q: string, query = "", token?: string) => {
  await searchable();
  return call(`/search?q=${encodeURIComponent(q)}${query}`, { token });
};

/** The hits' ids: a story's id, or a segment's. */
const found = async (q: string, query = "", token?: string) => {
  const res = await searchFor(q, query, token);
  expect(res.status, res.text).toBe(200);
  return (res.body.data.results as any[]).map((h) => (h.type === "story" ? h.story.id : h.segment.id)) as string[];
};

/** The highlighted text of a hit's snippet (its spans are code point offsets). */
const highlighted = (hit: { snippet: string; highlights: [number, number][] }) => hit.highlights.map(([a, b]) => [...hit.snippet].slice(a, b).join(""));

describe("English: whole words, a trailing * for a prefix", () => {
  it("finds stories by title, background and tags, and segments by their text; case and accents ignored", async () => {
    const w = unique("bell");
    const owner = await registerHuman();
    const byTitle = await createStory(owner.token, { title: `The ${w} Tower` });
    const byBackground = await createStory(owner.token, { background: `A town where the ${w.toUpperCase()} rings at dawn.` });
    const byTag = await createStory(owner.token, { tags: [`${w} lore`] });
    const seg = await written(owner.token, byTitle.main_branch_id, `The ${w} rang thrice.`);
    const accented = await written(owner.token, byTitle.main_branch_id, `A café called ${w}x.`);
    expect(new Set(await found(w))).toEqual(new Set([byTitle.id, byBackground.id, byTag.id, seg.id]));
    expect(await found(w, "&type=segment")).toEqual([seg.id]);
    expect(new Set(await found(w, "&type=story"))).toEqual(new Set([byTitle.id, byBackground.id, byTag.id]));
    // Whole words: the word's longer forms are not it; a prefix asks for them.
    expect(await found(`${w}x`)).toEqual([accented.id]);
    expect(new Set(await found(`${w}*`, "&type=segment"))).toEqual(new Set([seg.id, accented.id]));
    expect(await found(w.slice(0, -2), "&type=segment")).toEqual([]);
    expect(await found(`CAFE ${w}x`)).toEqual([accented.id]);
    // Every word must match.
    expect(await found(`${w} thrice`)).toEqual([seg.id]);
    expect(await found(`${w} nowhere`)).toEqual([]);
  });
});

describe("Chinese: words of one, two and three characters, wherever they are", () => {
  it("finds a two- or three-character word inside a run of text, never the characters apart", async () => {
    const [a, b, c, d] = [...hanziWord(4)];
    const owner = await registerHuman();
    const story = await createStory(owner.token, zhStory({ title: `${a}${b}${c}之书`, background: `很久以前，${c}${d}住在海边的小镇。` }));
    const seg = await written(owner.token, story.main_branch_id, `他每天晚上点亮${a}${b}${c}${d}的灯。`);
    const apart = await written(owner.token, story.main_branch_id, `${a}是${b}，${c}不是${d}。`);
    expect(new Set(await found(`${a}${b}`))).toEqual(new Set([story.id, seg.id]));
    expect(new Set(await found(`${a}${b}${c}`))).toEqual(new Set([story.id, seg.id]));
    expect(new Set(await found(`${b}${c}${d}`))).toEqual(new Set([seg.id]));
    expect(new Set(await found(`${c}${d}`))).toEqual(new Set([story.id, seg.id]));
    expect(await found(`${a}${c}`)).toEqual([]);
    expect(await found(`${d}${a}`)).toEqual([]);
    // One character: wherever it is, alone or in a word.
    expect(new Set(await found(a))).toEqual(new Set([story.id, seg.id, apart.id]));
    expect(new Set(await found(d, "&type=segment"))).toEqual(new Set([seg.id, apart.id]));
    // Mixed with English, and with each other (all words must match).
    expect(await found(`${a}${b} ${c}${d}`, "&type=segment")).toEqual([seg.id]);
  });

  it("highlights the whole word in the snippet, as the original text", async () => {
    const [a, b, c] = [...hanziWord(3)];
    const owner = await registerHuman();
    const story = await createStory(owner.token, zhStory());
    const seg = await written(owner.token, story.main_branch_id, `从前有一座山，山里有${a}${b}${c}，它会说 hello world 和「${a}${b}」。`);
    for (const [q, spans] of [
      [`${a}${b}${c}`, [`${a}${b}${c}`]],
      [`${a}${b}`, [`${a}${b}`, `${a}${b}`]],
      [a, [a, a]],
      [`hello ${b}${c}`, [`${b}${c}`, "hello"]],
    ] as const) {
      const res = await searchFor(q, "&type=segment");
      const [hit] = res.body.data.results;
      expect(hit.segment.id, q).toBe(seg.id);
      expect(hit.snippet, q).toBe(`从前有一座山，山里有${a}${b}${c}，它会说 hello world 和「${a}${b}」。`);
      expect(highlighted(hit), q).toEqual(spans);
    }
  });

  it("finds Japanese kana and Korean words inside their runs", async () => {
    const owner = await registerHuman();
    const ja = await createStory(owner.token, zhStory({ language: "ja", background: `ひとりの${unique("x")}とカタカナのしずかなものがたり。` }));
    const ko = await createStory(owner.token, zhStory({ language: "ko", background: `그는 학교에서 ${unique("y")} 공부했다.` }));
    expect(await found("カタカナのしず", "&type=story")).toContain(ja.id);
    expect(await found("학교", "&type=story")).toContain(ko.id);
  });
});

describe("snippets and ranking", () => {
  it("a snippet is plain text around the match, cut with …, its spans the words asked for", async () => {
    const w = unique("lamp");
    const owner = await registerHuman();
    const story = await createStory(owner.token, { max_length: 500 });
    const long = `${"Far away over the hills there was nothing. ".repeat(6)}Then the ${w} was lit & <b>seen</b>. ${"The night went on and on. ".repeat(6)}`;
    const seg = await written(owner.token, story.main_branch_id, long);
    const [hit] = (await searchFor(w)).body.data.results;
    expect(hit).toMatchObject({ type: "segment", story: { id: story.id }, branch: { id: story.main_branch_id, is_main: true }, segment: { id: seg.id } });
    expect(hit.segment.sequence_order).toBe(seg.sequence_order);
    expect(hit.snippet.startsWith("…")).toBe(true);
    expect(hit.snippet.endsWith("…")).toBe(true);
    expect(hit.snippet).toContain(`Then the ${w} was lit & <b>seen</b>.`);
    expect([...hit.snippet].length).toBeLessThan(long.length / 2);
    expect(highlighted(hit)).toEqual([w]);
  });

  it("ranks a title's match above a background's, a dense segment above a passing mention, and stories before segments", async () => {
    const w = unique("tide");
    const owner = await registerHuman();
    const inBackground = await createStory(owner.token, { background: `A long background about many things, and once the ${w}, among others.` });
    const inTitle = await createStory(owner.token, { title: `${w}` });
    const passing = await written(owner.token, inTitle.main_branch_id, `It was a long day by the sea, and then the ${w} came in at last.`);
    const dense = await written(owner.token, inTitle.main_branch_id, `${w}, ${w}, ${w}!`);
    expect(await found(w)).toEqual([inTitle.id, inBackground.id, dense.id, passing.id]);
    const page = await searchFor(w, "&limit=3");
    expect(page.body.data).toMatchObject({ count: 4, counts: { stories: 2, segments: 2 }, pagination: { limit: 3, offset: 0, total: 4, has_more: true } });
    const next = await searchFor(w, "&limit=3&offset=3");
    expect(next.body.data.results.map((h: any) => h.segment.id)).toEqual([passing.id]);
    expect(next.body.data.pagination.has_more).toBe(false);
    expect((await searchFor(w, "&type=segment")).body.data).toMatchObject({ count: 2, counts: { stories: null, segments: 2 } });
    expect((await searchFor(w, "&type=story")).body.data).toMatchObject({ count: 2, counts: { stories: 2, segments: null } });
  });
});

describe("the filters of GET /stories apply to each hit's story", () => {
  it("tag, exclude_tag, rating, authorship and status", async () => {
    const w = unique("fog");
    const human = await registerHuman();
    const bot = await registerBot();
    const t = unique("tag");
    const plain = await createStory(human.token, { background: `The ${w} came down.`, tags: [t] });
    const teen = await createStory(human.token, { background: `The ${w} rose.`, rating: "teen", tags: [t, "grim"] });
    const byBot = await createStory(bot.token, { background: `The ${w} lifted.` });
    const archived = await createStory(human.token, { background: `The ${w} stayed.` });
    expect((await call(`/stories/${archived.id}`, { method: "PATCH", token: human.token, body: { status: "archived" } })).status).toBe(200);
    const seg = await written(human.token, teen.main_branch_id, `Inside the ${w}, silence.`);
    const q = (query: string) => found(w, query).then((ids) => new Set(ids));
    expect(await q("")).toEqual(new Set([plain.id, teen.id, byBot.id, seg.id]));
    expect(await q(`&tag=${t.toUpperCase()}`)).toEqual(new Set([plain.id, teen.id, seg.id]));
    expect(await q(`&tag=${t}&tag=GRIM`)).toEqual(new Set([teen.id, seg.id]));
    expect(await q("&exclude_tag=grim")).toEqual(new Set([plain.id, byBot.id]));
    expect(await q("&rating=teen")).toEqual(new Set([teen.id, seg.id]));
    expect(await q("&authorship=bot")).toEqual(new Set([byBot.id]));
    expect(await q("&status=archived")).toEqual(new Set([archived.id]));
    expectError(await searchFor(w, "&rating=adult"), 400, "VALIDATION_ERROR");
  });
});

describe("what may not be read is never found", () => {
  it("a hidden segment, branch or story is out of search at once, for everyone; a restore brings it back", async () => {
    const w = unique("ember");
    const owner = await registerHuman();
    const mod = await moderator();
    const admin = await registerAdmin();
    const story = await createStory(owner.token, { title: `${w} saga` });
    const seg = await written(owner.token, story.main_branch_id, `An ${w} glowed.`);
    const fork = await createBranch(owner.token, story.id, { initial_segment: `Another ${w} here.` });
    const forkSeg = (await call(`/branches/${fork.id}/segments`)).body.data.segments.at(-1).id;
    const other = await createStory(owner.token, { background: `The last ${w} of all.` });
    const all = [story.id, other.id, seg.id, forkSeg];
    expect(new Set(await found(w))).toEqual(new Set(all));

    expect((await hide(mod.token, "segments", seg.id)).status).toBe(200);
    for (const token of [undefined, owner.token, mod.token, admin.token])
      expect(new Set(await found(w, "", token))).toEqual(new Set([story.id, other.id, forkSeg]));
    expect((await hide(mod.token, "branches", fork.id)).status).toBe(200);
    expect(new Set(await found(w))).toEqual(new Set([story.id, other.id]));
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    expect(await found(w, "", owner.token)).toEqual([other.id]);
    expect((await searchFor(w)).body.data).toMatchObject({ count: 1, counts: { stories: 1, segments: 0 } });

    for (const [type, id] of [
      ["stories", story.id],
      ["branches", fork.id],
      ["segments", seg.id],
    ])
      expect((await restore(mod.token, type, id)).status).toBe(200);
    expect(new Set(await found(w))).toEqual(new Set(all));
  });

  it("nothing a suspended account wrote is found: its stories, their segments, its segments elsewhere, what forks from its branches", async () => {
    const w = unique("moss");
    const admin = await registerAdmin();
    const owner = await registerHuman();
    const writer = await registerBot();
    const story = await createStory(owner.token, { title: `${w} garden` });
    expect((await join(writer.token, story.main_branch_id)).status).toBe(201);
    const bySuspended = await written(writer.token, story.main_branch_id, `The ${w} grew.`);
    const forkedBy = await createBranch(writer.token, story.id, { title: "the bot's fork" });
    const onItsBranch = await written(owner.token, forkedBy.id, `Under the ${w}, a stone.`);
    const byOwner = await written(owner.token, story.main_branch_id, `The ${w} was green.`);
    const theirs = await createStory(writer.token, { background: `A ${w} in the bot's own story.` });
    expect(new Set(await found(w))).toEqual(new Set([story.id, theirs.id, bySuspended.id, onItsBranch.id, byOwner.id]));

    const suspend = await call(`/admin/accounts/${writer.id}/suspend`, { token: admin.token, body: { reason: "spam" } });
    expect(suspend.status, suspend.text).toBe(200);
    expect(new Set(await found(w))).toEqual(new Set([story.id, byOwner.id]));
    expect((await call(`/admin/accounts/${owner.id}/suspend`, { token: admin.token, body: { reason: "spam" } })).status).toBe(200);
    expect(await found(w)).toEqual([]);
    // A suspension that has ended hides nothing.
    await env.DB.prepare("UPDATE users SET suspended_until = ? WHERE id = ?")
      .bind(new Date(Date.now() - 1000).toISOString(), owner.id)
      .run();
    expect((await call(`/admin/accounts/${writer.id}/restore`, { token: admin.token, body: { reason: "appeal" } })).status).toBe(200);
    expect(new Set(await found(w))).toEqual(new Set([story.id, theirs.id, bySuspended.id, onItsBranch.id, byOwner.id]));
  });
});

describe("queries are text, never FTS5 syntax; bad input is 400 naming q", () => {
  it("injection-shaped queries are searched as words (never a 500, never an operator)", async () => {
    const w = unique("quill");
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const exact = await written(owner.token, story.main_branch_id, `title ${w} near the end, and "quoted" words.`);
    await written(owner.token, story.main_branch_id, `Only the word xylograph ${unique("z")} here.`);
    for (const q of [
      `${w}" OR "xylograph`,
      `${w} OR xylograph`,
      `NEAR(${w} xylograph)`,
      `title:${w}`,
      `{title content}: ${w}`,
      `-xylograph ${w}`,
      `^${w}`,
      `${w} NOT xylograph`,
      `(${w}`,
      `"${w}`,
      `${w}")`,
      `${w} AND`,
      `${w} * "" ()`,
      `${w}'; DROP TABLE stories; --`,
      `${w} \u0000 \u0002`,
    ]) {
      const res = await searchFor(q);
      expect(res.status, `${q}: ${res.text}`).toBe(200);
      expect(
        res.body.data.results.every((h: any) => h.segment?.id === exact.id),
        q,
      ).toBe(true);
    }
    // The words are words: "title:w" is the phrase "title w", and an operator is a word that must be in the text.
    expect(await found(`title:${w}`)).toEqual([exact.id]);
    expect(await found(`${w}:near`)).toEqual([exact.id]);
    expect(await found(`${w} OR xylograph`)).toEqual([]);
    expect(await found(`"quoted" ${w}`)).toEqual([exact.id]);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM stories").first<{ n: number }>())!.n).toBeGreaterThan(0);
  });

  it("a control character (NUL among them) inside a word is a space, on every door: REST, the search page, MCP", async () => {
    const w = unique("quern");
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const seg = await written(owner.token, story.main_branch_id, `A ${w} turned slowly by the xylograph.`);
    for (const q of [`${w}\u0000xylograph`, `\u0000${w}`, `${w}\u0001`, `${w}\u007f`, `xylo\u0000 ${w}`]) {
      const res = await searchFor(q, "&type=segment");
      expect(res.status, `${JSON.stringify(q)}: ${res.text}`).toBe(200);
      if (!q.startsWith("xylo"))
        expect(
          res.body.data.results.map((h: any) => h.segment.id),
          JSON.stringify(q),
        ).toEqual([seg.id]);
      expect((await page(`/search?q=${encodeURIComponent(q)}`)).status, JSON.stringify(q)).toBe(200);
      const { result } = await mcpTool("search", { q });
      expect(result.isError ?? false, JSON.stringify(q)).toBe(false);
    }
    expectError(await searchFor("\u0000 \u0001"), 400, "VALIDATION_ERROR");
  });

  it.each([
    ["missing", ""],
    ["empty", "?q="],
    ["white space", "?q=%20%20%09"],
    ["over 200 characters", `?q=${"a".repeat(201)}`],
    ["punctuation only", `?q=${encodeURIComponent('" * ( ) : -')}`],
  ])("%s: 400 VALIDATION_ERROR naming q", async (_, query) => {
    const error = expectError(await call(`/search${query}`), 400, "VALIDATION_ERROR");
    expect(error.details.fields.map((f: any) => f.field)).toEqual(["q"]);
  });

  it("200 characters, and a type, limit or offset out of bounds", async () => {
    expect((await call(`/search?q=${"a".repeat(200)}`)).status).toBe(200);
    expect((await call(`/search?q=${"魔".repeat(200)}`)).status).toBe(200);
    for (const [query, field] of [
      ["&type=stories", "type"],
      ["&limit=0", "limit"],
      ["&offset=-1", "offset"],
    ]) {
      const error = expectError(await call(`/search?q=bell${query}`), 400, "VALIDATION_ERROR");
      expect(error.details.fields.map((f: any) => f.field)).toEqual([field]);
    }
  });
});

describe("the index follows every write", () => {
  it("a story's PATCH, a fork's first segment and a bot's segment at its turn (the branch room's batch) are found at once", async () => {
    const [w1, w2, w3, w4, w5] = [unique("a"), unique("b"), unique("c"), unique("d"), unique("e")];
    const owner = await registerHuman();
    const story = await createStory(owner.token, { title: `${w1} title`, tags: [w3] });
    const patched = await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { title: `${w2} title`, tags: ["other"] } });
    expect(patched.status).toBe(200);
    expect(await found(w1)).toEqual([]);
    expect(await found(w3)).toEqual([]);
    expect(await found(w2)).toEqual([story.id]);
    // Someone else's PATCH changes nothing, the index included.
    const stranger = await registerHuman();
    expect((await call(`/stories/${story.id}`, { method: "PATCH", token: stranger.token, body: { background: `${w4} background` } })).status).toBe(403);
    expect(await found(w4)).toEqual([]);
    expect((await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { background: `${w4} background` } })).status).toBe(200);
    expect(await found(w4)).toEqual([story.id]);
    expect(await found(w2)).toEqual([story.id]); // the title kept

    const fork = await createBranch(owner.token, story.id, { initial_segment: `${w5} opens the fork` });
    const [first] = (await call(`/branches/${fork.id}/segments`)).body.data.segments.slice(-1);
    expect(await found(w5)).toEqual([first.id]);

    const bot = await registerBot();
    expect((await join(bot.token, fork.id)).status).toBe(201);
    const byBot = await written(bot.token, fork.id, `the bot writes ${w5}`);
    expect(new Set(await found(w5))).toEqual(new Set([first.id, byBot.id]));
    // A refused write (not its turn) indexes nothing.
    const other = await registerBot();
    expect((await join(other.token, fork.id)).status).toBe(201);
    expect((await submit(other.token, fork.id, `refused out of turn ${w5}x`)).status).toBe(403);
    expect(await found(`${w5}x`)).toEqual([]);
  });

  it("a shard indexes what D1's own index held (the move's source, migration 0018's encoding), text for text", async () => {
    const owner = await registerHuman();
    const texts = [
      "English only, with a 'quote' and \"double\" ones.",
      "魔法师的学徒住在灯塔里，AI魔法和学徒s。",
      `${"长".repeat(70)}x${"短".repeat(70)}`, // runs across the backfill's 64-character chunks
      "カタカナ、ひらがな。학교에서 공부. 𠀀𠀁 ext-B 〇々",
      "edges: 〄々〇〈 ㇰ㈀ 㐀䶿䷀ 一鿿ꀀ 가힣힤 豈﫿ﬀ Ａ",
      "sentinels: a\u0002b\u0003c\u0004d\u001fe",
    ];
    const story = await createStory(owner.token, zhStory({ title: texts[1].slice(0, 20), background: texts[2], tags: ["魔法", "Tag Two", "学徒们"] }));
    const ids: string[] = [];
    for (const t of texts) ids.push((await written(owner.token, story.main_branch_id, t)).id);
    await searchable();
    const [{ rowid }] = (await env.DB.prepare("SELECT rowid FROM stories WHERE id = ?").bind(story.id).all<{ rowid: number }>()).results;
    const shard = env.SEARCH_SHARD.get(env.SEARCH_SHARD.idFromName(`search-${Math.floor((rowid - 1) / 1000)}`));
    const rows = (state: DurableObjectState) => ({
      stories: state.storage.sql.exec("SELECT rowid, title, background, tags FROM search_stories WHERE rowid = ?", rowid).toArray(),
      segments: state.storage.sql
        .exec("SELECT i.rowid, i.content FROM search_segments i JOIN segments g ON g.rowid = i.rowid WHERE g.story_id = ? ORDER BY i.rowid", story.id)
        .toArray(),
    });
    const inShard = await runInDurableObject(shard, (_: unknown, state: DurableObjectState) => rows(state));
    expect(inShard.segments.filter((r: any) => texts.some((t) => r.content === indexText(t)))).toHaveLength(texts.length);
    expect(inShard.stories).toEqual([
      { rowid, title: indexText(texts[1].slice(0, 20)), background: indexText(texts[2]), tags: indexText("魔法, Tag Two, 学徒们") },
    ]);

    // D1 holds no index row of a story written since the move began; migration 0018's statements, run again over
    // the same rows, make in D1 what a deployment's older stories were indexed as: the shard holds the same text.
    expect((await env.DB.prepare("SELECT count(*) AS n FROM search_segments").first<{ n: number }>())!.n).toBe(0);
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.endsWith("_search.sql"))!;
    const backfill = migration.queries.filter((q) => !/CREATE VIRTUAL TABLE/i.test(q) && /search_/.test(q));
    expect(backfill.length).toBe(5);
    for (const q of backfill) await env.DB.prepare(q).run();
    const inD1 = {
      stories: (await env.DB.prepare("SELECT rowid, title, background, tags FROM search_stories WHERE rowid = ?").bind(rowid).all()).results,
      segments: (
        await env.DB.prepare("SELECT i.rowid, i.content FROM search_segments i JOIN segments g ON g.rowid = i.rowid WHERE g.story_id = ? ORDER BY i.rowid")
          .bind(story.id)
          .all()
      ).results,
    };
    await env.DB.batch([env.DB.prepare("DELETE FROM search_stories"), env.DB.prepare("DELETE FROM search_segments")]);
    expect(inD1).toEqual(inShard);
    expect(await found("学徒们")).toEqual([story.id]);
  });
});

describe("MCP search", () => {
  it("answers as GET /search does, its snippets marked in the text, and refuses bad input as the API does", async () => {
    const w = unique("kite");
    const owner = await registerHuman();
    const story = await createStory(owner.token, { title: `${w} story`, tags: ["wind"] });
    const seg = await written(owner.token, story.main_branch_id, `The ${w} flew high.`);
    await searchable();
    const { result } = await mcpTool("search", { q: w });
    expect(result.isError ?? false).toBe(false);
    expect(result.structuredContent).toEqual((await searchFor(w)).body.data);
    expect(result.content[0].text).toContain(`«${w}» story`);
    expect(result.content[0].text).toContain(`The «${w}» flew high.`);
    expect(result.content[0].text).toContain(`branch ${story.main_branch_id}`);
    const segments = (await mcpTool("search", { q: w, type: "segment", tag: ["WIND"] })).result.structuredContent;
    expect(segments.results.map((h: any) => h.segment.id)).toEqual([seg.id]);
    for (const q of ["", " ", "a".repeat(201), "()"]) {
      const refused = (await mcpTool("search", { q })).result;
      expect(refused.isError, q).toBe(true);
      expect(refused.structuredContent.error.code).toBe("VALIDATION_ERROR");
    }
  });
});
