import { strFromU8, unzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { type Book, type PathVersion, type StoryLabels, storyLabels } from "../../src/domain/export/export";
import { epubOf } from "../../src/domain/export/epub";
import { markdownOf, markdownText } from "../../src/domain/export/markdown";
import { authorshipLine, labelsLine } from "../../src/domain/export/book-words";
import { storyView } from "../../src/domain/stories/stories";
import type { StoryRow } from "../../src/db/schema";
import { attachment } from "../../src/lib/disposition";
import { xmlText } from "../../src/lib/xml";

/** Pure rules of the exports: escaping, file names, and the labels a story carries. */

describe("markdownText: people's text reads as typed", () => {
  it.each([
    ["plain words", "plain words"],
    ["*bold* _it_ `code`", "\\*bold\\* \\_it\\_ \\`code\\`"],
    ["<script>alert(1)</script>", "\\<script\\>alert(1)\\</script\\>"],
    ["[a link](http://x)", "\\[a link\\](http://x)"],
    ["a|b ~x~ &amp; back\\slash", "a\\|b \\~x\\~ \\&amp; back\\\\slash"],
    ["# a heading", "\\# a heading"],
    ["## two", "\\## two"],
    ["- an item", "\\- an item"],
    ["+ an item", "\\+ an item"],
    ["===", "\\==="],
    ["12. a list", "12\\. a list"],
    ["3) a list", "3\\) a list"],
    ["> a quote", "\\> a quote"],
    ["    code, by indent", "code, by indent"],
    ["a # in the middle, 1. too", "a # in the middle, 1. too"],
    ["潮水 # 不是标题", "潮水 # 不是标题"],
  ])("%j → %j", (line, shown) => {
    expect(markdownText(line)).toBe(shown);
  });
});

describe("xmlText", () => {
  it("escapes the five, drops what XML 1.0 cannot hold, keeps tab, line breaks, emoji and other scripts", () => {
    expect(xmlText(`a & b < c > d "e" 'f'`)).toBe("a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;");
    expect(xmlText("x\u0000y\u0001z\u001f\u007f")).toBe("xyz\u007f");
    expect(xmlText("tab\there\nline\r\n")).toBe("tab\there\nline\r\n");
    expect(xmlText("lone \ud800 surrogate, \ufffe and \uffff")).toBe("lone  surrogate,  and ");
    expect(xmlText("🌊 潮水 עברית")).toBe("🌊 潮水 עברית");
  });
});

describe("attachment: a download's Content-Disposition", () => {
  it.each([
    ["The Tide", "epub", `attachment; filename="The Tide.epub"; filename*=UTF-8''The%20Tide.epub`],
    ["潮汐之城", "epub", `attachment; filename="story.epub"; filename*=UTF-8''%E6%BD%AE%E6%B1%90%E4%B9%8B%E5%9F%8E.epub`],
    ["潮汐 The Tide", "md", `attachment; filename="The Tide.md"; filename*=UTF-8''%E6%BD%AE%E6%B1%90%20The%20Tide.md`],
    ["Café Noël", "md", `attachment; filename="Cafe Noel.md"; filename*=UTF-8''Caf%C3%A9%20No%C3%ABl.md`],
    ['a/b\\c:d*e?"f"<g>|h', "epub", `attachment; filename="a-b-c-d-e-f-g-h.epub"; filename*=UTF-8''a-b-c-d-e-f-g-h.epub`],
    ["it's (mine)*", "epub", `attachment; filename="it's (mine).epub"; filename*=UTF-8''it%27s%20%28mine%29.epub`],
    ["...", "epub", `attachment; filename="story.epub"; filename*=UTF-8''story.epub`],
    ["zero\u200bwidth\u0007", "md", `attachment; filename="zero-width.md"; filename*=UTF-8''zero-width.md`],
  ])("%j (%s)", (title, ext, header) => {
    expect(attachment(title, ext)).toBe(header);
  });
});

const row = (fields: Partial<StoryRow> = {}): StoryRow => ({
  id: "0b6f1c1e-8d3a-4a4e-9d7c-2f1e5b7a9c10",
  title: "The Tide",
  background: "A harbour town.",
  starter: "Once.",
  styleRules: null,
  language: "en",
  minLength: 1,
  maxLength: 500,
  ownerId: "owner",
  ownerType: "human",
  status: "active",
  storyPack: null,
  hiddenAt: null,
  hiddenBy: null,
  hiddenReason: null,
  rating: "general",
  warnings: [],
  segmentsCount: 0,
  botSegmentsCount: 0,
  continuationsCount: 0,
  createdAt: "2026-01-02T03:04:05.000Z",
  updatedAt: "2026-01-02T03:04:05.000Z",
  searchVersion: 1,
  searchSynced: 1,
  searchUpto: 0,
  searchDirtyAt: null,
  ...fields,
});

describe("the story's labels in a book", () => {
  it("are read from the story's record: its rating, warnings and authorship", () => {
    expect(storyLabels(storyView(row(), []))).toEqual({ rating: "general", warnings: [], authorship: { authorship: "human", bot_share: 0 } });
    const labelled = storyView({ ...row(), rating: "mature", warnings: ["violence", "self_harm"], segmentsCount: 5, botSegmentsCount: 2 }, []);
    expect(storyLabels(labelled)).toEqual({ rating: "mature", warnings: ["violence", "self_harm"], authorship: { authorship: "mixed", bot_share: 0.4 } });
  });

  it.each<[StoryLabels, string, string | null]>([
    [{ rating: "general", warnings: [], authorship: null }, "Rated General · Content warnings: none given", null],
    [
      { rating: "teen", warnings: ["violence", "self_harm", "sexual_content"], authorship: { authorship: "human", bot_share: 0 } },
      "Rated Teen · Content warnings: violence, self-harm, sexual content",
      "Written by humans: no segment of the story by a bot.",
    ],
    [
      { rating: "mature", warnings: ["death"], authorship: { authorship: "bot", bot_share: 1 } },
      "Rated Mature · Content warnings: death",
      "Written by bots: every segment of the story by a bot.",
    ],
    [
      { rating: "general", warnings: [], authorship: { authorship: "mixed", bot_share: 0.4 } },
      "Rated General · Content warnings: none given",
      "Written by humans and bots: 40 % of the story's segments by bots.",
    ],
    [
      { rating: "general", warnings: [], authorship: { authorship: "mixed", bot_share: 0.001 } },
      "Rated General · Content warnings: none given",
      "Written by humans and bots: <1 % of the story's segments by bots.",
    ],
  ])("%j", (labels, line, who) => {
    expect(labelsLine(labels)).toBe(line);
    expect(authorshipLine(labels)).toBe(who);
  });

  it("are on the EPUB's title page and in its package, and at the Markdown's top", async () => {
    const segment = (n: number, author: string, type: string) => ({
      id: `s${n}`,
      branch_id: "b",
      bot_id: author,
      author_type: type,
      author_name: author,
      content: `text ${n}`,
      sequence_order: n,
      created_at: "2026-01-02T03:04:05.000Z",
      hidden: false,
    });
    const segments = [segment(1, "alice", "human"), segment(2, "tidebot", "bot")];
    const book: Book = {
      version: {} as PathVersion,
      story: { id: "s", title: "The Tide", background: "A harbour town.", language: "en" },
      branch: { id: "0b6f1c1e-8d3a-4a4e-9d7c-2f1e5b7a9c10", title: "main line", is_main: true },
      labels: { rating: "mature", warnings: ["violence", "self_harm"], authorship: { authorship: "mixed", bot_share: 0.5 } },
      authors: [
        { id: "alice", name: "alice", type: "human", segments: 1 },
        { id: "tidebot", name: "tidebot", type: "bot", segments: 1 },
      ],
      chapters: [{ number: 1, title: "main line", crossing: null, segments }],
      segments_count: 2,
      left_out: 0,
      length: 2,
      modified: "2026-01-02T03:04:05.000Z",
    };
    const files = unzipSync(new Uint8Array(await new Response(epubOf(book, "https://storyloom.example")).arrayBuffer()));
    const opf = strFromU8(files["EPUB/package.opf"]);
    expect(opf).toContain(`<meta property="schema:contentRating">Mature</meta>`);
    expect(opf).toContain(`<dc:creator id="creator-2">tidebot (bot)</dc:creator>`);
    expect(opf).toContain(`<meta property="dcterms:modified">2026-01-02T03:04:05Z</meta>`);
    const title = strFromU8(files["EPUB/title-page.xhtml"]);
    expect(title).toContain(`<p class="labels" xml:lang="en" lang="en">Rated Mature · Content warnings: violence, self-harm</p>`);
    expect(title).toContain(`<p class="authorship" xml:lang="en" lang="en">Written by humans and bots: 50 % of the story&apos;s segments by bots.</p>`);
    const md = await new Response(markdownOf(book, "https://storyloom.example")).text();
    expect(md.split("\n\n").slice(0, 4)).toEqual([
      "# The Tide",
      "Rated Mature · Content warnings: violence, self-harm",
      "Written by humans and bots: 50 % of the story's segments by bots.",
      "**Authors:** alice, 1 segment; tidebot (bot), 1 segment",
    ]);
  });
});
