import { beforeAll, describe, expect, it } from "vitest";
import { call, createBranch, storyWithSegments, submit, words } from "./helpers";
import { hide, moderator } from "./moderation";
import { ORIGIN, page, trips, visible } from "./pages";

/** One page per path, `/branches/{id}/read` in the web reader. */

/** Each segment of a path page, by its anchor: the segment's markup, from its `<li id="s-N">` to the next. */
function segmentsOf(html: string): Map<number, string> {
  const parts = html.split(/(?=<li id="s-\d+")/).slice(1);
  return new Map(parts.map((p) => [Number(/^<li id="s-(\d+)"/.exec(p)![1]), p.slice(0, p.indexOf("</li></ol>") >= 0 ? p.indexOf("</li></ol>") : undefined)]));
}

const crossingOf = (html: string) => /<p class="crossing"[^>]*>(.*?)<\/p>/.exec(html)?.[1];
const choicesOf = (html: string) =>
  [...html.matchAll(/<li>continue on <a href="([^"]+)"><cite>([^<]*)<\/cite><\/a> · (\d+) segments?<\/li>/g)].map((m): [string, number, string] => [
    m[2],
    Number(m[3]),
    m[1],
  ]);

/**
 * The main line (segments 1–6); A forks it after 3 (4–5); B forks A at its head (6); C forks the main line after 3
 * too (4); D forks A after 4 (5). B's path: 1–3 on the main line, 4–5 on A, 6 on B.
 */
async function world() {
  const { owner, story, segments } = await storyWithSegments();
  for (const text of [words(4, "m5"), words(4, "m6")]) expect((await submit(owner.token, story.main_branch_id, text)).status).toBe(201);
  const a = await createBranch(owner.token, story.id, { title: "The Tide Turns", fork_at_segment_id: segments[2].id, initial_segment: words(4, "a4") });
  expect((await submit(owner.token, a.id, words(4, "a5"))).status).toBe(201);
  const b = await createBranch(owner.token, story.id, { title: "Deeper", parent_branch_id: a.id, initial_segment: words(4, "b6") });
  const c = await createBranch(owner.token, story.id, { title: "Sideways", fork_at_segment_id: segments[2].id, initial_segment: words(4, "c4") });
  const d = await createBranch(owner.token, story.id, { title: "Sidestep", fork_at_segment_id: a.segment.id, initial_segment: words(4, "d5") });
  return { owner, story, segments, main: story.main_branch_id as string, a, b, c, d };
}

let w: Awaited<ReturnType<typeof world>>;
beforeAll(async () => {
  w = await world();
});

describe("the path page", () => {
  it("reads a branch's path across two forks as one page: ancestors up to each fork then its own, a mark at each crossing, the choices under each fork point; one round trip", async () => {
    const res = await page(`/branches/${w.b.id}/read`);
    expect(res.status).toBe(200);
    expect(trips(res)).toBe(1);
    expect(res.text).toContain(`<link rel="canonical" href="${ORIGIN}/branches/${w.b.id}/read"/>`);
    const segs = segmentsOf(res.text);
    expect([...segs.keys()]).toEqual([1, 2, 3, 4, 5, 6]);
    // The text in reading order: the main line's first three, A's two, B's own.
    const texts = [w.segments[0].content, w.segments[1].content, w.segments[2].content, words(4, "a4"), words(4, "a5"), words(4, "b6")];
    for (const [i, t] of texts.entries()) expect(visible(segs.get(i + 1)!)).toContain(t);
    expect(res.text).not.toContain(words(4, "m5"));
    expect(res.text).not.toContain(words(4, "c4"));
    // A mark where the path crosses each fork, naming the branch it leaves (linked at the fork) and the one it enters.
    expect([...segs].filter(([, html]) => crossingOf(html)).map(([n]) => n)).toEqual([4, 6]);
    expect(visible(crossingOf(segs.get(4)!)!)).toBe("↳ Here the path leaves main line and goes on with The Tide Turns .");
    expect(crossingOf(segs.get(4)!)).toContain(`<a href="/branches/${w.main}/read#s-3">main line</a>`);
    expect(visible(crossingOf(segs.get(6)!)!)).toBe("↳ Here the path leaves The Tide Turns and goes on with Deeper .");
    expect(crossingOf(segs.get(6)!)).toContain(`<a href="/branches/${w.a.id}/read#s-5">The Tide Turns</a>`);
    // The choices: at 3 the main line going on without A (3 more segments) and C; at 4, D; none where nothing else forks.
    expect(choicesOf(segs.get(3)!)).toEqual([
      ["main line", 3, `/branches/${w.main}/read#s-4`],
      ["Sideways", 1, `/branches/${w.c.id}/read#s-4`],
    ]);
    expect(visible(segs.get(3)!)).toContain("Other ways on from #3: continue on main line · 3 segments continue on Sideways · 1 segment");
    expect(choicesOf(segs.get(4)!)).toEqual([["Sidestep", 1, `/branches/${w.d.id}/read#s-5`]]);
    for (const n of [1, 2, 5, 6]) expect(choicesOf(segs.get(n)!), `#${n}`).toEqual([]);
    // Each segment's anchor links to itself, so the address keeps the reader's place; the branch page is a link away.
    expect(segs.get(5)).toContain('<a href="#s-5" title="A link to this place in the story">#5</a>');
    expect(res.text).toContain(`<a href="/branches/${w.b.id}">votes, comments and writing</a>`);
    expect(visible(res.text)).toContain("The end of this path so far.");
    expect(res.text).not.toContain('rel="next"');
  });

  it("the main line's path page offers every branch forking from it, and the story and branch pages link to path pages", async () => {
    const res = await page(`/branches/${w.main}/read`);
    const segs = segmentsOf(res.text);
    expect([...segs.keys()]).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...segs].filter(([, html]) => crossingOf(html))).toEqual([]);
    expect(choicesOf(segs.get(3)!).map(([title]) => title)).toEqual(["The Tide Turns", "Sideways"]);
    expect((await page(`/stories/${w.story.id}`)).text).toContain(`<a href="/branches/${w.main}/read">read as one page</a>`);
    expect((await page(`/branches/${w.b.id}`)).text).toContain(`<a href="/branches/${w.b.id}/read">as one page</a>`);
  });

  it("a long path pages by 50 segments; a fork at a page's edge is marked and offered across it; an anchor's link opens the page holding it", async () => {
    const { owner, story } = await storyWithSegments();
    for (let i = 5; i <= 60; i++) expect((await submit(owner.token, story.main_branch_id, words(3, `m${i}x`))).status).toBe(201);
    const mainSegs = (await call(`/branches/${story.main_branch_id}/segments?limit=100`)).body.data.segments;
    expect(mainSegs).toHaveLength(60);
    const x = await createBranch(owner.token, story.id, { title: "Over the edge", fork_at_segment_id: mainSegs[49].id, initial_segment: words(3, "x51") });
    const main = `/branches/${story.main_branch_id}/read`;

    const first = await page(main);
    expect([...segmentsOf(first.text).keys()]).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(first.text).toContain(`<a rel="next" href="${main}?page=2">`);
    expect(first.text).not.toContain('rel="prev"');
    expect(visible(first.text)).toContain("Page 1 of 2");
    expect(choicesOf(segmentsOf(first.text).get(50)!)).toEqual([["Over the edge", 1, `/branches/${x.id}/read?page=2#s-51`]]);
    const second = await page(`${main}?page=2`);
    expect(trips(second)).toBe(1);
    expect([...segmentsOf(second.text).keys()]).toEqual(Array.from({ length: 10 }, (_, i) => i + 51));
    expect(second.text).toContain(`<a rel="prev" href="${main}">`);
    expect(second.text).toContain(`<link rel="canonical" href="${ORIGIN}${main}?page=2"/>`);
    expect(visible(second.text)).toContain("Page 2 of 2");

    // X's path: its first page offers the main line going on past the fork (the next segment is on page 2) …
    const xFirst = await page(`/branches/${x.id}/read`);
    expect(choicesOf(segmentsOf(xFirst.text).get(50)!)).toEqual([["main line", 10, `${main}?page=2#s-51`]]);
    // … and its second marks the crossing at its first segment (the segment before is on page 1).
    const xSecond = await page(`/branches/${x.id}/read?page=2`);
    const segs = segmentsOf(xSecond.text);
    expect([...segs.keys()]).toEqual([51]);
    expect(visible(crossingOf(segs.get(51)!)!)).toBe("↳ Here the path leaves main line and goes on with Over the edge .");
    expect(crossingOf(segs.get(51)!)).toContain(`href="${main}#s-50"`);
    expect(visible(segs.get(51)!)).toContain(words(3, "x51"));

    // A choice's link opens the page holding its segment, at that segment.
    const [[, , href]] = choicesOf(segmentsOf(first.text).get(50)!);
    const [path, anchor] = href.split("#");
    expect((await page(path)).text).toContain(`<li id="${anchor}"`);

    // Past the last page: an HTML 404. A page that is not a positive number is the first.
    expect((await page(`${main}?page=3`)).status).toBe(404);
    for (const p of ["0", "-1", "abc", "1.5"]) expect([...segmentsOf((await page(`${main}?page=${p}`)).text).keys()][0], p).toBe(1);
  });

  it("404 for an unknown, malformed or hidden branch; a fork of a hidden branch reads with its text masked, the branch unnamed, and no hidden branch is offered", async () => {
    expect((await page(`/branches/${crypto.randomUUID()}/read`)).status).toBe(404);
    expect((await page("/branches/nope/read")).status).toBe(404);
    const x = await world();
    const mod = await moderator();
    expect((await hide(mod.token, "branches", x.a.id)).status).toBe(200);
    expect((await hide(mod.token, "branches", x.c.id)).status).toBe(200);
    expect((await page(`/branches/${x.a.id}/read`)).status).toBe(404);
    const res = await page(`/branches/${x.b.id}/read`);
    expect(res.status).toBe(200);
    const segs = segmentsOf(res.text);
    expect([...segs.keys()]).toEqual([1, 2, 3, 4, 5, 6]);
    expect(res.text).not.toContain(words(4, "a4"));
    expect(visible(segs.get(4)!)).toContain("hidden by a moderator");
    expect(visible(crossingOf(segs.get(4)!)!)).toBe("↳ Here the path leaves main line and goes on with a hidden branch.");
    expect(visible(crossingOf(segs.get(6)!)!)).toBe("↳ Here the path leaves a hidden branch and goes on with Deeper .");
    expect(res.text).not.toContain("The Tide Turns");
    // C is hidden: not offered at 3 (the main line going on still is); D forks from the hidden A: not offered at 4.
    expect(choicesOf(segs.get(3)!).map(([title]) => title)).toEqual(["main line"]);
    expect(choicesOf(segs.get(4)!)).toEqual([]);
    expect(res.text).not.toContain(x.c.id);
    expect(res.text).not.toContain(x.d.id);
  });
});
