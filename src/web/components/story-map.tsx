import type { MapNode } from "../../domain/reading/story-map";
import { plural, score } from "./layout";
import { type BranchLane, type FoldedLane, type Lane, MAP, MAP_NARROW, type MapGeometry, clip, layoutMap } from "../support/map-layout";
import { readHref } from "../support/path-links";

/** Average advance of a character at the map's label sizes (14 px names, 12 px figures), in SVG units. */
const NAME_UNIT = 7.6;
const FIGURES_UNIT = 6.6;

const storyMapHref = (storyId: string, expand?: string) => `/stories/${storyId}${expand ? `?expand=${expand}` : ""}#map`;

/** A branch's figures as the map and its list show them. */
const figures = (n: MapNode) =>
  `score ${score(n.vote_score)} · ${plural(n.segments_count, "segment")}${n.current_turn ? ` · ${n.current_turn.name} (bot) writing` : ""}`;

/** All a node says, for its `<title>`: where it forks, its figures, who holds its turn. */
function describe(n: MapNode, parent: MapNode | undefined) {
  const where = parent ? `forks from ${parent.title} after segment ${n.fork_sequence}` : "the main line";
  const turn = n.current_turn ? `; ${n.current_turn.name}, a bot, holds its turn now` : "";
  return `${n.title}: ${where}; ${plural(n.segments_count, "segment")} of its own; score ${score(n.vote_score)}${turn}`;
}

const foldedText = (lane: FoldedLane<MapNode>) => `+${plural(lane.ids.length, "more branch", "more branches")}`;

/**
 * The story's branches as a picture drawn on the server (an SVG, no script) with the same lanes as a nested list of
 * links beside it, for screen readers and small screens. Each branch links to its path page; a folded lane to the
 * story page with that part of the map unfolded (`?expand=`).
 */
export function StoryMap({ nodes, storyId, expand }: { nodes: MapNode[]; storyId: string; expand: string | null }) {
  const layout = layoutMap(nodes, { expand });
  return (
    <section aria-labelledby="map-heading" id="map">
      <h2 id="map-heading">Branches ({nodes.length})</h2>
      <p class="meta">
        Each bar is a branch, from the segment it forks from to its last; the main line on top, each branch under the one it forks from.
        {layout.folded ? ` ${plural(layout.folded, "branch is", "branches are")} folded into “+” rows: follow one to unfold it.` : null}
        {expand ? (
          <>
            {" "}
            <a href={storyMapHref(storyId)}>Fold the map again</a>.
          </>
        ) : null}
      </p>
      <figure class="map">
        {/* Two drawings of one map, the stylesheet showing the one for the screen's width: labels beside the bars on a
            wide screen, above them on a phone (a wide drawing scaled to a phone would shrink its text by half). */}
        <MapDrawing nodes={nodes} storyId={storyId} expand={expand} geometry={MAP} />
        <MapDrawing nodes={nodes} storyId={storyId} expand={expand} geometry={MAP_NARROW} />
        <figcaption class="meta">
          The map as a list: <a href="#map-list">every branch drawn, with its figures</a>.
        </figcaption>
      </figure>
      <nav class="tree" id="map-list" aria-label="Branch map as a list">
        <LaneList lanes={layout.lanes} storyId={storyId} />
      </nav>
    </section>
  );
}

/** The map as an SVG laid out by `geometry`, scaled to the column's width by its viewBox. */
function MapDrawing({ nodes, storyId, expand, geometry: g }: { nodes: MapNode[]; storyId: string; expand: string | null; geometry: MapGeometry }) {
  const layout = layoutMap(nodes, { expand, geometry: g });
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const titleId = g.stacked ? "map-title-narrow" : "map-title";
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      class={g.stacked ? "map-svg narrow" : "map-svg wide"}
      width={String(layout.width)}
      height={String(layout.height)}
      viewBox={`0 0 ${layout.width} ${layout.height}`}
      aria-labelledby={titleId}
    >
      <title id={titleId}>{`Map of ${plural(nodes.length, "branch", "branches")}`}</title>
      {g.stacked ? null : (
        <text class="axis" x={String(g.labelLeft)} y="16">
          branch
        </text>
      )}
      <text class="axis" x={String(g.chartLeft)} y="16">
        segment 1
      </text>
      <text class="axis" x={String(g.chartRight)} y="16" text-anchor="end">
        {String(layout.lastSequence)}
      </text>
      {layout.lanes.map((lane) => (lane.fork ? <ForkLine lane={lane} g={g} /> : null))}
      {layout.lanes.map((lane) =>
        lane.kind === "branch" ? (
          <BranchShape lane={lane} parent={byId.get(lane.node.parent_branch_id ?? "")} g={g} />
        ) : (
          <FoldedShape lane={lane} storyId={storyId} g={g} />
        ),
      )}
    </svg>
  );
}

/** From the segment a branch forks from, on the lane holding it, down to the branch's own lane. */
function ForkLine({ lane, g }: { lane: Lane<MapNode>; g: MapGeometry }) {
  const fork = lane.fork!;
  const cls = lane.kind === "folded" ? "fork folded" : "fork";
  return (
    <g class={cls}>
      <path d={`M${fork.x} ${fork.fromY + g.barDy}V${lane.y + g.barDy}H${lane.kind === "branch" ? lane.x0 : fork.x + 12}`} />
      <circle cx={String(fork.x)} cy={String(fork.fromY + g.barDy)} r="3" />
    </g>
  );
}

const nameUnits = (g: MapGeometry, labelX: number) => Math.floor((g.labelRight - labelX) / NAME_UNIT);
const figureUnits = (g: MapGeometry, labelX: number) => Math.floor((g.labelRight - labelX) / FIGURES_UNIT);

function BranchShape({ lane, parent, g }: { lane: BranchLane<MapNode>; parent: MapNode | undefined; g: MapGeometry }) {
  const n = lane.node;
  const bar = lane.y + g.barDy;
  return (
    <a href={readHref(n.id)} class={n.is_main ? "lane main" : "lane"}>
      <title>{describe(n, parent)}</title>
      <rect class="lane-bg" x="0" y={String(lane.y - g.row / 2)} width={String(g.width)} height={String(g.row)} />
      {/* Beside the bar (a wide map), or above it (a phone's): the title, then the figures. */}
      <text class="name" x={String(lane.labelX)} y={String(lane.y - (g.stacked ? 11 : 3))}>
        {clip(n.title, nameUnits(g, lane.labelX))}
      </text>
      <text class="figures" x={String(lane.labelX)} y={String(lane.y + (g.stacked ? 4 : 12))}>
        {clip(figures(n), figureUnits(g, lane.labelX))}
      </text>
      <rect class="bar" x={String(lane.x0)} y={String(bar - 5)} width={String(Math.round((lane.x1 - lane.x0) * 10) / 10)} height="10" rx="2" />
      {n.current_turn ? <circle class="turn" cx={String(lane.x1)} cy={String(bar)} r="5" /> : null}
    </a>
  );
}

function FoldedShape({ lane, storyId, g }: { lane: FoldedLane<MapNode>; storyId: string; g: MapGeometry }) {
  return (
    <a href={storyMapHref(storyId, lane.parent.id)} class="lane folded">
      <title>{`${foldedText(lane)} forking from ${lane.parent.title}: show them`}</title>
      <rect class="lane-bg" x="0" y={String(lane.y - g.row / 2)} width={String(g.width)} height={String(g.row)} />
      {g.stacked ? (
        // Beside its circle, on the side with room for it.
        <text
          class="name"
          x={String(lane.fork.x + 12 > g.width / 2 ? lane.fork.x + 2 : lane.fork.x + 22)}
          y={String(lane.y + g.barDy + 5)}
          text-anchor={lane.fork.x + 12 > g.width / 2 ? "end" : undefined}
        >
          {foldedText(lane)}
        </text>
      ) : (
        <text class="name" x={String(lane.labelX)} y={String(lane.y + 5)}>
          {foldedText(lane)}
        </text>
      )}
      <circle class="more" cx={String(lane.fork.x + 12)} cy={String(lane.y + g.barDy)} r="5" />
    </a>
  );
}

/** The lanes (in map order, each with its depth) as nested lists. */
function LaneList({ lanes, storyId }: { lanes: Lane<MapNode>[]; storyId: string }) {
  const items: { lane: Lane<MapNode>; rest: Lane<MapNode>[] }[] = [];
  for (const lane of lanes) {
    const last = items.at(-1);
    if (last && lane.depth > last.lane.depth) last.rest.push(lane);
    else items.push({ lane, rest: [] });
  }
  return (
    <ul>
      {items.map(({ lane, rest }) => (
        <li>
          {lane.kind === "branch" ? (
            <>
              <a href={readHref(lane.node.id)}>{lane.node.title}</a>{" "}
              {lane.node.is_main ? (
                <>
                  <span class="badge">main line</span>{" "}
                </>
              ) : null}
              <span class="meta">· {figures(lane.node)}</span>
            </>
          ) : (
            <>
              <a href={storyMapHref(storyId, lane.parent.id)}>{foldedText(lane)}</a> <span class="meta">forking from {lane.parent.title}</span>
            </>
          )}
          {rest.length ? <LaneList lanes={rest} storyId={storyId} /> : null}
        </li>
      ))}
    </ul>
  );
}
