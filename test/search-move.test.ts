// Runs alone (vitest.config.ts): it rewrites search_move and fills D1's own FTS tables (a legacy deployment's index), which any other file's search would read.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { getDb } from "../src/db/client";
import { movedStatements, nextToMoveQuery } from "../src/domain/discovery/search-move";
import { type SearchMessage, searchShardsOf } from "../src/durable/search-shards";
import type { Env } from "../src/env";
import { handleSearch } from "../src/queue/search";
import { sweep } from "../src/queue/sweeper";
import { moveSteps, syncStory } from "../src/usecases/search";
import { call, createBranch, createStory, registerHuman, searchable, storyInput, submit, unique } from "./helpers";
import { capturedQueue } from "./inbox";
import { hide, moderator } from "./moderation";

/**
 * The move of an existing deployment's search index out of D1 into the search shards (src/domain/discovery/search-move.ts),
 * one story at a time while readers search and writers write: every answer stays the one D1 gave before the move, plus
 * what was written since, with no hit lost or counted twice at any step; a crash between a story's copy and its D1 batch,
 * and two movers at once, change nothing; the sweeper keeps the move going while legacy stories remain.
 *
 * The tests below are steps of one move and run in order. No search may run before the deployment is made legacy: a
 * search that sees the move done remembers it for the isolate's life (src/usecases/search.ts, `moveSeenDone`).
 */

const db = getDb(env.DB);
const shards = searchShardsOf(env);

/** `n` random CJK ideographs: a word no other text here has. */
const hanziWord = (n: number) => Array.from({ length: n }, () => String.fromCodePoint(0x4e00 + Math.floor(Math.random() * 0x5000))).join("");

const w = unique("lantern");
const zw = hanziWord(2);
const enStory = (overrides: Record<string, unknown> = {}) => storyInput({ max_length: 500, ...overrides });
const zhStory = (overrides: Record<string, unknown> = {}) =>
  storyInput({ language: "zh", min_length: 2, max_length: 500, starter: "故事开始了。", initial_segments: ["第一段。", "第二段。", "第三段。"], ...overrides });

interface Query {
  q: string;
  type?: "story" | "segment";
  /** A page of the full answer (checked against the full answer's slice at the same moment). */
  page?: { limit: number; offset: number };
}

/** The queries whose answers must not change but for the segments written during the move. */
const QUERIES: Query[] = [
  { q: w },
  { q: w, type: "story" },
  { q: w, type: "segment" },
  { q: zw },
  { q: zw, type: "segment" },
  { q: [...zw][0] },
  { q: `${w} ${zw}` },
  { q: w, page: { limit: 3, offset: 2 } },
  { q: zw, type: "segment", page: { limit: 2, offset: 1 } },
];

const label = (q: Query) => `${q.q} ${q.type ?? "all"}${q.page ? ` limit=${q.page.limit} offset=${q.page.offset}` : ""}`;

/** The words of the query are all in the text (the texts here make this what the index finds). */
const matches = (q: Query, text: string) => q.type !== "story" && q.q.split(" ").every((word) => text.includes(word));

/** `GET /search` as a reader asks it (the whole answer: limit 100, unless a page). */
async function ask(q: Query) {
  const page = q.page ?? { limit: 100, offset: 0 };
  const res = await call(`/search?q=${encodeURIComponent(q.q)}${q.type ? `&type=${q.type}` : ""}&limit=${page.limit}&offset=${page.offset}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data as { results: any[]; count: number; counts: { stories: number | null; segments: number | null }; pagination: any };
}

const idOf = (hit: any) => (hit.type === "story" ? hit.story.id : hit.segment.id) as string;

interface Seeded {
  id: string;
  main_branch_id: string;
  rowid: number;
  language: string;
}

const stories: Seeded[] = [];
let hiddenSegment = "";
/** The answers of `QUERIES` as D1's legacy index gave them, before any step. */
const reference = new Map<Query, Awaited<ReturnType<typeof ask>>>();
/** The segments written during the move, with their text. */
const written: { id: string; text: string }[] = [];

const one = async <T>(query: string, ...binds: unknown[]) =>
  (await env.DB.prepare(query)
    .bind(...binds)
    .first<T>())!;

const moveState = () => one<{ watermark: number; legacy_max: number }>("SELECT watermark, legacy_max FROM search_move WHERE id = 1");

/** The stub of the shard that holds a story's rowid. */
const shardOf = (rowid: number) => env.SEARCH_SHARD.get(env.SEARCH_SHARD.idFromName(`search-${shards.shardOf(rowid)}`));

/** What a shard holds of a story: its row and index row, its segments' rows and index rows, its hidden ones. */
const inShard = (story: Seeded) =>
  runInDurableObject(shardOf(story.rowid), (_: unknown, state: DurableObjectState) => {
    const n = (q: string, ...b: unknown[]) => (state.storage.sql.exec(q, ...b).one() as { n: number }).n;
    return {
      story: n("SELECT count(*) AS n FROM stories WHERE rowid = ?", story.rowid),
      indexed: n("SELECT count(*) AS n FROM search_stories WHERE rowid = ?", story.rowid),
      segments: n("SELECT count(*) AS n FROM segments WHERE story_id = ?", story.id),
      indexedSegments: n("SELECT count(*) AS n FROM search_segments WHERE rowid IN (SELECT rowid FROM segments WHERE story_id = ?)", story.id),
      hidden: n("SELECT count(*) AS n FROM segments WHERE story_id = ? AND hidden_at IS NOT NULL", story.id),
    };
  });

/** What D1's own index holds of a story, and how many segments the story has. */
const inD1 = async (story: Seeded) => ({
  indexed: (await one<{ n: number }>("SELECT count(*) AS n FROM search_stories WHERE rowid = ?", story.rowid)).n,
  indexedSegments: (
    await one<{ n: number }>("SELECT count(*) AS n FROM search_segments WHERE rowid IN (SELECT rowid FROM segments WHERE story_id = ?)", story.id)
  ).n,
  segments: (await one<{ n: number }>("SELECT count(*) AS n FROM segments WHERE story_id = ?", story.id)).n,
});

/**
 * Every sync the queue owes has run, a legacy story's too (`searchable` leaves those out: they are searched in D1),
 * so that two asks in a row see the same shards (a shard's rank of a hit moves with what else it holds).
 */
async function quiet() {
  await searchable();
  for (let i = 0; ; i++) {
    if (!(await one<{ n: number }>("SELECT count(*) AS n FROM stories WHERE search_dirty_at IS NOT NULL")).n) return;
    if (i > 200) throw new Error("the search queue did not settle");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Every query answers its reference plus the segments written since that it matches: the same hits (each hit as it
 * was), none twice, the counts moved by exactly those, stories before segments, and a page the whole answer's slice.
 * `oneIndex`: every story is searched in one index (D1's before the move, the shard's after it), so the reference's
 * hits keep their rank order; between, bm25 ranks each index's hits by that index's own statistics, which a merge
 * across indexes cannot make one order.
 */
async function expectReferenceAnswers(when: string, oneIndex = false) {
  await quiet();
  for (const q of QUERIES) {
    const ref = reference.get(q)!;
    const added = written.filter((s) => matches(q, s.text)).map((s) => s.id);
    const whole = await ask({ q: q.q, type: q.type });
    const ids = whole.results.map(idOf);
    const at = `${when}: ${label(q)}`;
    expect(ids.length, `${at}: a hit twice`).toBe(new Set(ids).size);
    const refWhole = reference.get(QUERIES.find((r) => r.q === q.q && r.type === q.type && !r.page)!)!;
    expect([...ids].sort(), at).toEqual([...refWhole.results.map(idOf), ...added].sort());
    const kinds = whole.results.map((h) => h.type);
    expect(kinds, `${at}: stories first`).toEqual([...kinds].sort((a, b) => (a === b ? 0 : a === "story" ? -1 : 1)));
    const refHits = new Map(refWhole.results.map((h) => [idOf(h), h]));
    if (oneIndex)
      expect(
        ids.filter((id) => refHits.has(id)),
        `${at}: ranked as before`,
      ).toEqual(refWhole.results.map(idOf));
    for (const hit of whole.results) if (refHits.has(idOf(hit))) expect(hit, `${at}: the hit as it was`).toEqual(refHits.get(idOf(hit)));
    const counts = {
      stories: refWhole.counts.stories,
      segments: refWhole.counts.segments === null ? null : refWhole.counts.segments + added.length,
    };
    expect(whole.counts, at).toEqual(counts);
    expect(whole.count, at).toBe(refWhole.count + added.length);
    expect(whole.count, at).toBe(ids.length);
    if (q.page) {
      const page = await ask(q);
      expect(page.results.map(idOf), at).toEqual(ids.slice(q.page.offset, q.page.offset + q.page.limit));
      expect(page.counts, at).toEqual(counts);
      expect(page.pagination, at).toMatchObject({ limit: q.page.limit, offset: q.page.offset, total: whole.count });
      expect(page.count, at).toBe(ref.count + added.length);
    }
  }
}

/** D1's index holds every story not yet moved (its segments written since included) and nothing of a moved one. */
/** Stories whose move stopped after its batch, before its rows in D1's index were deleted (the move's end deletes them). */
const leftover = new Set<string>();

async function expectD1Index() {
  const { watermark } = await moveState();
  for (const s of stories) {
    const d1 = await inD1(s);
    if (s.rowid < watermark) expect(d1, `story ${s.rowid} moved`).toMatchObject({ indexed: 0, ...(leftover.has(s.id) ? {} : { indexedSegments: 0 }) });
    else expect(d1, `story ${s.rowid} not moved`).toEqual({ indexed: 1, indexedSegments: d1.segments, segments: d1.segments });
  }
}

/** A moved story is whole in its shard: its row, index row, every segment with its index row, the hidden one hidden. */
async function expectMovedInShard(s: Seeded) {
  const d1 = await inD1(s);
  const shard = await inShard(s);
  expect(shard, `story ${s.rowid} in its shard`).toMatchObject({ story: 1, indexed: 1, segments: d1.segments, indexedSegments: d1.segments });
  expect(shard.hidden).toBe(s.id === stories[0].id ? 1 : 0);
}

/** Readers write on while the move goes: a segment on `story` (its words `w` or `zw`, and a word of its own). */
async function writeOn(story: Seeded, step: string, bindings?: Partial<Env>) {
  const own = unique("mark");
  const text = story.language === "zh" ? `第${step}步：新的${zw}。${own}` : `Step ${step}: a new ${w} here. ${own}`;
  const res = await call(`/branches/${story.main_branch_id}/segments`, { token: owner.token, body: { content: text }, env: bindings });
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.segment.id as string;
  written.push({ id, text });
  return { id, own };
}

let owner: Awaited<ReturnType<typeof registerHuman>>;

/**
 * One step of the move (`move`: one story, or `most` of them) with readers and writers around it: a segment
 * on the story next in line (found at once: D1 indexes it in its write's batch) and on the one just moved (found once
 * `searchable` says the shards caught up).
 */
async function stepAndWrite(step: string, move: () => Promise<unknown>, most = 1) {
  const before = await moveState();
  const waitingBefore = stories.filter((s) => s.rowid >= before.watermark);
  await move();
  const after = await moveState();
  const moved = waitingBefore.filter((s) => s.rowid < after.watermark);
  expect(moved.length, `${step}: stories moved`).toBeGreaterThanOrEqual(1);
  expect(moved.length, `${step}: stories moved`).toBeLessThanOrEqual(most);
  expect(moved, `${step}: the first in line moved first`).toEqual(waitingBefore.slice(0, moved.length));
  expect(after.watermark, `${step}: the watermark passed the story`).toBe(moved.at(-1)!.rowid + 1);
  await expectReferenceAnswers(`${step}, moved`);
  for (const s of moved) await expectMovedInShard(s);
  await expectD1Index();
  const waiting = stories.find((s) => s.rowid >= after.watermark);
  if (waiting) {
    const { id, own } = await writeOn(waiting, step);
    expect((await ask({ q: own })).results.map(idOf), `${step}: a waiting story's segment found at once`).toEqual([id]);
  }
  const { id, own } = await writeOn(moved.at(-1)!, step);
  await searchable();
  expect((await ask({ q: own })).results.map(idOf), `${step}: a moved story's segment found once searchable`).toEqual([id]);
  await expectReferenceAnswers(`${step}, written`);
  await expectD1Index();
}

describe("the move of a deployment's search index out of D1, while it is used", () => {
  it("seeds stories as a deployment held them, and makes it legacy: D1's own index holds them, the shards nothing", async () => {
    owner = await registerHuman();
    const mod = await moderator();
    const made = [
      await createStory(owner.token, enStory({ title: `The ${w} keeper` })),
      await createStory(owner.token, zhStory({ title: `${zw}之歌` })),
      await createStory(owner.token, enStory({ background: `A town where every ${w} sings.`, tags: [`${w} lore`, "sea"] })),
      await createStory(owner.token, zhStory({ background: `很久以前，${zw}住在海边的小镇。` })),
      await createStory(owner.token, enStory({ tags: [w] })),
      await createStory(owner.token, zhStory()),
      await createStory(owner.token, enStory()),
      await createStory(owner.token, enStory()),
    ];
    const texts: [number, string][] = [
      [0, `The ${w} burned all night.`],
      [0, `A hidden ${w} nobody may find.`],
      [1, `他点亮了${zw}的灯。`],
      [2, `Old ${w}, ${w}, ${w}!`],
      [2, "Nothing to find in this one."],
      [3, `${zw}和${zw}，还有${zw}。`],
      [4, `One more ${w} by the shore, and it was a long day.`],
      [5, `山里有${zw}。`],
      [6, `The ${w} and the ${zw} together.`],
    ];
    const segmentIds: string[] = [];
    for (const [i, text] of texts) {
      const res = await submit(owner.token, made[i].main_branch_id, text);
      expect(res.status, res.text).toBe(201);
      segmentIds.push(res.body.data.segment.id);
    }
    await createBranch(owner.token, made[5].id, { initial_segment: `分支里的${zw}。` });
    hiddenSegment = segmentIds[1];
    expect((await hide(mod.token, "segments", hiddenSegment)).status).toBe(200);
    await searchable();
    // A sync message still queued (a story handed over twice) would copy its story again after the shards are emptied.
    await new Promise((r) => setTimeout(r, 300));

    // As migration 0023 finds a deployment: every story indexed in D1 (migration 0018's statements, run again),
    // none in a shard, none synced; the move at its start.
    const { results } = await env.DB.prepare(`SELECT rowid, id, language FROM stories ORDER BY rowid`).all<{ rowid: number; id: string; language: string }>();
    for (const r of results) {
      const mine = made.find((m) => m.id === r.id);
      if (mine) stories.push({ id: r.id, rowid: r.rowid, language: r.language, main_branch_id: mine.main_branch_id });
    }
    expect(stories.map((s) => s.id)).toEqual(made.map((m) => m.id));
    const legacyMax = results.at(-1)!.rowid;
    await env.DB.batch([
      env.DB.prepare("UPDATE search_move SET legacy_max = ?, watermark = 1 WHERE id = 1").bind(legacyMax),
      env.DB.prepare("UPDATE stories SET search_synced = 0, search_upto = 0, search_dirty_at = NULL WHERE rowid <= ?").bind(legacyMax),
    ]);
    for (const shard of new Set(results.map((r) => shards.shardOf(r.rowid)))) {
      await runInDurableObject(env.SEARCH_SHARD.get(env.SEARCH_SHARD.idFromName(`search-${shard}`)), (_: unknown, state: DurableObjectState) => {
        for (const table of ["stories", "story_tags", "branches", "segments", "search_stories", "search_segments"])
          state.storage.sql.exec(`DELETE FROM ${table}`);
      });
    }
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.endsWith("_search.sql"))!;
    const backfill = migration.queries.filter((q) => !/CREATE VIRTUAL TABLE/i.test(q) && /search_/.test(q));
    expect(backfill.length).toBe(5);
    expect((await one<{ n: number }>("SELECT count(*) AS n FROM search_stories")).n).toBe(0);
    for (const q of backfill) await env.DB.prepare(q).run();

    expect(await moveState()).toEqual({ watermark: 1, legacy_max: legacyMax });
    for (const s of stories) expect(await inShard(s)).toMatchObject({ story: 0, indexed: 0, segments: 0 });
    await expectD1Index();
  });

  it("takes the reference answers, every one served by D1's own index", async () => {
    for (const q of QUERIES) reference.set(q, await ask(q));
    const all = reference.get(QUERIES[0])!;
    // What the seed makes findable: 3 stories and 4 segments by the English word (the hidden one is not).
    expect(all.counts).toEqual({ stories: 3, segments: 4 });
    expect(all.results.map(idOf)).not.toContain(hiddenSegment);
    expect(reference.get(QUERIES[3])!.counts).toEqual({ stories: 2, segments: 5 });
    expect(reference.get(QUERIES[6])!.count).toBe(1);
    expect(reference.get(QUERIES[7])!.results).toHaveLength(3);
    // The shards hold nothing yet: these came from D1.
    for (const s of stories) expect(await inShard(s)).toMatchObject({ story: 0, indexed: 0, segments: 0 });
    await expectReferenceAnswers("before the move", true);
  });

  it("moves one story at a time; between steps, writes on a moved and a waiting story; no hit lost or doubled", async () => {
    for (const step of ["1", "2", "3"]) await stepAndWrite(step, () => moveSteps(db, shards, 1));
  });

  it("a crash between a story's copy into its shard and its D1 batch: the story is searched once, and the move resumes", async () => {
    const [next] = await nextToMoveQuery(db);
    const story = stories.find((s) => s.id === next.id)!;
    const before = await moveState();
    await syncStory(db, shards, story.id);
    // Copied, not moved: in both places, searched in D1 only.
    expect(await inShard(story)).toMatchObject({ story: 1, indexed: 1 });
    expect(await moveState()).toEqual(before);
    await expectReferenceAnswers("crashed after the copy");
    await expectD1Index();
    // And the crash came earlier still, between the shard's taking the copy and D1's record of it: the resumed move
    // copies every segment again, which the shard takes as the same.
    await env.DB.prepare("UPDATE stories SET search_synced = 0, search_upto = 0 WHERE id = ?").bind(story.id).run();
    await stepAndWrite("4", () => moveSteps(db, shards, 1));
  });

  it("the sweeper queues the move's next step while legacy stories remain", async () => {
    const { sent, queue } = capturedQueue<SearchMessage>();
    await sweep({ ...env, SEARCH_SYNC: queue } as Env);
    expect(sent.filter((m) => "move" in m)).toEqual([{ move: true }]);
  });

  it("two movers at once move as one", async () => {
    await stepAndWrite(
      "5",
      async () => {
        const answers = await Promise.all([moveSteps(db, shards, 1), moveSteps(db, shards, 1)]);
        expect(answers).toEqual([true, true]);
      },
      2,
    );
  });

  it("a mover overtaken by another: its late copy and batch for a story already moved move nothing back", async () => {
    const before = await moveState();
    const first = stories[0];
    await syncStory(db, shards, first.id);
    await db.batch(movedStatements(db, { id: first.id, rowid: first.rowid }) as [ReturnType<typeof movedStatements>[0]]);
    expect(await moveState()).toEqual(before);
    await expectReferenceAnswers("a late batch");
    await expectMovedInShard(first);
    await expectD1Index();
  });

  it("a segment written between its story's copy and D1's batch is out of D1 with the batch, and found once its own sync runs", async () => {
    const [next] = await nextToMoveQuery(db);
    const story = stories.find((s) => s.id === next.id)!;
    await syncStory(db, shards, story.id);
    // The write's hand-over to the search queue is held back (as if lost), so the batch surely comes before its sync.
    const held = capturedQueue<SearchMessage>();
    const { id, own } = await writeOn(story, "race", { SEARCH_SYNC: held.queue });
    expect(held.sent).toEqual([{ storyId: story.id }]);
    expect((await ask({ q: own })).results.map(idOf), "in D1's index with its write").toEqual([id]);
    await db.batch(movedStatements(db, story) as [ReturnType<typeof movedStatements>[0]]);
    // The step stops after its batch (a crash before its chunked deletes): D1 keeps the story's rows, which search
    // skips (the watermark passed it), until the move's end deletes what is left.
    expect((await inD1(story)).indexedSegments).toBeGreaterThan(0);
    leftover.add(story.id);
    // Not found until its sync, as any segment written to a moved story; the sweeper hands a lost one over again.
    expect((await ask({ q: own })).results).toEqual([]);
    const swept = capturedQueue<SearchMessage>();
    await sweep({ ...env, SEARCH_SYNC: swept.queue } as Env, Date.now() + 120_000);
    expect(swept.sent).toContainEqual({ storyId: story.id });
    const messages = swept.sent.filter((m) => "storyId" in m).map((body, i) => ({ id: `m${i}`, body, attempts: 1, ack: vi.fn(), retry: vi.fn() }));
    await handleSearch({ queue: "search-sync", messages } as never, env);
    for (const m of messages) expect(m.ack).toHaveBeenCalledOnce();
    expect((await ask({ q: own })).results.map(idOf), "found once synced").toEqual([id]);
    await expectMovedInShard(story);
    await expectReferenceAnswers("a segment written between copy and batch");
    await expectD1Index();
  });

  it("moves the rest; at the end D1's index is empty, the watermark past legacy_max, and every answer its reference", async () => {
    for (let step = 6; ; step++) {
      const { watermark, legacy_max } = await moveState();
      if (watermark > legacy_max) break;
      await stepAndWrite(String(step), () => moveSteps(db, shards, 1));
    }
    const end = await moveState();
    expect(end.watermark).toBeGreaterThan(end.legacy_max);
    // Every story moved; what the step cut short after its batch left in D1's index is searched by nobody, and the
    // sweeper queues the step that deletes it and marks the move clean (no story legacy: legacy_max 0).
    expect((await one<{ n: number }>("SELECT count(*) AS n FROM search_segments")).n).toBeGreaterThan(0);
    await expectReferenceAnswers("moved, D1's leftovers not yet deleted", true);
    // A story the old code wrote between the migration and the deploy: after legacy_max, never handed over (behind,
    // with no time to be resent by), in no shard. The move's end copies it.
    const straggler = unique("straggler");
    const late = await createStory(owner.token, { title: `The ${straggler} story` });
    await searchable();
    await env.DB.prepare("UPDATE stories SET search_synced = 0, search_upto = 0, search_dirty_at = NULL WHERE id = ?").bind(late.id).run();
    await runInDurableObject(env.SEARCH_SHARD.get(env.SEARCH_SHARD.idFromName("search-0")), (_: unknown, state: DurableObjectState) => {
      const sql = state.storage.sql;
      sql.exec("DELETE FROM search_segments WHERE rowid IN (SELECT rowid FROM segments WHERE story_id = ?)", late.id);
      sql.exec("DELETE FROM search_stories WHERE rowid IN (SELECT rowid FROM stories WHERE id = ?)", late.id);
      for (const table of ["segments", "branches", "story_tags"]) sql.exec(`DELETE FROM ${table} WHERE story_id = ?`, late.id);
      sql.exec("DELETE FROM stories WHERE id = ?", late.id);
    });
    expect((await ask({ q: straggler })).results).toEqual([]);
    const { sent, queue } = capturedQueue<SearchMessage>();
    await sweep({ ...env, SEARCH_SYNC: queue } as Env);
    expect(sent.filter((m) => "move" in m)).toEqual([{ move: true }]);
    expect(await moveSteps(db, shards, 1)).toBe(false);
    expect(await moveState()).toEqual({ watermark: end.watermark, legacy_max: 0 });
    expect((await ask({ q: straggler })).results.map(idOf)).toEqual([late.id]);
    expect((await one<{ n: number }>("SELECT count(*) AS n FROM search_stories")).n).toBe(0);
    expect((await one<{ n: number }>("SELECT count(*) AS n FROM search_segments")).n).toBe(0);
    for (const s of stories) await expectMovedInShard(s);
    await expectReferenceAnswers("after the move", true);
  });

  it("after the end: a move step finds nothing to do and changes nothing, and the sweeper queues none", async () => {
    const before = await moveState();
    const shardsBefore = await Promise.all(stories.map(inShard));
    expect(await moveSteps(db, shards, 5)).toBe(false);
    expect(await moveState()).toEqual(before);
    expect(await Promise.all(stories.map(inShard))).toEqual(shardsBefore);
    expect((await one<{ n: number }>("SELECT count(*) AS n FROM search_stories")).n).toBe(0);
    await expectReferenceAnswers("a step after the end", true);

    const { sent, queue } = capturedQueue<SearchMessage>();
    await sweep({ ...env, SEARCH_SYNC: queue } as Env);
    expect(sent).toEqual([]);
  });
});
