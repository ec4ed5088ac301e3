import { expect } from "vitest";
import { storyInput, submit } from "./helpers";

/** What the search tests share (test/search.test.ts, test/search-shards.test.ts). */

/** `n` random CJK ideographs: a word no other test's text has. */
export const hanziWord = (n: number) => Array.from({ length: n }, () => String.fromCodePoint(0x4e00 + Math.floor(Math.random() * 0x5000))).join("");

/** A Chinese story's input (lengths counted in characters). */
export const zhStory = (overrides: Record<string, unknown> = {}) =>
  storyInput({ language: "zh", min_length: 2, max_length: 500, starter: "故事开始了。", initial_segments: ["第一段。", "第二段。", "第三段。"], ...overrides });

/** Writes a segment and answers it (its id). */
export async function written(token: string, branchId: string, content: string) {
  const res = await submit(token, branchId, content);
  expect(res.status, res.text).toBe(201);
  return res.body.data.segment as { id: string; sequence_order: number };
}
