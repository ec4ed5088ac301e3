import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb, rawAll } from "../../src/db/client";
import { jsonRows } from "../../src/db/json-rows";
import { JsonText } from "../../src/lib/json-text";
import { asSegments, listSegments, segmentRecords } from "../../src/domain/stories/segments";
import { listStories } from "../../src/domain/stories/stories";
import { call, createStory, registerAdmin, registerHuman, submit, unique } from "../helpers";

// Lists whose rows SQLite writes as JSON must answer byte for byte what JSON.stringify wrote for the same rows:
// the ETag, the micro-cache and every client see that text.
const db = getDb(env.DB);
const pairJson = jsonRows({ v: "value", b: "boolean" });
const asJson = async (rows: ReturnType<typeof sql>) => (await rawAll<{ j: string }>(db, sql`SELECT ${pairJson(rows, "r.n")} AS j`))[0].j;

const ASCII = Array.from({ length: 128 }, (_, i) => String.fromCharCode(i)).join("");

describe("jsonRows: SQLite's JSON is JSON.stringify's", () => {
  it.each([
    ["every ASCII character, controls included", ASCII],
    ["quotes and backslashes", `"\\"\\\\ \\u0041 '`],
    ["non-ASCII, emoji, line and paragraph separators, BOM", "é 故事 😀 \u2028 \u2029 \ufeff"],
    ["the empty string", ""],
  ])("%s", async (_, text) => {
    const rows = sql`SELECT 1 AS n, ${text} AS v, 1 AS b UNION ALL SELECT 2, NULL, 0 UNION ALL SELECT 3, 42, 0`;
    expect(await asJson(rows)).toBe(
      JSON.stringify([
        { v: text, b: true },
        { v: null, b: false },
        { v: 42, b: false },
      ]),
    );
  });

  it("keeps the order it is given, and an empty list is []", async () => {
    expect(await asJson(sql`SELECT 2 AS n, 'b' AS v, 0 AS b UNION ALL SELECT 1, 'a', 1`)).toBe('[{"v":"a","b":true},{"v":"b","b":false}]');
    expect(await asJson(sql`SELECT 1 AS n, 'a' AS v, 0 AS b WHERE 0`)).toBe("[]");
  });
});

describe("lists SQLite writes as JSON", () => {
  it("a page of segments is JSON.stringify of its rows, for every viewer of a hidden segment", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token);
    const writer = await registerHuman();
    const res = await submit(writer.token, story.main_branch_id, 'She said "no" \\ twice,\n\tthen left: 故事 😀.');
    expect(res.status, res.text).toBe(201);
    await env.DB.prepare("UPDATE segments SET hidden_at = ? WHERE id = ?").bind(new Date().toISOString(), res.body.data.id).run();
    const admin = await registerAdmin();
    for (const viewer of [null, { id: writer.id, type: "human" as const }, { id: admin.id, type: "admin" as const }]) {
      const { segments } = await listSegments(db, story.main_branch_id, 50, 0, viewer);
      const rows = await segmentRecords(db, viewer, sql`WHERE s.branch_id = ${story.main_branch_id} ORDER BY s.sequence_order LIMIT 50 OFFSET 0`);
      expect(rows.length).toBeGreaterThan(4);
      expect(rows[0].is_starter).toBe(1);
      expect(segments.text).toBe(JSON.stringify(asSegments(rows)));
    }
    // The answer over HTTP is the text `ok()` writes for the same values (the envelope spliced, not re-serialized).
    const page = await call(`/branches/${story.main_branch_id}/segments`);
    expect(page.text).toBe(JSON.stringify({ status: "success", data: page.body.data }));
    expect(page.headers.get("server-timing")).toContain('"1 round trip"');
  });

  it("a page too big for one D1 value is read as rows, the same text in a second round trip", async () => {
    const owner = await registerHuman();
    const story = await createStory(owner.token, { max_length: 100_000 });
    const long = "ééééé ".repeat(16_000).slice(0, 95_000); // ~174 KB of UTF-8: two of them pass the page's budget
    for (let i = 0; i < 2; i++) expect((await submit(owner.token, story.main_branch_id, long)).status).toBe(201);
    const { segments } = await listSegments(db, story.main_branch_id, 50, 0);
    const rows = await segmentRecords(db, null, sql`WHERE s.branch_id = ${story.main_branch_id} ORDER BY s.sequence_order LIMIT 50 OFFSET 0`);
    expect(segments.text).toBe(JSON.stringify(asSegments(rows)));
    const page = await call(`/branches/${story.main_branch_id}/segments`);
    expect(page.status).toBe(200);
    expect(page.body.data.segments.at(-1).content).toBe(long);
    expect(page.headers.get("server-timing")).toContain('"2 round trips"');
    // The page that fits is one value again.
    expect((await call(`/branches/${story.main_branch_id}/segments?limit=3`)).headers.get("server-timing")).toContain('"1 round trip"');
  });

  it("a page of stories has the answer's keys, in order, and is the text JSON.stringify writes for its values", async () => {
    const owner = await registerHuman();
    const title = `"Quoted" \\ ${unique("t")} 故事 😀`;
    const story = await createStory(owner.token, { title, background: "b".repeat(300), tags: ['"Noir" \\', "故事 😀"], warnings: ["death"] });
    const { stories, count } = await listStories(db, {
      status: "active",
      sort: "new",
      tags: [],
      excludeTags: [],
      ratings: [],
      authorships: [],
      limit: 100,
      offset: 0,
    });
    const values = stories.value();
    expect(stories.text).toBe(JSON.stringify(values));
    expect(values.length).toBe(Math.min(count, 100));
    const expected = {
      id: story.id,
      title,
      background: "b".repeat(200),
      language: "en",
      owner_type: "human",
      status: "active",
      branches_count: 1,
      bots_count: 0,
      created_at: story.created_at,
      tags: ['"Noir" \\', "故事 😀"],
      rating: "general",
      warnings: ["death"],
      authorship: "human",
      bot_share: 0,
    };
    expect(JSON.stringify(values[0])).toBe(JSON.stringify(expected));
  });

  it("JSON text serialized as a value is its value, not a wrapper", () => {
    expect(JSON.stringify({ list: new JsonText<number[]>("[1,2]") })).toBe('{"list":[1,2]}');
  });
});
