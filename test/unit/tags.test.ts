import { describe, expect, it } from "vitest";
import { tagField, tagKey, tagPrefix, tagSpelling, tagsField, uniqueTags } from "../../src/lib/tag-rule";

// A tag is the same tag in any case, width, normalization form or spacing: its key (NFKC, full case folding as names
// have it, trimmed, white space collapsed); what is shown is the spelling as written, trimmed and collapsed (NFC).
describe("tagKey and tagSpelling", () => {
  it.each([
    // as written, spelling shown, key
    ["fantasy", "fantasy", "fantasy"],
    ["Fantasy", "Fantasy", "fantasy"],
    ["  Slow   Burn  ", "Slow Burn", "slow burn"],
    ["slow\tburn\n", "slow burn", "slow burn"],
    ["Ｓｃｉ－Ｆｉ", "Ｓｃｉ－Ｆｉ", "sci-fi"], // full-width forms fold to ASCII
    ["ﬁre", "ﬁre", "fire"], // a ligature
    ["Straße", "Straße", "strasse"], // ß folds as full case folding does
    ["ΣΊΣΥΦΟΣ", "ΣΊΣΥΦΟΣ", "σίσυφος"], // sigma and final sigma: one key
    ["σίσυφοσ", "σίσυφοσ", "σίσυφος"],
    ["e\u0301tude", "\u00e9tude", "\u00e9tude"], // NFD shown as NFC
    ["科幻", "科幻", "科幻"],
    ["武侠\u3000小说", "武侠 小说", "武侠 小说"], // an ideographic space is white space
    ["Ｔａｇ\u3000Ｏｎｅ", "Ｔａｇ Ｏｎｅ", "tag one"],
  ])("%j is shown %j, keyed %j", (raw, shown, key) => {
    expect(tagSpelling(raw)).toBe(shown);
    expect(tagKey(raw)).toBe(key);
    expect(tagKey(shown)).toBe(key); // the spelling shown has the key of what was written
    expect(tagKey(key)).toBe(key); // a key is its own key
  });

  it("a prefix keeps a space at its end (the next word is coming)", () => {
    expect(tagPrefix("Slow ")).toBe("slow ");
    expect(tagPrefix("  SLOW")).toBe("slow");
    expect(tagPrefix("   ")).toBe("");
  });
});

describe("uniqueTags", () => {
  it("keeps one tag per key, the first spelling, in the order given", () => {
    expect(uniqueTags(["Sci-Fi", "mystery", "sci-fi", " SCI-FI ", "Mystery", "noir"])).toEqual([
      { key: "sci-fi", name: "Sci-Fi" },
      { key: "mystery", name: "mystery" },
      { key: "noir", name: "noir" },
    ]);
    expect(uniqueTags([])).toEqual([]);
  });
});

describe("tagField and tagsField", () => {
  it.each([
    ["", "too_small"],
    ["   ", "too_small"],
    ["x".repeat(51), "too_big"],
    ["zero\u200bwidth", "custom"], // a format character makes a look-alike tag
    ["bidi\u202eoverride", "custom"],
    ["nul\u0000byte", "custom"],
    ["bell\u0007", "custom"],
  ])("refuses %j (%s)", (raw, code) => {
    const result = tagField.safeParse(raw);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0].code).toBe(code);
  });

  it.each([["x".repeat(50)], [`  ${"x".repeat(50)}  `], ["a"], ["🦊"]])("takes %j", (raw) => {
    expect(tagField.safeParse(raw).success).toBe(true);
  });

  it("counts a list before deduplication against its bound, and deduplicates it", () => {
    expect(tagsField(3).parse(["A", "a", "b"])).toEqual([
      { key: "a", name: "A" },
      { key: "b", name: "b" },
    ]);
    expect(tagsField(3).safeParse(["a", "b", "c", "d"]).success).toBe(false);
  });
});
