import { describe, expect, it } from "vitest";
import { type ShardStats, factorsOf, idf } from "../../src/domain/discovery/search";

/** Scoring across shards (src/domain/discovery/search.ts): FTS5's idf, and each shard's factors over all shards' statistics. */

describe("idf: FTS5's (fts5_aux.c), never below 1e-6", () => {
  it.each([
    [10, 1, Math.log(9.5 / 1.5)],
    [1000, 10, Math.log(990.5 / 10.5)],
    [10, 5, 1e-6], // log(1) = 0: FTS5 takes 1e-6
    [10, 9, 1e-6], // a word most rows carry: negative, 1e-6
    [1, 1, 1e-6],
  ])("%i rows, %i hits: %f", (rows, hits, expected) => {
    expect(idf(rows, hits)).toBeCloseTo(expected, 12);
  });
});

const stats = (stories: number, segments: number, storyHits: number[], segmentHits: number[]): ShardStats => ({ stories, segments, storyHits, segmentHits });

describe("factorsOf: a phrase's idf over all shards, over its idf in the shard", () => {
  it("one shard: every factor 1 (its own bm25 is one index's)", () => {
    expect(factorsOf([stats(10, 100, [2, 3], [10, 40])])).toEqual([{ stories: [1, 1], segments: [1, 1] }]);
  });

  it("two shards of the same make: factors 1 where idf agrees", () => {
    const [a, b] = factorsOf([stats(10, 100, [1], [10]), stats(10, 100, [1], [10])]);
    expect(a.segments[0]).toBeCloseTo(idf(200, 20) / idf(100, 10), 12);
    expect(b).toEqual(a);
  });

  it("a young shard where most rows carry the word: its terms are raised to what all shards' rows say", () => {
    const [old, young] = factorsOf([stats(1000, 50_000, [5], [100]), stats(4, 20, [3], [15])]);
    expect(young.segments[0]).toBeCloseTo(idf(50_020, 115) / 1e-6, 6); // its own idf was clamped to 1e-6
    expect(young.stories[0]).toBeCloseTo(idf(1004, 8) / 1e-6, 6);
    expect(old.segments[0]).toBeCloseTo(idf(50_020, 115) / idf(50_000, 100), 12);
  });

  it("a phrase a shard does not match: 0 there (none of its rows match the query)", () => {
    const [a, b] = factorsOf([stats(10, 100, [0, 2], [0, 5]), stats(10, 100, [1, 2], [3, 5])]);
    expect(a).toEqual({ stories: [0, idf(20, 4) / idf(10, 2)], segments: [0, idf(200, 10) / idf(100, 5)] });
    expect(b.stories[0]).toBeCloseTo(idf(20, 1) / idf(10, 1), 12);
  });
});
