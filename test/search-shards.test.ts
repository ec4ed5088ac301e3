// Runs alone (vitest.config.ts): its search shards hold two stories each, under the names every file's shards have, and its sweeps resend every overdue story.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { getDb } from "../src/db/client";
import { SEGMENTS_PER_SYNC, type StorySnapshot, readSnapshot } from "../src/domain/discovery/search-snapshot";
import type { SearchMessage } from "../src/durable/search-shards";
import type { Env } from "../src/env";
import { handleSearch } from "../src/queue/search";
import { matchQuery } from "../src/lib/search-text";
import { sweep } from "../src/queue/sweeper";
import { call, createBranch, createStory, registerAdmin, registerHuman, unique, withBindings } from "./helpers";
import { capturedQueue } from "./inbox";
import { get, shown, visible } from "./pages";
import { hanziWord, written, zhStory } from "./search";

/**
 * The search shards themselves (src/durable/search-shard.ts): with two stories a shard, every story of this file is
 * in a range shard of its own neighbourhood, and the search queue is captured and drained here (`handleSearch`), so
 * a test says when a story reaches its shard. What is checked: each story lands in its range's shard and GET /search
 * answers across them as one index would; a shard's copy is idempotent and keeps the newest version; a long story is
 * copied in chunks; the sweeper hands over a lost or failed sync again; a suspension and a reader's preference hold in
 * every shard at once.
 */

const PER_SHARD = 2;
const sync = capturedQueue<SearchMessage>();
/** Every request of a test: small shards, and the search queue kept here. */
const VARS: Partial<Env> = { SEARCH_STORIES_PER_SHARD: String(PER_SHARD), SEARCH_SYNC: sync.queue as Queue };
const BOUND = { ...env, ...VARS } as Env;
const inShards = (fn: () => Promise<void>) => () => withBindings(VARS, fn);

const db = () => getDb(env.DB);

/** Runs the search consumer on what was queued, batch by batch as the queue hands it over, until nothing is left. */
async function drainSearch() {
  let round = 0;
  while (sync.sent.length) {
    const messages = sync.sent.splice(0).map((body, i) => ({ id: `s${round}-${i}`, body, attempts: 1, timestamp: new Date(), ack: vi.fn(), retry: vi.fn() }));
    await handleSearch({ queue: "search-sync", messages } as never, BOUND);
    for (const m of messages) {
      expect(m.retry).not.toHaveBeenCalled();
      expect(m.ack).toHaveBeenCalledOnce();
    }
    round++;
  }
}

/** The story's search state in D1. */
const searchState = async (storyId: string) =>
  (await env.DB.prepare("SELECT rowid, search_version, search_synced, search_upto, search_dirty_at FROM stories WHERE id = ?")
    .bind(storyId)
    .first<{ rowid: number; search_version: number; search_synced: number; search_upto: number; search_dirty_at: string | null }>())!;

const shardOf = (rowid: number) => Math.floor((rowid - 1) / PER_SHARD);
const shardStub = (name: string) => env.SEARCH_SHARD.get(env.SEARCH_SHARD.idFromName(name));
const shard = (k: number) => shardStub(`search-${k}`);

/** Runs SQL in a shard's own storage. */
const inShard = <T = Record<string, SqlStorageValue>>(stub: DurableObjectStub, query: string, ...params: SqlStorageValue[]) =>
  runInDurableObject(stub, (_: unknown, state: DurableObjectState) => state.storage.sql.exec(query, ...params).toArray() as T[]);

/** Everything a shard holds of a story: its rows and index rows. */
const copyOf = (stub: DurableObjectStub, storyId: string) =>
  runInDurableObject(stub, (_: unknown, state: DurableObjectState) => {
    const q = (query: string) => state.storage.sql.exec(query, storyId).toArray();
    return {
      story: q("SELECT * FROM stories WHERE id = ?"),
      index: q("SELECT rowid, title, background, tags FROM search_stories WHERE rowid IN (SELECT rowid FROM stories WHERE id = ?)"),
      tags: q("SELECT * FROM story_tags WHERE story_id = ? ORDER BY position"),
      branches: q("SELECT * FROM branches WHERE story_id = ? ORDER BY id"),
      segments: q("SELECT * FROM segments WHERE story_id = ? ORDER BY rowid"),
      segmentIndex: q("SELECT rowid, content FROM search_segments WHERE rowid IN (SELECT rowid FROM segments WHERE story_id = ?) ORDER BY rowid"),
    };
  });

/** A segment written, its id. */
const writtenId = async (token: string, branchId: string, content: string) => (await written(token, branchId, content)).id;

/** A fresh story of a fresh owner, copied to its shard. */
async function caughtUp() {
  const owner = await registerHuman();
  const story = await createStory(owner.token);
  await drainSearch();
  return { owner, story };
}

/** GET /search's data (the queue drained first). */
async function search(q: string, query = "", token?: string) {
  await drainSearch();
  const res = await call(`/search?q=${encodeURIComponent(q)}${query}`, { token });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { results: any[]; count: number; counts: { stories: number | null; segments: number | null }; pagination: any };
}

const idOf = (hit: any) => (hit.type === "story" ? hit.story.id : hit.segment.id) as string;

/**
 * The whole answer to `q` with `query`, checked against what one index must answer: exactly `stories` and `segments`
 * found and counted, stories first, and every page of `limit` the same slice of the whole list.
 */
async function answersAsOne(q: string, query: string, expected: { stories: string[]; segments: string[] }, limit = 2) {
  const whole = await search(q, `${query}&limit=100`);
  const ids = whole.results.map(idOf);
  const kinds = whole.results.map((h) => h.type);
  expect(new Set(ids.slice(0, expected.stories.length)), `${q}${query}: stories`).toEqual(new Set(expected.stories));
  expect(new Set(ids.slice(expected.stories.length)), `${q}${query}: segments`).toEqual(new Set(expected.segments));
  expect(ids).toHaveLength(expected.stories.length + expected.segments.length);
  expect(kinds.indexOf("segment") === -1 || kinds.lastIndexOf("story") < kinds.indexOf("segment")).toBe(true);
  const type = /type=(\w+)/.exec(query)?.[1] ?? "all";
  expect(whole.counts).toEqual({
    stories: type === "segment" ? null : expected.stories.length,
    segments: type === "story" ? null : expected.segments.length,
  });
  expect(whole.count).toBe(ids.length);
  const paged: string[] = [];
  for (let offset = 0; offset < ids.length + limit; offset += limit) {
    const page = await search(q, `${query}&limit=${limit}&offset=${offset}`);
    expect(page.count).toBe(ids.length);
    expect(page.counts).toEqual(whole.counts);
    expect(page.pagination).toEqual({ limit, offset, total: ids.length, has_more: offset + limit < ids.length });
    paged.push(...page.results.map(idOf));
  }
  expect(paged).toEqual(ids);
  return ids;
}

describe("many shards, one answer", () => {
  it(
    "each story lands in its range's shard only, and GET /search across them finds, counts and pages as one index",
    inShards(async () => {
      const w = unique("tide");
      const zw = hanziWord(2);
      const [tagA, tagB] = [unique("ta"), unique("tb")];
      const owner = await registerHuman();
      const make = async (input: Record<string, unknown>, texts: string[]) => {
        const story = await createStory(owner.token, input);
        const segments: string[] = [];
        for (const t of texts) segments.push(await writtenId(owner.token, story.main_branch_id, t));
        return { ...story, segments };
      };
      const e1 = await make({ title: `${w} lighthouse`, tags: [tagA] }, [`The ${w} rose at dawn.`, "Nothing to see here."]);
      const e2 = await make({ background: `A ${w} town by the sea.`, tags: [tagA], rating: "mature" }, [`Then ${w} and ${w} again.`]);
      const e3 = await make({ tags: [tagB] }, [`Far off a ${w} sang.`, `The ${w} fell quiet.`]);
      const z1 = await make(zhStory({ title: `${zw}之城`, tags: [tagB] }), [`我们看见了${zw}。`]);
      const z2 = await make(zhStory({ background: `古老的${zw}传说，在山里流传了很久。`, rating: "mature" }), [`${zw}在夜里醒来。`]);
      const z3 = await make(zhStory({ tags: [tagA] }), [`故事 ${w} 故事。`, `山上的${zw}。`]);
      const all = [e1, e2, e3, z1, z2, z3];
      // Nothing is searchable before the queue's sync: the writes only handed their stories over.
      expect(new Set(sync.sent.map((m) => ("storyId" in m ? m.storyId : "move")))).toEqual(new Set(all.map((s) => s.id)));
      await drainSearch();

      // Each story, its branches and segments, in the shard of its rowid's range and in no other.
      const rowids = await Promise.all(all.map(async (s) => (await searchState(s.id)).rowid));
      const shards = [...new Set(rowids.map(shardOf))];
      expect(shards.length).toBeGreaterThanOrEqual(3);
      const maxShard = Math.max(...shards);
      for (let k = 0; k <= maxShard; k++) {
        const held = new Set((await inShard<{ id: string }>(shard(k), "SELECT id FROM stories")).map((r) => r.id));
        const heldSegments = new Set((await inShard<{ id: string }>(shard(k), "SELECT id FROM segments")).map((r) => r.id));
        all.forEach((s, i) => {
          expect(held.has(s.id), `story ${i} in shard ${k}`).toBe(shardOf(rowids[i]) === k);
          for (const g of s.segments) expect(heldSegments.has(g), `segment of story ${i} in shard ${k}`).toBe(shardOf(rowids[i]) === k);
        });
        expect(held.size).toBeLessThanOrEqual(PER_SHARD);
      }
      for (const s of all) expect(await searchState(s.id)).toMatchObject({ search_dirty_at: null });

      // English, across every shard a hit is in: stories first, then segments, every page a slice of the whole.
      const wSegments = [e1.segments[0], e2.segments[0], e3.segments[0], e3.segments[1], z3.segments[0]];
      await answersAsOne(w, "", { stories: [e1.id, e2.id], segments: wSegments });
      await answersAsOne(w, "", { stories: [e1.id, e2.id], segments: wSegments }, 3);
      await answersAsOne(w, "&type=story", { stories: [e1.id, e2.id], segments: [] }, 1);
      await answersAsOne(w, "&type=segment", { stories: [], segments: wSegments });
      // Chinese: a two-character word inside runs of text, in three stories of different shards.
      const zSegments = [z1.segments[0], z2.segments[0], z3.segments[1]];
      await answersAsOne(zw, "", { stories: [z1.id, z2.id], segments: zSegments });
      // A story's filters hold in every shard.
      await answersAsOne(w, `&tag=${tagA}`, { stories: [e1.id, e2.id], segments: [e1.segments[0], e2.segments[0], z3.segments[0]] });
      await answersAsOne(w, "&rating=general", { stories: [e1.id], segments: [e1.segments[0], e3.segments[0], e3.segments[1], z3.segments[0]] });
      await answersAsOne(zw, `&exclude_tag=${tagB}&rating=mature`, { stories: [z2.id], segments: [z2.segments[0]] }, 1);

      // Ranked as one index ranks them: the same rows in D1's own index (migration 0018's statements) give the order.
      const migration = env.TEST_MIGRATIONS.find((m) => m.name.endsWith("_search.sql"))!;
      for (const q of migration.queries.filter((q) => !/CREATE VIRTUAL TABLE/i.test(q) && /search_/.test(q))) await env.DB.prepare(q).run();
      const oneIndex = async (words: string) => {
        const { match } = matchQuery(words)!;
        const stories = await env.DB.prepare(
          "SELECT s.id FROM search_stories f JOIN stories s ON s.rowid = f.rowid WHERE search_stories MATCH ? ORDER BY bm25(search_stories, 10.0, 1.0, 5.0), s.rowid",
        )
          .bind(match)
          .all<{ id: string }>();
        const segments = await env.DB.prepare(
          "SELECT g.id FROM search_segments f JOIN segments g ON g.rowid = f.rowid WHERE search_segments MATCH ? ORDER BY bm25(search_segments), g.rowid",
        )
          .bind(match)
          .all<{ id: string }>();
        return [...stories.results, ...segments.results].map((r) => r.id);
      };
      try {
        for (const words of [w, zw, `${w} again`, `${zw} 山`])
          expect((await search(words, "&limit=100")).results.map(idOf), words).toEqual(await oneIndex(words));
      } finally {
        await env.DB.batch([env.DB.prepare("DELETE FROM search_stories"), env.DB.prepare("DELETE FROM search_segments")]);
      }
    }),
  );
});

describe("a shard's copy: idempotent, the newest version kept, a long story in chunks", () => {
  it(
    "the same snapshot twice changes nothing; an older one after a newer one keeps the newer story and still adds its segments",
    inShards(async () => {
      const [old, fresh] = [unique("old"), unique("fresh")];
      const owner = await registerHuman();
      const story = await createStory(owner.token, { title: `${old} title`, tags: ["kept"] });
      const segment = await writtenId(owner.token, story.main_branch_id, `A ${fresh} segment.`);
      // A sync's read, held back (a queue's sync that stalls) while a PATCH's own sync goes ahead.
      const stale = (await readSnapshot(db(), story.id))!;
      expect(stale.snapshot.segments.map((g) => g.id)).toContain(segment);
      sync.sent.length = 0; // the hand-overs are lost: only the syncs of this test reach the shard
      const patched = await call(`/stories/${story.id}`, { method: "PATCH", token: owner.token, body: { title: `${fresh} title`, tags: ["new"] } });
      expect(patched.status, patched.text).toBe(200);
      const after = await searchState(story.id);
      expect(after.search_version).toBeGreaterThan(stale.version);
      expect(after).toMatchObject({ search_synced: after.search_version, search_dirty_at: null });
      const newer = (await readSnapshot(db(), story.id))!;
      expect(newer.version).toBe(after.search_version);
      expect(newer.snapshot.segments).toEqual([]); // copied by the PATCH's sync

      // The story's own shard: the PATCH's sync took the new title before the answer; the stale one changes nothing.
      const home = shard(shardOf(after.rowid));
      const taken = await copyOf(home, story.id);
      expect(taken.story).toMatchObject([{ title: `${fresh} title`, version: after.search_version }]);
      await home.apply(stale.snapshot);
      await home.apply(stale.snapshot);
      await home.apply(newer.snapshot);
      expect(await copyOf(home, story.id)).toEqual(taken);
      expect((await search(old)).results).toEqual([]);
      expect((await search(fresh)).results.map(idOf)).toEqual([story.id, segment]);
      expect((await search("kept")).results.map(idOf)).not.toContain(story.id);

      // A shard that took the newer snapshot first (it had none of the segments): the stale one brings its segments,
      // never its story; each snapshot again is nothing new.
      const other = shardStub(unique("search-copy-"));
      await other.apply(newer.snapshot);
      expect((await copyOf(other, story.id)).segments).toEqual([]);
      await other.apply(stale.snapshot as StorySnapshot);
      const merged = await copyOf(other, story.id);
      expect(merged.story).toMatchObject([{ title: `${fresh} title`, version: newer.version }]);
      expect(merged.tags.map((t) => t.name)).toEqual(["new"]);
      expect(merged.index[0].title).toContain(fresh);
      expect(merged.segments.map((g) => g.id)).toEqual(stale.snapshot.segments.map((g) => g.id));
      expect(merged.segmentIndex.map((r) => r.rowid)).toEqual(stale.snapshot.segments.map((g) => g.rowid));
      for (const s of [stale, newer, stale, newer]) await other.apply(s.snapshot);
      expect(await copyOf(other, story.id)).toEqual(merged);
    }),
  );

  it(
    `a story with more than ${SEGMENTS_PER_SYNC} new segments is copied a chunk at a time until caught up`,
    inShards(async () => {
      const last = unique("last");
      const owner = await registerHuman();
      const story = await createStory(owner.token);
      for (let i = 0; i < SEGMENTS_PER_SYNC; i += 20)
        await Promise.all(Array.from({ length: 20 }, (_, j) => written(owner.token, story.main_branch_id, `segment ${i + j} of many`)));
      const lastId = await writtenId(owner.token, story.main_branch_id, `the ${last} one`);
      const read = (await readSnapshot(db(), story.id))!;
      expect(read.snapshot.segments).toHaveLength(SEGMENTS_PER_SYNC);
      expect(read.more).toBe(true);

      await drainSearch();
      const total = (await env.DB.prepare("SELECT count(*) AS n, max(rowid) AS upto FROM segments WHERE story_id = ?")
        .bind(story.id)
        .first<{ n: number; upto: number }>())!;
      expect(total.n).toBeGreaterThan(SEGMENTS_PER_SYNC + 1);
      const state = await searchState(story.id);
      expect(state).toMatchObject({ search_synced: state.search_version, search_upto: total.upto, search_dirty_at: null });
      const copy = await copyOf(shard(shardOf(state.rowid)), story.id);
      expect(copy.segments).toHaveLength(total.n);
      expect(copy.segmentIndex).toHaveLength(total.n);
      expect((await search(last)).results.map(idOf)).toEqual([lastId]);
    }),
  );
});

describe("the sweeper hands a story over again", () => {
  it(
    "a segment whose hand-over was lost is found once the resend delay passed and the sweeper's message is drained",
    inShards(async () => {
      const w = unique("lost");
      const { owner, story } = await caughtUp();
      const segment = await writtenId(owner.token, story.main_branch_id, `A ${w} letter.`);
      expect(sync.sent).toEqual([{ storyId: story.id }]);
      sync.sent.length = 0; // lost
      expect((await search(w)).results).toEqual([]);
      expect((await searchState(story.id)).search_dirty_at).not.toBeNull();

      // Not before the resend delay: the queue may still be on it.
      await sweep(BOUND);
      expect(sync.sent).toEqual([]);
      const swept = await sweep(BOUND, Date.now() + 120_000);
      expect(swept.resynced).toBeGreaterThanOrEqual(1);
      expect(sync.sent).toContainEqual({ storyId: story.id });
      expect((await search(w)).results.map(idOf)).toEqual([segment]);
      expect(await searchState(story.id)).toMatchObject({ search_dirty_at: null });
    }),
  );

  it(
    "a busy story is handed over once a window (SEARCH_HAND_OVER_MS), and its one sync reads every write of the window",
    inShards(async () => {
      const w = unique("busy");
      const owner = await registerHuman();
      const windowed = { ...VARS, SEARCH_HAND_OVER_MS: "60000" };
      // The story's creation hands it over at once (a new story waits for no window); its first write opens a window
      // (its message delivered when it ends) and the window's later writes hand nothing over.
      const { story, ids } = await withBindings(windowed, async () => {
        const created = await createStory(owner.token);
        const written: string[] = [];
        for (let i = 0; i < 3; i++) written.push(await writtenId(owner.token, created.main_branch_id, `The ${w} bell, stroke ${i}.`));
        return { story: created, ids: written };
      });
      expect(sync.sent).toEqual([{ storyId: story.id }, { storyId: story.id }]);
      await drainSearch();
      expect((await search(w, "&type=segment")).results.map(idOf).sort()).toEqual([...ids].sort());
      // The sweeper's hand-over is past any window: a story behind is sent again at once.
      const later = await withBindings(windowed, () => writtenId(owner.token, story.main_branch_id, `The ${w} bell, late.`));
      expect(sync.sent).toEqual([]);
      await sweep({ ...BOUND, SEARCH_HAND_OVER_MS: "60000" } as Env, Date.now() + 120_000);
      expect(sync.sent).toContainEqual({ storyId: story.id });
      expect((await search(w, "&type=segment")).results.map(idOf)).toContain(later);
    }),
  );

  it(
    "a sync that fails leaves the story behind in D1 (its message retried), and the sweeper's later sync catches it up",
    inShards(async () => {
      const w = unique("retry");
      const { owner, story } = await caughtUp();
      const home = shard(shardOf((await searchState(story.id)).rowid));
      const segment = await writtenId(owner.token, story.main_branch_id, `The ${w} bell.`);
      // The shard cannot take the segment's row (its table is away): its apply fails.
      await inShard(home, "ALTER TABLE segments RENAME TO segments_away");
      try {
        const messages = sync.sent.splice(0).map((body, i) => ({ id: `f${i}`, body, attempts: 1, timestamp: new Date(), ack: vi.fn(), retry: vi.fn() }));
        expect(messages).toHaveLength(1);
        await handleSearch({ queue: "search-sync", messages } as never, BOUND);
        expect(messages[0].ack).not.toHaveBeenCalled();
        expect(messages[0].retry).toHaveBeenCalledOnce();
      } finally {
        await inShard(home, "ALTER TABLE segments_away RENAME TO segments");
      }
      const behind = await searchState(story.id);
      expect(behind.search_dirty_at).not.toBeNull();
      expect(behind.search_synced).toBeLessThan(behind.search_version);
      expect((await search(w)).results).toEqual([]);

      // The queue gave up on it: the sweeper hands it over again.
      await sweep(BOUND, Date.now() + 120_000);
      expect(sync.sent).toContainEqual({ storyId: story.id });
      expect((await search(w)).results.map(idOf)).toEqual([segment]);
      expect(await searchState(story.id)).toMatchObject({ search_dirty_at: null });
    }),
  );
});

describe("what rides with the query holds in every shard at once", () => {
  it(
    "a suspended author's stories and segments leave every shard's answer with no sync; a restore brings them back",
    inShards(async () => {
      const w = unique("moth");
      const admin = await registerAdmin();
      const author = await registerHuman();
      const other = await registerHuman();
      const mine = [];
      for (let i = 0; i < 3; i++) mine.push(await createStory(author.token, { title: `${w} ${i}` }));
      const mineSegments = [];
      for (const s of mine) mineSegments.push(await writtenId(author.token, s.main_branch_id, `A ${w} flew.`));
      const theirs = await createStory(other.token, { title: `${w} theirs` });
      // The author's segment in another's story: the first of a fork they open there.
      const fork = await createBranch(author.token, theirs.id, { initial_segment: `The ${w} came in.` });
      const guest = (await call(`/branches/${fork.id}/segments`)).body.data.segments.at(-1).id as string;
      const host = await writtenId(other.token, theirs.main_branch_id, `The ${w} left.`);
      const everything = [...mine.map((s) => s.id), theirs.id, ...mineSegments, guest, host];
      expect(new Set((await search(w, "&limit=100")).results.map(idOf))).toEqual(new Set(everything));
      const rowids = await Promise.all(mine.map(async (s) => (await searchState(s.id)).rowid));
      expect(new Set(rowids.map(shardOf)).size).toBeGreaterThanOrEqual(2);

      const suspended = await call(`/admin/accounts/${author.id}/suspend`, { token: admin.token, body: { reason: "spam" } });
      expect(suspended.status, suspended.text).toBe(200);
      expect(sync.sent).toEqual([]); // no story was handed over: the shards still hold it all
      const answer = await search(w, "&limit=100");
      expect(new Set(answer.results.map(idOf))).toEqual(new Set([theirs.id, host]));
      expect(answer.counts).toEqual({ stories: 1, segments: 1 });

      expect((await call(`/admin/accounts/${author.id}/restore`, { token: admin.token, body: { reason: "appeal" } })).status).toBe(200);
      expect(new Set((await search(w, "&limit=100")).results.map(idOf))).toEqual(new Set(everything));
    }),
  );

  it(
    "a signed-in reader's preference (mature stories, hidden tags) holds on the search page in every shard",
    inShards(async () => {
      const w = unique("fern");
      const tag = unique("tg");
      const owner = await registerHuman();
      const reader = await registerHuman();
      const mature = await createStory(owner.token, { title: `${w} mature`, rating: "mature" });
      const tagged = await createStory(owner.token, { title: `${w} tagged`, tags: [tag] });
      const plain = await createStory(owner.token, { title: `${w} plain` });
      const plainSegment = await writtenId(owner.token, plain.main_branch_id, `A ${w} grew.`);
      const matureSegment = await writtenId(owner.token, mature.main_branch_id, `A ${w} fell.`);
      await drainSearch();
      const rowids = await Promise.all([mature, tagged, plain].map(async (s) => (await searchState(s.id)).rowid));
      expect(new Set(rowids.map(shardOf)).size).toBeGreaterThanOrEqual(2);
      const shownOf = async (session?: string) => {
        const text = shown(await get(`/search?q=${w}`, { session, env: VARS }));
        const has = (s: { id: string }) => text.includes(`href="/stories/${s.id}"`);
        return {
          text: visible(text),
          mature: has(mature),
          tagged: has(tagged),
          plain: has(plain),
          segments: [plainSegment, matureSegment].filter((g) => text.includes(`#s-${g}"`)),
        };
      };
      expect(await shownOf(reader.token)).toMatchObject({ mature: true, tagged: true, plain: true, segments: [plainSegment, matureSegment] });

      const put = async (body: Record<string, unknown>) =>
        expect((await call("/me/preferences", { method: "PUT", token: reader.token, body })).status).toBe(200);
      await put({ hide_mature: true, hidden_tags: [] });
      const noMature = await shownOf(reader.token);
      expect(noMature).toMatchObject({ mature: false, tagged: true, plain: true, segments: [plainSegment] });
      expect(noMature.text).toContain("Your preferences leave out mature stories");
      await put({ hide_mature: false, hidden_tags: [tag] });
      expect(await shownOf(reader.token)).toMatchObject({ mature: true, tagged: false, plain: true, segments: [plainSegment, matureSegment] });
      // Nobody else's answer changes.
      expect(await shownOf()).toMatchObject({ mature: true, tagged: true, plain: true });
    }),
  );
});
