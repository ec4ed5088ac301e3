import { env } from "cloudflare:workers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb, rawAll } from "../../src/db/client";
import { jsonRows } from "../../src/db/json-rows";
import { authorshipOf, authorshipSql, botShareSql } from "../../src/domain/shared/authorship";

const db = getDb(env.DB);

describe("authorshipOf", () => {
  it.each([
    // segments by bots, segments, authorship, bot_share
    [0, 0, "human", 0],
    [0, 4, "human", 0],
    [4, 4, "bot", 1],
    [1, 4, "mixed", 0.25],
    [3, 4, "mixed", 0.75],
    [1, 3, "mixed", 0.333],
    [2, 3, "mixed", 0.667],
    [1, 2001, "mixed", 0.001], // a mix never reads as none…
    [2000, 2001, "mixed", 0.999], // …or all
  ] as const)("%i of %i by bots: %s, %d", (bots, all, authorship, share) => {
    expect(authorshipOf(bots, all)).toEqual({ authorship, bot_share: share });
  });
});

// Lists compute authorship in SQL (the JSON SQLite writes is spliced into answers); records in JavaScript. The two
// must agree, and SQLite's JSON of the share must be JSON.stringify's (1, never 1.0).
describe("authorshipSql and botShareSql are authorshipOf", () => {
  it("for every count of bots among up to 60 segments, and a few large ones", async () => {
    const pairs: [number, number][] = [];
    for (let all = 0; all <= 60; all++) for (let bots = 0; bots <= all; bots++) pairs.push([bots, all]);
    pairs.push([1, 2000], [1, 2001], [1999, 2000], [2000, 2001], [1, 16], [333, 1000], [1, 8], [999, 1000], [1, 1000]);
    const json = jsonRows<{ authorship: string; bot_share: number }>({ authorship: "value", bot_share: "value" });
    // The pairs as one JSON parameter (D1 binds at most 100).
    const rows = sql`SELECT key AS n, json_extract(value, '$[0]') AS bot_segments_count, json_extract(value, '$[1]') AS segments_count
      FROM json_each(${JSON.stringify(pairs)})`;
    const page = sql`SELECT n, ${authorshipSql("c")} AS authorship, ${botShareSql("c")} AS bot_share FROM (${rows}) c`;
    const [{ j }] = await rawAll<{ j: string }>(db, sql`SELECT ${json(page, "r.n")} AS j`);
    expect(j).toBe(JSON.stringify(pairs.map(([bots, all]) => authorshipOf(bots, all))));
    expect(pairs.length).toBeGreaterThan(1800);
  });
});
