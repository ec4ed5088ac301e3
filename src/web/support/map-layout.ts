/**
 * Where the story map puts each branch, as a pure function: one lane per branch, the main line on the
 * first, each branch's lane below the one it forks from, in map order; x by sequence_order (a branch's bar runs from
 * the segment it forks from to its last), y by lane. Deterministic: the same nodes and `expand` give the same picture.
 *
 * A big story stays legible: at most `budget` branches are drawn, chosen breadth first (the main line, then what
 * forks from it, then what forks from those), larger subtrees first within a depth; what is left is folded into one
 * "+N branches" lane under the branch it forks from, whose link unfolds it (`expand`: that branch's ancestors and
 * every branch forking from it are drawn, the rest as before, within the budget).
 */

/** What the layout reads of a map node (src/domain/reading/story-map.ts). */
export interface MapInput {
  id: string;
  parent_branch_id: string | null;
  fork_sequence: number;
  segments_count: number;
}

/** Where a map puts things: its width, the label and bar columns, the rows. */
export interface MapGeometry {
  width: number;
  labelLeft: number;
  labelRight: number;
  chartLeft: number;
  chartRight: number;
  top: number;
  row: number;
  indent: number;
  maxIndent: number;
  bottom: number;
  /** Labels above the bars (a phone's map) rather than beside them; the bar sits `barDy` below the lane's middle. */
  stacked: boolean;
  barDy: number;
}

export const MAP: MapGeometry = {
  width: 660,
  /** Labels (title, figures) on the left, indented by depth; bars on the right. */
  labelLeft: 8,
  labelRight: 292,
  chartLeft: 310,
  chartRight: 648,
  /** The axis above the lanes. */
  top: 28,
  row: 36,
  indent: 12,
  maxIndent: 10,
  bottom: 8,
  stacked: false,
  barDy: 0,
};

/**
 * The map laid out for a phone's width (360 units, about a phone's column in CSS pixels, so its text is drawn near
 * its own size): each lane's title, then its figures, above its bar, the bars across the whole width.
 */
export const MAP_NARROW: MapGeometry = {
  width: 360,
  labelLeft: 6,
  labelRight: 354,
  chartLeft: 10,
  chartRight: 350,
  top: 24,
  row: 54,
  indent: 10,
  maxIndent: 6,
  bottom: 6,
  stacked: true,
  barDy: 15,
};

const WIDE = MAP;

/** How many branches a map draws before folding the rest. */
export const MAP_BUDGET = 24;

/** Where a lane's fork is drawn from: the lane holding the segment it forks from, at that segment. */
export interface Fork {
  x: number;
  fromY: number;
}

export interface BranchLane<N extends MapInput> {
  kind: "branch";
  node: N;
  depth: number;
  /** The lane's middle. */
  y: number;
  labelX: number;
  /** The bar: from the fork point to the last segment. */
  x0: number;
  x1: number;
  fork: Fork | null;
}

export interface FoldedLane<N extends MapInput> {
  kind: "folded";
  /** The drawn branch these fork from: its `expand` unfolds them. */
  parent: N;
  /** Every branch folded here, whatever its depth. */
  ids: string[];
  depth: number;
  y: number;
  labelX: number;
  fork: Fork;
}

export type Lane<N extends MapInput> = BranchLane<N> | FoldedLane<N>;

export interface MapLayout<N extends MapInput> {
  lanes: Lane<N>[];
  width: number;
  height: number;
  /** The last sequence_order of any branch's path: the axis' end. */
  lastSequence: number;
  drawn: number;
  folded: number;
}

/** Nodes in map order (each after the branch it forks from); a node whose parent is absent is a root. */
export function layoutMap<N extends MapInput>(nodes: N[], options: { expand?: string | null; budget?: number; geometry?: MapGeometry } = {}): MapLayout<N> {
  const MAP = options.geometry ?? WIDE;
  const tree = treeOf(nodes);
  const drawn = chooseDrawn(tree, options.expand ?? null, options.budget ?? MAP_BUDGET);
  const lastSequence = Math.max(1, ...nodes.map((n) => n.fork_sequence + n.segments_count));
  const xOf = (sequence: number) => tenth(MAP.chartLeft + (sequence / lastSequence) * (MAP.chartRight - MAP.chartLeft));
  const lanes: Lane<N>[] = [];
  const laneY = new Map<string, number>();
  const yOf = (i: number) => MAP.top + i * MAP.row + MAP.row / 2;
  const labelXOf = (depth: number) => MAP.labelLeft + Math.min(depth, MAP.maxIndent) * MAP.indent;
  /** The lane of the segment at `sequence` on `parent`'s reading path: the parent's, or the ancestor's it belongs to. */
  const forkOf = (parent: N, sequence: number): Fork => {
    let owner = parent;
    while (sequence <= owner.fork_sequence && tree.parent.get(owner.id)) owner = tree.parent.get(owner.id)!;
    return { x: xOf(sequence), fromY: laneY.get(owner.id)! };
  };
  const visit = (node: N) => {
    const y = yOf(lanes.length);
    laneY.set(node.id, y);
    const depth = tree.depth.get(node.id)!;
    const parent = tree.parent.get(node.id);
    const x0 = xOf(node.fork_sequence);
    const x1 = Math.max(xOf(node.fork_sequence + node.segments_count), tenth(x0 + 3));
    lanes.push({ kind: "branch", node, depth, y, labelX: labelXOf(depth), x0, x1, fork: parent ? forkOf(parent, node.fork_sequence) : null });
    const children = tree.children.get(node.id) ?? [];
    for (const child of children) if (drawn.has(child.id)) visit(child);
    const folded = children.filter((c) => !drawn.has(c.id));
    if (!folded.length) return;
    const first = Math.min(...folded.map((c) => c.fork_sequence));
    const ids = folded.flatMap((c) => tree.subtree(c.id));
    lanes.push({ kind: "folded", parent: node, ids, depth: depth + 1, y: yOf(lanes.length), labelX: labelXOf(depth + 1), fork: forkOf(node, first) });
  };
  for (const root of tree.roots) visit(root);
  return {
    lanes,
    width: MAP.width,
    height: MAP.top + lanes.length * MAP.row + MAP.bottom,
    lastSequence,
    drawn: drawn.size,
    folded: nodes.length - drawn.size,
  };
}

/** Coordinates to a tenth of a unit: enough for the eye, short in the page. */
const tenth = (n: number) => Math.round(n * 10) / 10;

function treeOf<N extends MapInput>(nodes: N[]) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const parent = new Map<string, N>();
  const children = new Map<string, N[]>();
  const depth = new Map<string, number>();
  const roots: N[] = [];
  for (const n of nodes) {
    const p = n.parent_branch_id ? byId.get(n.parent_branch_id) : undefined;
    if (!p) {
      roots.push(n);
      depth.set(n.id, 0);
      continue;
    }
    parent.set(n.id, p);
    depth.set(n.id, (depth.get(p.id) ?? 0) + 1);
    const siblings = children.get(p.id);
    if (siblings) siblings.push(n);
    else children.set(p.id, [n]);
  }
  // Sizes from the leaves up: map order puts every node after its parent.
  const size = new Map<string, number>();
  for (let i = nodes.length - 1; i >= 0; i--) {
    const n = nodes[i];
    size.set(n.id, (size.get(n.id) ?? 0) + 1);
    const p = parent.get(n.id);
    if (p) size.set(p.id, (size.get(p.id) ?? 0) + size.get(n.id)!);
  }
  const subtree = (id: string): string[] => [id, ...(children.get(id) ?? []).flatMap((c) => subtree(c.id))];
  return { nodes, roots, parent, children, depth, size, subtree };
}

/** The branches drawn: the roots, the expanded branch's line and children, then breadth first within the budget. */
function chooseDrawn<N extends MapInput>(tree: ReturnType<typeof treeOf<N>>, expand: string | null, budget: number): Set<string> {
  const drawn = new Set(tree.roots.map((r) => r.id));
  if (expand && tree.depth.has(expand)) {
    for (let id: string | undefined = expand; id; id = tree.parent.get(id)?.id) drawn.add(id);
    for (const child of tree.children.get(expand) ?? []) drawn.add(child.id);
  }
  const order = tree.nodes.map((n, i) => ({ n, i }));
  order.sort((a, b) => tree.depth.get(a.n.id)! - tree.depth.get(b.n.id)! || tree.size.get(b.n.id)! - tree.size.get(a.n.id)! || a.i - b.i);
  for (const { n } of order) {
    if (drawn.size >= budget) break;
    const p = tree.parent.get(n.id);
    if (p && drawn.has(p.id)) drawn.add(n.id);
  }
  return drawn;
}

/** Text cut to at most `units` (a wide CJK character counts two), ending in "…" when cut. */
export function clip(text: string, units: number): string {
  const chars = [...text];
  const widths = chars.map((ch) => ((ch.codePointAt(0) ?? 0) >= 0x2e80 ? 2 : 1));
  if (widths.reduce((a, b) => a + b, 0) <= units) return text;
  let used = 1; // the "…"
  let out = "";
  for (let i = 0; i < chars.length && used + widths[i] <= units; i++) {
    used += widths[i];
    out += chars[i];
  }
  return `${out}…`;
}
