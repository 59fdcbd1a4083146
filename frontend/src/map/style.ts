// From a scene and the map's state to what is drawn: colour, size and label
// of every marker and link. Shared by the WebGL renderer and the SVG export,
// so that the two cannot disagree.

import type { Scene } from "./lod";
import type { MapModel } from "./model";
import {
  DIFF_COLOURS,
  FAILED_LINK_COLOUR,
  diffClassOfRank,
  nodeMarkColour,
  nodeMarkPriority,
  utilisationColour,
  type Overlays,
  type UtilisationThresholds,
} from "./overlay";

export const NODE_COLOURS: Readonly<Record<string, string>> = {
  core: "#7c3aed",
  spine: "#2563eb",
  leaf: "#0891b2",
  card: "#16a34a",
  nic: "#ca8a04",
  host: "#db2777",
  aggregation: "#854d0e",
  other: "#94a3b8",
};

export const GROUP_COLOURS: Readonly<Record<string, string>> = {
  domain: "#334155",
  block: "#1e293b",
  pod: "#475569",
  leaf: "#0e7490",
  tier: "#6d28d9",
  unattached: "#94a3b8",
};

// Degraded (Okabe and Ito's light orange) and down (a dark red) differ in lightness, not only in
// hue, so they stay apart for every colour-vision deficiency and in grey (style.test.ts).
export const LINK_COLOURS = { up: "#94a3b8", degraded: "#e69f00", down: "#a50f15" } as const;
const SEVERITY_COLOURS = [LINK_COLOURS.up, LINK_COLOURS.degraded, LINK_COLOURS.down] as const;
export const FAULT_INSIDE_COLOUR = LINK_COLOURS.down;
// Blue, far from the orange of a degraded link and the red of a down one (everything else is dimmed).
export const PATH_COLOUR = "#0072b2";
export const SELECTED_COLOUR = "#e11d48";
export const DIMMED_COLOUR = "#e2e8f0";
// Switches and other nodes while cards are coloured by hops: grey, present but out of the way.
export const NO_HOPS_COLOUR = "#94a3b8";

export interface MapState {
  readonly overlays: Overlays;
  /** Highlighted path: node indices and link indices (link folds carry it into edges). */
  readonly pathNodes: ReadonlySet<number>;
  /** Search result / clicked node. */
  readonly selected: number | null;
  /** First card picked in path mode. */
  readonly pathStart: number | null;
  /** Which overlay colours the links: the diff classes win over utilisation when both are set. */
  readonly linkOverlay: "none" | "utilisation" | "diff";
  /** Banded utilisation colours (setUtilisationThresholds); null or absent: the gradient. */
  readonly thresholds?: UtilisationThresholds | null;
  /** Cards coloured by their hops from a source card (hops.ts); null or absent: none. */
  readonly hops?: HopShading | null;
}

export interface HopShading {
  readonly source: number;
  /** Per node, UNREACHABLE where no path is up. */
  readonly values: Int16Array;
  /** Colour of each hop count (UNREACHABLE included when some card is). */
  readonly colours: ReadonlyMap<number, string>;
}

const NO_CARD = 0x7fff;

export interface StyledNode {
  readonly item: number;
  readonly x: number;
  readonly y: number;
  readonly size: number;
  readonly color: string;
  readonly label: string;
  readonly zIndex: number;
  readonly highlighted: boolean;
  readonly group: boolean;
}

export interface StyledEdge {
  readonly a: number;
  readonly b: number;
  readonly size: number;
  readonly color: string;
  readonly zIndex: number;
}

export interface StyledScene {
  readonly nodes: readonly StyledNode[];
  readonly edges: readonly StyledEdge[];
}

/** Colour category of a node: its tier for switches, else its kind. */
export function nodeCategory(model: MapModel, node: number): string {
  const kind = model.nodeKind[node] ?? "other";
  if (kind === "switch") {
    return model.nodeTier[node] ?? "leaf";
  }
  return kind in NODE_COLOURS ? kind : "other";
}

function nodeSize(category: string): number {
  switch (category) {
    case "core":
    case "spine":
      return 4;
    case "leaf":
      return 3.5;
    default:
      return 2.5;
  }
}

/** Marker radius of an aggregate: grows with the square root of its nodes. */
export function groupSize(nodes: number): number {
  return Math.min(18, 4 + Math.sqrt(nodes) * 0.35);
}

export function groupLabel(model: MapModel, group: number): string {
  return `${model.groupLabel[group] ?? ""} (${model.groupNodes[group] ?? 0})`;
}

export function styleScene(model: MapModel, scene: Scene, state: MapState): StyledScene {
  const n = model.nodeCount;
  const { overlays } = state;
  const pathActive = state.pathNodes.size > 0;
  // Folds of node overlays into the aggregates that hide them.
  const itemDiff = new Int8Array(n + model.groupCount).fill(-1);
  const itemMark = new Int8Array(n + model.groupCount).fill(-1);
  const itemPath = new Uint8Array(n + model.groupCount);
  const selectedRep = state.selected === null ? -1 : (scene.rep[state.selected] as number);
  const startRep = state.pathStart === null ? -1 : (scene.rep[state.pathStart] as number);
  // A closed group takes the hops of its nearest card: "something in there is 1 hop away".
  const hops = state.hops ?? null;
  const itemHops = hops === null ? null : new Int16Array(n + model.groupCount).fill(NO_CARD);
  if (hops !== null && itemHops !== null) {
    for (let node = 0; node < n; node += 1) {
      if (model.nodeKind[node] !== "card" || node === hops.source) {
        continue;
      }
      const rep = scene.rep[node] as number;
      const value = hops.values[node] as number;
      const current = itemHops[rep] as number;
      // Reachable beats unreachable (-1), nearer beats farther.
      if (current === NO_CARD || (value >= 0 && (current < 0 || value < current))) {
        itemHops[rep] = value;
      }
    }
  }
  if (overlays.nodeDiff || overlays.nodeMark || pathActive) {
    for (let node = 0; node < n; node += 1) {
      const rep = scene.rep[node] as number;
      if (overlays.nodeDiff && (overlays.nodeDiff[node] as number) > (itemDiff[rep] as number)) {
        itemDiff[rep] = overlays.nodeDiff[node] as number;
      }
      if (overlays.nodeMark && nodeMarkPriority(overlays.nodeMark[node] as number) > nodeMarkPriority(itemMark[rep] as number)) {
        itemMark[rep] = overlays.nodeMark[node] as number;
      }
      if (pathActive && state.pathNodes.has(node)) {
        itemPath[rep] = 1;
      }
    }
  }

  const nodes: StyledNode[] = [];
  for (const item of scene.items) {
    const group = item >= n;
    let x: number;
    let y: number;
    let size: number;
    let color: string;
    let label: string;
    if (group) {
      const g = item - n;
      x = (model.groupX[g] as number) + (model.groupW[g] as number) / 2;
      y = (model.groupY[g] as number) + (model.groupH[g] as number) / 2;
      size = groupSize(model.groupNodes[g] as number);
      const inner = scene.innerSeverity[g] as number;
      color = inner > 0 ? SEVERITY_COLOURS[inner] ?? FAULT_INSIDE_COLOUR : GROUP_COLOURS[model.groupKind[g] ?? ""] ?? "#475569";
      label = groupLabel(model, g);
    } else {
      x = model.nodeX[item] as number;
      y = model.nodeY[item] as number;
      const category = nodeCategory(model, item);
      size = nodeSize(category);
      color = NODE_COLOURS[category] ?? NODE_COLOURS["other"]!;
      label = model.nodeName[item] ?? "";
    }
    let zIndex = group ? 1 : 0;
    if (hops !== null && itemHops !== null) {
      const value = itemHops[item] as number;
      const shade = value === NO_CARD ? undefined : hops.colours.get(value);
      color = shade ?? NO_HOPS_COLOUR;
      size += shade === undefined ? 0 : 1.5;
    }
    const diffClass = diffClassOfRank(itemDiff[item] as number);
    if (state.linkOverlay === "diff" && overlays.nodeDiff) {
      color = diffClass === null ? DIMMED_COLOUR : DIFF_COLOURS[diffClass];
      zIndex = diffClass === null ? 0 : 2;
    }
    const mark = itemMark[item] as number;
    if (mark >= 0) {
      color = nodeMarkColour(mark);
      zIndex = 2;
      size += 1;
    }
    let highlighted = false;
    if (pathActive) {
      if (itemPath[item] === 1) {
        color = PATH_COLOUR;
        size += 2;
        zIndex = 3;
        highlighted = true;
      } else if (mark < 0) {
        color = DIMMED_COLOUR;
      }
    }
    if (item === selectedRep || item === startRep) {
      color = SELECTED_COLOUR;
      size += 3;
      zIndex = 4;
      highlighted = true;
    }
    nodes.push({ item, x, y, size, color, label, zIndex, highlighted, group });
  }

  const edges: StyledEdge[] = scene.edges.map((edge) => {
    let color: string = SEVERITY_COLOURS[edge.severity] ?? LINK_COLOURS.up;
    let size = Math.min(6, 0.6 + Math.log2(edge.count) * 0.6);
    let zIndex = edge.severity;
    if (state.linkOverlay === "diff" && overlays.linkDiff) {
      const diffClass = diffClassOfRank(edge.mark);
      color = diffClass === null ? DIMMED_COLOUR : DIFF_COLOURS[diffClass];
      zIndex = diffClass === null ? 0 : 3;
      size += diffClass === null ? 0 : 1;
    } else if (state.linkOverlay === "utilisation" && overlays.utilisation) {
      const heat = utilisationColour(edge.utilisation, state.thresholds);
      color = heat ?? DIMMED_COLOUR;
      zIndex = heat === null ? 0 : 1 + Math.round(edge.utilisation * 2);
    }
    if (pathActive) {
      if (edge.path) {
        color = PATH_COLOUR;
        size += 2;
        zIndex = 5;
      } else {
        color = DIMMED_COLOUR;
        zIndex = 0;
      }
    }
    if (edge.failed) {
      color = FAILED_LINK_COLOUR;
      size += 2;
      zIndex = 6;
    }
    // The picked link wins over every overlay: the details panel is about it.
    if (edge.selected) {
      color = SELECTED_COLOUR;
      size += 3;
      zIndex = 7;
    }
    return { a: edge.a, b: edge.b, size, color, zIndex };
  });
  return { nodes, edges };
}
