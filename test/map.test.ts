import { beforeAll, describe, expect, it } from "vitest";
import { MAP_BUDGET } from "../src/web/support/map-layout";
import { type CallResult, call, createBranch, expectError, join, registerBot, registerHuman, storyWithSegments, vote, words } from "./helpers";
import { hide, moderator } from "./moderation";
import { page, shown, trips } from "./pages";
import { type XmlElement, elements, parseXml, textOf } from "./xml";

/** The map of a story, as JSON (`GET /stories/{id}/map`) and as the story page's picture. */

/** The story page's map: its SVG parsed as XML (any well-formedness fault throws), and the list of links beside it. */
function mapOf(html: string) {
  const svgText = html.slice(html.indexOf("<svg"), html.indexOf("</svg>") + "</svg>".length);
  const svg = parseXml(svgText);
  const list = html.slice(html.indexOf('id="map-list"'), html.indexOf("</nav>", html.indexOf('id="map-list"')));
  const links = [...elements(svg)].filter((e) => e.name === "a");
  const listHrefs = [...list.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, "&"));
  return { svg, links, listHrefs };
}

/** An element's first child element of that name (and class). */
function child(el: XmlElement, name: string, cls?: string): XmlElement {
  const found = el.children.find((c): c is XmlElement => typeof c !== "string" && c.name === name && (cls === undefined || c.attrs.class === cls));
  if (!found) throw new Error(`no <${name}${cls ? `.${cls}` : ""}> in <${el.name} ${JSON.stringify(el.attrs)}>`);
  return found;
}

const drawnIds = (links: XmlElement[]) => links.flatMap((a) => /^\/branches\/([0-9a-f-]+)\/read$/.exec(a.attrs.href)?.[1] ?? []);
const expands = (links: XmlElement[]) => links.flatMap((a) => /\?expand=([0-9a-f-]+)#map$/.exec(a.attrs.href)?.[1] ?? []);

/**
 * A story: A forks the main line after its third segment (one segment, a bot holding its turn, a vote), B forks A at
 * its head (one segment), C forks the main line after its second segment (none yet).
 */
async function world() {
  const { owner, story, segments } = await storyWithSegments();
  const a = await createBranch(owner.token, story.id, { title: "The Tide Turns", fork_at_segment_id: segments[2].id, initial_segment: words(4, "a") });
  const b = await createBranch(owner.token, story.id, { title: "Deeper", parent_branch_id: a.id, initial_segment: words(4, "b") });
  const c = await createBranch(owner.token, story.id, { title: "Sideways", fork_at_segment_id: segments[1].id });
  const bot = await registerBot();
  expect((await join(bot.token, a.id)).status).toBe(201);
  const voter = await registerHuman();
  expect((await vote(voter.token, "branch", a.id, 1)).status).toBe(201);
  return { owner, story, segments, a, b, c, bot };
}

let w: Awaited<ReturnType<typeof world>>;
beforeAll(async () => {
  w = await world();
});

describe("GET /stories/{id}/map", () => {
  it("every branch in map order (the main line, then each branch followed by what forks from it, siblings by fork point), with parent, fork, depth, counts, scores and turn; one round trip", async () => {
    const res = await call(`/stories/${w.story.id}/map`);
    expect(res.status, res.text).toBe(200);
    expect(trips(res)).toBe(1);
    const { nodes, ...rest } = res.body.data;
    expect(rest).toEqual({ story_id: w.story.id, branches_count: 4 });
    expect(nodes.map((n: any) => n.id)).toEqual([w.story.main_branch_id, w.c.id, w.a.id, w.b.id]);
    const [main, c, a, b] = nodes;
    expect(Object.keys(a).sort()).toEqual(
      [
        "id",
        "title",
        "parent_branch_id",
        "fork_at_segment_id",
        "fork_sequence",
        "depth",
        "is_main",
        "status",
        "segments_count",
        "active_bots_count",
        "vote_score",
        "activity_score",
        "current_turn",
        "created_at",
        "updated_at",
      ].sort(),
    );
    expect(main).toMatchObject({ title: "main line", parent_branch_id: null, fork_at_segment_id: null, fork_sequence: 0, depth: 0, is_main: true });
    expect(main).toMatchObject({ segments_count: 4, current_turn: null, status: "active" });
    expect(c).toMatchObject({ parent_branch_id: main.id, fork_at_segment_id: w.segments[1].id, fork_sequence: 2, depth: 1, segments_count: 0 });
    expect(a).toMatchObject({ parent_branch_id: main.id, fork_at_segment_id: w.segments[2].id, fork_sequence: 3, depth: 1, is_main: false });
    expect(a).toMatchObject({ segments_count: 1, active_bots_count: 1, vote_score: 1, activity_score: 1 });
    expect(a.current_turn).toEqual({ bot_id: w.bot.id, name: w.bot.input.name });
    expect(b).toMatchObject({ parent_branch_id: a.id, fork_sequence: 4, depth: 2, segments_count: 1, current_turn: null });
    expect(b.updated_at >= b.created_at).toBe(true);
  });

  it("404 for an unknown or malformed story id, and for a hidden story but to its owner", async () => {
    expectError(await call(`/stories/${crypto.randomUUID()}/map`), 404, "NOT_FOUND");
    expectError(await call("/stories/not-a-story/map"), 404, "NOT_FOUND");
    const { owner, story } = await storyWithSegments();
    const mod = await moderator();
    expect((await hide(mod.token, "stories", story.id)).status).toBe(200);
    expectError(await call(`/stories/${story.id}/map`), 404, "NOT_FOUND");
    expect((await call(`/stories/${story.id}/map`, { token: owner.token })).body.data.nodes).toHaveLength(1);
  });

  it("a hidden branch and what forks from it are off the map, the JSON and the picture, for every reader", async () => {
    const x = await world();
    const mod = await moderator();
    expect((await hide(mod.token, "branches", x.a.id)).status).toBe(200);
    for (const token of [undefined, x.owner.token, mod.token]) {
      const ids = (await call(`/stories/${x.story.id}/map`, { token })).body.data.nodes.map((n: any) => n.id);
      expect(ids).toEqual([x.story.main_branch_id, x.c.id]);
    }
    const story = await page(`/stories/${x.story.id}`);
    expect(shown(story)).not.toContain(x.a.id);
    expect(story.text).not.toContain(x.b.id);
    expect(drawnIds(mapOf(story.text).links)).toEqual([x.story.main_branch_id, x.c.id]);
  });
});

describe("the story page's map", () => {
  it("an SVG drawn on the server: each branch a linked lane with its title, figures and turn, forks at their segment; the same lanes as a list of links beside it; one round trip", async () => {
    const res = await page(`/stories/${w.story.id}`);
    expect(res.status).toBe(200);
    expect(trips(res)).toBe(1);
    const { svg, links, listHrefs } = mapOf(res.text);
    expect(svg.attrs).toMatchObject({ xmlns: "http://www.w3.org/2000/svg", "aria-labelledby": "map-title" });
    expect(textOf([...elements(svg)].find((e) => e.attrs.id === "map-title")!)).toBe("Map of 4 branches");
    // Map order, each lane linking to the branch's path page; the list beside has the same links in the same order.
    expect(drawnIds(links)).toEqual([w.story.main_branch_id, w.c.id, w.a.id, w.b.id]);
    expect(listHrefs).toEqual(links.map((a) => a.attrs.href));
    const lane = (id: string) => links.find((a) => a.attrs.href === `/branches/${id}/read`)!;
    // A screen reader reads each lane's title first: where it forks, its figures, who holds its turn.
    const title = (id: string) => child(lane(id), "title");
    expect(textOf(title(w.a.id))).toBe(
      `The Tide Turns: forks from main line after segment 3; 1 segment of its own; score +1; ${w.bot.input.name}, a bot, holds its turn now`,
    );
    expect(textOf(title(w.b.id))).toBe("Deeper: forks from The Tide Turns after segment 4; 1 segment of its own; score 0");
    expect(textOf(lane(w.a.id))).toContain("The Tide Turns");
    // The bot's turn is marked on its lane only.
    const turns = links.filter((a) => a.children.some((c) => typeof c !== "string" && c.attrs.class === "turn"));
    expect(() => child(lane(w.a.id), "circle", "turn")).not.toThrow();
    expect(turns).toEqual([lane(w.a.id)]);
    // Forks are drawn at the segment they fork from: C's bar starts left of A's (segment 2 against 3).
    const bar = (id: string) => Number(child(lane(id), "rect", "bar").attrs.x);
    expect(bar(w.story.main_branch_id)).toBeLessThan(bar(w.c.id));
    expect(bar(w.c.id)).toBeLessThan(bar(w.a.id));
    expect(bar(w.a.id)).toBeLessThan(bar(w.b.id));
  });

  it("a story of 200 branches draws legibly: at most the budget drawn, the rest folded into counted lanes whose links unfold them; every branch reachable; every picture well-formed", async () => {
    const { owner, story } = await storyWithSegments();
    const made: string[] = [];
    // Wide near the main line, then branches of earlier branches (some with a segment of their own), deterministic.
    for (let i = 0; i < 200; i++) {
      const parent = i < 12 ? story.main_branch_id : made[((i * 2654435761) >>> 0) % i];
      const body = { title: `Branch ${i}`, parent_branch_id: parent, ...(i % 3 ? { initial_segment: words(3, `w${i}`) } : {}) };
      made.push((await createBranch(owner.token, story.id, body)).id);
    }
    const json: CallResult = await call(`/stories/${story.id}/map`);
    expect(trips(json)).toBe(1);
    const nodes: any[] = json.body.data.nodes;
    expect(nodes).toHaveLength(201);
    const place = new Map(nodes.map((n, i) => [n.id, i]));
    const byId = new Map(nodes.map((n) => [n.id, n]));
    for (const n of nodes.slice(1)) {
      expect(place.get(n.parent_branch_id)!).toBeLessThan(place.get(n.id)!);
      expect(n.depth).toBe(byId.get(n.parent_branch_id).depth + 1);
    }

    const first = await page(`/stories/${story.id}`);
    expect(trips(first)).toBe(1);
    const map = mapOf(first.text);
    expect(drawnIds(map.links).length).toBeLessThanOrEqual(MAP_BUDGET);
    expect(expands(map.links).length).toBeGreaterThan(0);
    expect(first.text).toContain("folded into “+” rows");
    // Every folded lane says how many it holds; drawn and folded together are the whole story.
    const folded = map.links.filter((a) => a.attrs.href.includes("?expand="));
    const counted = folded.map((a) => Number(/^\+(\d+) more branch(es)?$/.exec(textOf(child(a, "text")))?.[1]));
    expect(counted.every((n) => n > 0)).toBe(true);
    expect(drawnIds(map.links).length + counted.reduce((x, y) => x + y, 0)).toBe(201);

    // Follow every unfold link (breadth first) until nothing new is drawn: every branch is reached.
    const seen = new Set(drawnIds(map.links));
    const queue = expands(map.links);
    const opened = new Set<string>();
    while (queue.length) {
      const expand = queue.shift()!;
      if (opened.has(expand)) continue;
      opened.add(expand);
      const res = await page(`/stories/${story.id}?expand=${expand}`);
      expect(res.status).toBe(200);
      const unfolded = mapOf(res.text);
      expect(unfolded.listHrefs).toEqual(unfolded.links.map((a) => a.attrs.href));
      for (const id of drawnIds(unfolded.links)) seen.add(id);
      // Every branch forking from the unfolded one is drawn.
      for (const n of nodes.filter((m) => m.parent_branch_id === expand)) expect(drawnIds(unfolded.links)).toContain(n.id);
      queue.push(...expands(unfolded.links));
    }
    expect([...seen].sort()).toEqual(nodes.map((n) => n.id).sort());
    expect(opened.size).toBeLessThan(201);
  });

  it("?expand= with anything but a branch of the story draws the map as it is", async () => {
    const plain = await page(`/stories/${w.story.id}`);
    for (const expand of ["nope", crypto.randomUUID(), "%3Cscript%3E"]) {
      const res = await page(`/stories/${w.story.id}?expand=${expand}`);
      expect(res.status).toBe(200);
      expect(mapOf(res.text).links.map((a) => a.attrs.href)).toEqual(mapOf(plain.text).links.map((a) => a.attrs.href));
    }
  });
});
