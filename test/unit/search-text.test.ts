import { describe, expect, it } from "vitest";
import {
  ELLIPSIS,
  MARK_CLOSE,
  MARK_OPEN,
  SEPARATOR,
  SNIPPET_MAX_CHARS,
  indexText,
  isCjk,
  matchQuery,
  snippetOf,
  snippetParts,
} from "../../src/lib/search-text";

// Full-text search's text: CJK runs fed to FTS5's unicode61 as bigram tokens between separators, a
// query's words as quoted phrases (never FTS5 syntax), and a snippet cut from the index read back as the text it was.
const S = SEPARATOR;
const [open, close, cut] = [MARK_OPEN, MARK_CLOSE, ELLIPSIS];

describe("indexText", () => {
  it.each([
    ["English, unchanged", "The bell rang.", "The bell rang."],
    ["a CJK run: each character with the next, between separators", "魔法师", `${S}魔法${S}${S}法师${S}${S}师${S}`],
    ["one CJK character", "魔", `${S}魔${S}`],
    ["Latin then CJK (the separator splits them)", "AI魔法", `AI${S}魔法${S}${S}法${S}`],
    ["CJK then Latin", "魔a", `${S}魔${S}a`],
    ["punctuation ends a run", "魔法，师", `${S}魔法${S}${S}法${S}，${S}师${S}`],
    ["kana", "カナ", `${S}カナ${S}${S}ナ${S}`],
    ["Hangul syllables", "학교", `${S}학교${S}${S}교${S}`],
    ["ideographs outside the BMP (extension B)", "𠀀𠀁", `${S}𠀀𠀁${S}${S}𠀁${S}`],
    ["the sentinels become spaces", `a${open}b${close}c${cut}d${S}e`, "a b c d e"],
  ])("%s", (_, text, indexed) => {
    expect(indexText(text)).toBe(indexed);
  });

  it.each([
    // code point, CJK?
    [0x3004, false],
    [0x3005, true], // 々
    [0x3007, true], // 〇
    [0x3008, false], // 〈
    [0x303f, false],
    [0x3040, true],
    [0x30ff, true],
    [0x3100, false], // bopomofo
    [0x31f0, true],
    [0x3200, false],
    [0x33ff, false],
    [0x3400, true],
    [0x4dbf, true],
    [0x4dc0, false], // Yijing hexagrams
    [0x4e00, true],
    [0x9fff, true],
    [0xa000, false], // Yi
    [0xabff, false],
    [0xac00, true],
    [0xd7a3, true],
    [0xd7a4, false],
    [0xf8ff, false], // private use
    [0xf900, true],
    [0xfaff, true],
    [0xfb00, false], // ﬀ
    [0xff21, false], // full-width A: a letter to unicode61
    [0x1ffff, false],
    [0x20000, true],
    [0x3ffff, true],
    [0x40000, false],
  ])("U+%s is CJK: %s", (cp, cjk) => {
    expect(isCjk(String.fromCodePoint(cp))).toBe(cjk);
  });
});

describe("matchQuery: every word a quoted phrase, nothing the reader types is FTS5 syntax", () => {
  it.each([
    ["bell", '"bell"', []],
    ["  the   bell ", '"the" "bell"', []],
    ["bell*", '"bell"*', []],
    ["bell**", '"bell"*', []],
    ["Bell\u3000Tower", '"Bell" "Tower"', []], // an ideographic space separates words
    // CJK: the phrase of its bigrams (the run may go on in the text), a single character as a prefix.
    ["魔法", '"魔法"', ["魔法"]],
    ["魔法师", '"魔法 法师"', ["魔法", "法师"]],
    ["魔", '"魔"*', []],
    ["魔法*", '"魔法"*', ["魔法"]],
    ["AI魔法", '"AI 魔法"', ["魔法"]],
    ["魔法AI", '"魔法 法 AI"', ["魔法"]],
    ["魔a", '"魔 a"', []],
    ["灯塔 bell", '"灯塔" "bell"', ["灯塔"]],
    // FTS5 syntax as text: quotes doubled inside the phrase, operators and columns are words.
    ['bell" OR "x', '"bell""" "OR" """x"', []],
    ["NEAR(a b)", '"NEAR(a" "b)"', []],
    ["title:bell", '"title:bell"', []],
    ["-bell ^ring", '"-bell" "^ring"', []],
    ["a AND b NOT c", '"a" "AND" "b" "NOT" "c"', []],
    ["{title background}: x", '"{title" "background}:" "x"', []],
    ["bell*ring", '"bell*ring"', []],
    // a word of punctuation only asks for nothing, and is left out
    ["bell !!! ()", '"bell"', []],
    [`${open}bell${close}`, '"bell"', []],
  ])("%j → %s", (q, match, bigrams) => {
    expect(matchQuery(q)).toEqual({ match, bigrams, phrases: expect.any(Array) });
    // Its phrases, each a MATCH expression of its own (scoring across shards asks each apart), are the expression's.
    expect(matchQuery(q)!.phrases.join(" ")).toBe(match);
  });

  it.each([[""], ["   "], ["*"], ["!!! ..."], ['"'], ['""'], ["( ) :"], ["—"]])("%j has no word to search for", (q) => {
    expect(matchQuery(q)).toBeNull();
  });
});

describe("snippetOf: the indexed text's snippet as the original text, with its matched spans", () => {
  it.each([
    ["an English match", `the ${open}bell${close} rang`, [], "the bell rang", [[4, 8]]],
    [
      "two matches",
      `${open}bell${close} and ${open}bell${close}`,
      [],
      "bell and bell",
      [
        [0, 4],
        [9, 13],
      ],
    ],
    // A phrase of bigrams: the match spans each bigram's second character, the word's last one included.
    ["a three-character word", `AI${S}${open}魔法${S}${S}法师${close}${S}${S}师${S}`, ["魔法", "法师"], "AI魔法师", [[2, 5]]],
    ["a two-character word", `${S}大魔${S}${S}${open}魔法${close}${S}${S}法${S}`, ["魔法"], "大魔法", [[1, 3]]],
    // One character is the prefix of a token: that character alone.
    ["one character", `${S}${open}魔法${close}${S}${S}法师${S}`, [], "魔法师", [[0, 1]]],
    // Cut inside a run: the last token's second character is still the text's.
    ["cut after a matched bigram", `${cut}${S}天${S}${S}${open}魔法${close}${S}${cut}`, ["魔法"], "…天魔法…", [[2, 4]]],
    ["cut after an unmatched bigram", `${S}魔法${S}${cut}`, [], "魔法…", []],
    ["white space collapsed and trimmed", `  a \n\n\t b ${open}c${close}\n`, [], "a b c", [[4, 5]]],
    [
      "mixed",
      `He said ${open}你好${close}${S}${S}好${S} to the ${open}bellman${close}.`,
      ["你好"],
      "He said 你好 to the bellman.",
      [
        [8, 10],
        [18, 25],
      ],
    ],
  ])("%s", (_, raw, bigrams, snippet, highlights) => {
    expect(snippetOf(raw, bigrams)).toEqual({ snippet, highlights });
  });

  it("reads back any indexed text as it was", () => {
    for (const text of ["The bell rang.", "魔法师的学徒", "AI魔法 and 学徒s", "カタカナ、ひらがな。", "학교에서 공부", "𠀀𠀁 x"]) {
      expect(snippetOf(indexText(text), []).snippet).toBe(text);
    }
  });

  it(`cuts a snippet at ${SNIPPET_MAX_CHARS} characters`, () => {
    const { snippet, highlights } = snippetOf(`${open}${"a".repeat(1000)}${close}`, []);
    expect([...snippet]).toHaveLength(SNIPPET_MAX_CHARS);
    expect(snippet.endsWith("…")).toBe(true);
    expect(highlights).toEqual([[0, SNIPPET_MAX_CHARS - 1]]);
  });
});

describe("snippetParts", () => {
  it.each([
    [
      { snippet: "the bell rang", highlights: [[4, 8]] },
      [
        { text: "the ", hit: false },
        { text: "bell", hit: true },
        { text: " rang", hit: false },
      ],
    ],
    [{ snippet: "魔法师", highlights: [[0, 3]] }, [{ text: "魔法师", hit: true }]],
    [
      { snippet: "𠀀魔x", highlights: [[1, 2]] },
      [
        { text: "𠀀", hit: false },
        { text: "魔", hit: true },
        { text: "x", hit: false },
      ],
    ],
    [{ snippet: "plain", highlights: [] }, [{ text: "plain", hit: false }]],
  ] as const)("%j", (snippet, parts) => {
    expect(snippetParts({ snippet: snippet.snippet, highlights: snippet.highlights.map(([a, b]) => [a, b]) })).toEqual(parts);
  });
});
