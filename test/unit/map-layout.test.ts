import { describe, expect, it } from "vitest";
import { type BranchLane, type FoldedLane, type MapInput, MAP, clip, layoutMap } from "../../src/web/support/map-layout";

type N = MapInput;
const node = (id: string, parent: string | null, fork: number, segments: number): N => ({
  id,
  parent_branch_id: parent,
  fork_sequence: fork,
  segments_count: segments,
});

const xOf = (sequence: number, last: number) => Math.round((MAP.chartLeft + (sequence / last) * (MAP.chartRight - MAP.chartLeft)) * 10) / 10;
const yOf = (lane: number) => MAP.top + lane * MAP.row + MAP.row / 2;
const branches = (lanes: ReturnType<typeof layoutMap<N>>["lanes"]) => lanes.filter((l): l is BranchLane<N> => l.kind === "branch");
const foldeds = (lanes: ReturnType<typeof layoutMap<N>>["lanes"]) => lanes.filter((l): l is FoldedLane<N> => l.kind === "folded");

/** A deterministic tree of `n` branches under a main line: wide near the top, chains further down. */
function bigTree(n: number): N[] {
  const made: N[] = [node("main", null, 0, 30)];
  for (let i = 0; i < n; i++) {
    const parent = i < 12 ? made[0] : made[1 + (((i * 2654435761) >>> 0) % i)];
    made.push(node(`b${i}`, parent.id, parent.fork_sequence + Math.max(1, parent.segments_count), i % 5));
  }
  // Map order: depth first from the main line, siblings in the order made.
  const children = new Map<string, N[]>();
  for (const m of made.slice(1)) children.set(m.parent_branch_id!, [...(children.get(m.parent_branch_id!) ?? []), m]);
  const order: N[] = [];
  const visit = (m: N) => {
    order.push(m);
    for (const c of children.get(m.id) ?? []) visit(c);
  };
  visit(made[0]);
  return order;
}

describe("layoutMap", () => {
  // main: segments 1–10; a forks main after 3 (own 4–5); b forks a after 5 (6–9); c forks main after 7 (none yet);
  // d forks a's line after 2, which is the main line's segment: its fork is drawn from the main line's lane.
  const small = [node("main", null, 0, 10), node("a", "main", 3, 2), node("b", "a", 5, 4), node("d", "a", 2, 1), node("c", "main", 7, 0)];

  it.each([
    ["main", 0, 0, 0, 10, null],
    ["a", 1, 1, 3, 5, { from: 0, at: 3 }],
    ["b", 2, 2, 5, 9, { from: 1, at: 5 }],
    ["d", 3, 2, 2, 3, { from: 0, at: 2 }],
    ["c", 4, 1, 7, 7, { from: 0, at: 7 }],
  ])("%s: lane %i, depth %i, a bar from %i to %i, forked from %o", (id, lane, depth, from, to, fork) => {
    const { lanes, lastSequence } = layoutMap(small);
    expect(lastSequence).toBe(10);
    const l = lanes[lane] as BranchLane<N>;
    expect(l.kind).toBe("branch");
    expect(l.node.id).toBe(id);
    expect(l.depth).toBe(depth);
    expect(l.y).toBe(yOf(lane));
    expect(l.labelX).toBe(MAP.labelLeft + depth * MAP.indent);
    expect(l.x0).toBe(xOf(from, 10));
    // An empty branch still shows a sliver of bar.
    expect(l.x1).toBe(to > from ? xOf(to, 10) : Math.round((xOf(from, 10) + 3) * 10) / 10);
    expect(l.fork).toEqual(fork ? { x: xOf(fork.at, 10), fromY: yOf(fork.from) } : null);
  });

  it("draws everything within the budget, with a height of its lanes", () => {
    const layout = layoutMap(small);
    expect(layout.lanes).toHaveLength(5);
    expect(layout).toMatchObject({ drawn: 5, folded: 0, width: MAP.width, height: MAP.top + 5 * MAP.row + MAP.bottom });
  });

  it("is deterministic: the same nodes give the same picture", () => {
    const tree = bigTree(200);
    expect(layoutMap(tree)).toEqual(layoutMap(structuredClone(tree)));
    expect(layoutMap(tree, { expand: "b40" })).toEqual(layoutMap(structuredClone(tree), { expand: "b40" }));
  });

  it("folds past the budget: breadth first, larger subtrees first within a depth, the rest counted under their parent", () => {
    // main → x (with a chain of 4 under it), y, z (leaves). Budget 3: main, then x (largest) and y; z and x's chain fold.
    const tree = [
      node("main", null, 0, 5),
      node("x", "main", 1, 1),
      node("x1", "x", 2, 1),
      node("x2", "x1", 3, 1),
      node("x3", "x2", 4, 1),
      node("x4", "x3", 5, 1),
      node("y", "main", 2, 1),
      node("z", "main", 4, 1),
    ];
    const { lanes, drawn, folded } = layoutMap(tree, { budget: 3 });
    expect({ drawn, folded }).toEqual({ drawn: 3, folded: 5 });
    expect(lanes.map((l) => (l.kind === "branch" ? l.node.id : `+${l.ids.length} under ${l.parent.id}`))).toEqual([
      "main",
      "x",
      "+4 under x",
      "y",
      "+1 under main",
    ]);
    const [underX, underMain] = foldeds(lanes);
    expect(underX.ids).toEqual(["x1", "x2", "x3", "x4"]);
    expect(underX.depth).toBe(2);
    // Drawn from where the first folded branch forks, on the lane holding that segment.
    expect(underX.fork).toEqual({ x: xOf(2, 6), fromY: yOf(1) });
    expect(underMain.fork).toEqual({ x: xOf(4, 6), fromY: yOf(0) });
  });

  it("expand draws the branch's line and every branch forking from it, past the budget", () => {
    const tree = [node("main", null, 0, 5), ...Array.from({ length: 6 }, (_, i) => node(`c${i}`, "main", 1, 1)), node("deep", "c5", 2, 1)];
    tree.push(...Array.from({ length: 4 }, (_, i) => node(`d${i}`, "deep", 3, 0)));
    const folded = layoutMap(tree, { budget: 2 });
    // The largest subtree first: c5, with deep and its four under it.
    expect(branches(folded.lanes).map((l) => l.node.id)).toEqual(["main", "c5"]);
    expect(foldeds(folded.lanes).map((l) => [l.parent.id, l.ids.length])).toEqual([
      ["c5", 5],
      ["main", 5],
    ]);
    const open = layoutMap(tree, { budget: 2, expand: "deep" });
    expect(branches(open.lanes).map((l) => l.node.id)).toEqual(["main", "c5", "deep", "d0", "d1", "d2", "d3"]);
    expect(foldeds(open.lanes).map((l) => [l.parent.id, l.ids.length])).toEqual([["main", 5]]);
    // An unknown id expands nothing.
    expect(layoutMap(tree, { budget: 2, expand: "nope" })).toEqual(folded);
  });

  it("every branch of a 200-branch tree is reachable: drawn, or unfolded by following the folded lanes' expands", () => {
    const tree = bigTree(200);
    const first = layoutMap(tree);
    expect(first.drawn).toBeLessThanOrEqual(24);
    expect(first.lanes.length).toBeLessThanOrEqual(48);
    const seen = new Set<string>();
    const expanded = new Set<string | null>();
    const queue: (string | null)[] = [null];
    while (queue.length) {
      const expand = queue.shift()!;
      if (expanded.has(expand)) continue;
      expanded.add(expand);
      const { lanes } = layoutMap(tree, { expand });
      for (const l of branches(lanes)) seen.add(l.node.id);
      for (const l of foldeds(lanes)) {
        // A folded lane counts exactly what is not drawn under its parent.
        for (const id of l.ids) expect(branches(lanes).some((b) => b.node.id === id)).toBe(false);
        queue.push(l.parent.id);
      }
    }
    expect(seen.size).toBe(tree.length);
  });
});

describe("clip", () => {
  it.each([
    ["The Tide Turns", 20, "The Tide Turns"],
    ["The Tide Turns", 14, "The Tide Turns"],
    ["The Tide Turns", 13, "The Tide Tur…"],
    ["潮水回来了", 10, "潮水回来了"],
    ["潮水回来了", 9, "潮水回来…"],
    ["潮水回来了", 8, "潮水回…"],
    ["", 3, ""],
  ])("%j in %i units: %j", (text, units, clipped) => {
    expect(clip(text, units)).toBe(clipped);
  });
});
