import { describe, expect, it } from "vitest";
import { contentTag } from "../../src/lib/content-tag";

// The ETag is the SHA-1 of the body's UTF-8 bytes, quoted: the same tag for the same text whichever way it is hashed.
describe("contentTag", () => {
  it.each([
    ["the empty text", "", "da39a3ee5e6b4b0d3255bfef95601890afd80709"],
    ["ASCII", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"],
    ["non-ASCII and an emoji (UTF-8, not UTF-16)", "é故事😀", "022e81aabfcf6f26658253131e82589d8a72de42"],
  ])("%s", async (_, text, sha1) => {
    expect(await contentTag(text)).toBe(`"${sha1}"`);
  });

  it("a text built by concatenation tags as its flat copy does", async () => {
    let rope = "";
    for (let i = 0; i < 500; i++) rope += `{"n":${i},"t":"故事"},`;
    expect(await contentTag(rope)).toBe(await contentTag(rope.split("").join("")));
  });
});
