// Level of detail: which groups are open for a view, and the scene that
// results (visible nodes and group aggregates, links aggregated between them).
// Pure and allocation-light: it runs on every pause of the camera.
//
// Items are numbered nodes first, then groups: item < nodeCount is a node,
// otherwise the group item - nodeCount, drawn as one aggregated marker.

import type { MapModel } from "./model";

/** A rectangle in layout units (y grows downwards) and the current scale. */
export interface View {
  readonly x0: number;
  readonly y0: number;
  readonly x1: number;
  readonly y1: number;
  /** Screen pixels per layout unit. */
  readonly pxPerUnit: number;
}

export interface LodOptions {
  /** Most elements (markers + links + group frames) drawn at once. */
  readonly budget: number;
  /** A group opens once its box is at least this wide on screen. */
  readonly openPx: number;
  /** Extra room around the view, as a fraction of its size, kept drawn for panning. */
  readonly margin: number;
  /** Groups the person opened (their ancestors are opened with them). */
  readonly pinned: ReadonlySet<number>;
}

export const DEFAULT_LOD: LodOptions = { budget: 3000, openPx: 56, margin: 0.25, pinned: new Set() };

/** Per-link values folded into the aggregated edges (max over the links of an edge). */
export interface LinkFolds {
  /** Utilisation 0..1, NaN where unknown. */
  readonly utilisation?: Float32Array | null;
  /** A mark rank (diff class …), -1 where none. */
  readonly mark?: Int8Array | null;
  /** 1 on the links of the highlighted path. */
  readonly path?: Uint8Array | null;
  /** 1 on links marked failed (a what-if). */
  readonly failed?: Uint8Array | null;
  /** 1 on the links picked on the map. */
  readonly selected?: Uint8Array | null;
}

export interface SceneEdge {
  readonly a: number;
  readonly b: number;
  count: number;
  gbps: number;
  /** 0 up, 1 degraded, 2 down: the worst link inside. */
  severity: number;
  utilisation: number;
  mark: number;
  path: boolean;
  /** Some link inside is marked failed. */
  failed: boolean;
  /** Some link inside is the picked one. */
  selected: boolean;
  /** One of its links, for tooltips and details. */
  readonly firstLink: number;
}

export interface SceneCounts {
  readonly nodes: number;
  readonly edges: number;
  readonly frames: number;
  readonly total: number;
}

export interface Scene {
  /** Visible items: node indices, or nodeCount + group index for aggregates. */
  readonly items: Int32Array;
  readonly edges: readonly SceneEdge[];
  /** Open groups in view: drawn as outlined boxes. */
  readonly frames: Int32Array;
  /** Closed groups in view drawn as aggregates (a subset of items, as group indices). */
  readonly open: Uint8Array;
  /** Representative item of each node. */
  readonly rep: Int32Array;
  /** Worst state of the links inside each closed group (0 when open). */
  readonly innerSeverity: Uint8Array;
  readonly counts: SceneCounts;
  /** The opening threshold (px) that met the budget. */
  readonly openPx: number;
  readonly overBudget: boolean;
}

export function isGroupItem(model: MapModel, item: number): boolean {
  return item >= model.nodeCount;
}

function intersects(model: MapModel, group: number, x0: number, y0: number, x1: number, y1: number): boolean {
  const gx = model.groupX[group] as number;
  const gy = model.groupY[group] as number;
  return gx <= x1 && gy <= y1 && gx + (model.groupW[group] as number) >= x0 && gy + (model.groupH[group] as number) >= y0;
}

function withMargin(view: View, margin: number): [number, number, number, number] {
  const mx = (view.x1 - view.x0) * margin;
  const my = (view.y1 - view.y0) * margin;
  return [view.x0 - mx, view.y0 - my, view.x1 + mx, view.y1 + my];
}

/**
 * The width that must reach the threshold on screen for a group to open: its
 * box, or for a row of switches (a "tier" group) the gap between two of them,
 * since a row fans out into many links as soon as it opens.
 */
export function openWidth(model: MapModel, group: number): number {
  const width = model.groupW[group] as number;
  return model.groupKind[group] === "tier" ? width / Math.max(1, model.groupNodes[group] as number) : width;
}

/** Open groups for one threshold: in view, wide enough on screen, parents open; pinned ones always. */
export function openGroups(model: MapModel, view: View, openPx: number, options: LodOptions): Uint8Array {
  const [x0, y0, x1, y1] = withMargin(view, options.margin);
  const open = new Uint8Array(model.groupCount);
  for (let g = 0; g < model.groupCount; g += 1) {
    const parent = model.groupParent[g] as number;
    if (parent >= 0 && open[parent] === 0) {
      continue;
    }
    if (
      options.pinned.has(g) ||
      (openWidth(model, g) * view.pxPerUnit >= openPx && intersects(model, g, x0, y0, x1, y1))
    ) {
      open[g] = 1;
    }
  }
  return open;
}

/** Representative item of every node under a set of open groups. */
export function representatives(model: MapModel, open: Uint8Array): Int32Array {
  const groupRep = new Int32Array(model.groupCount);
  for (let g = 0; g < model.groupCount; g += 1) {
    const parent = model.groupParent[g] as number;
    const above = parent >= 0 ? (groupRep[parent] as number) : -1;
    groupRep[g] = above >= 0 ? above : open[g] === 1 ? -1 : g;
  }
  const rep = new Int32Array(model.nodeCount);
  for (let n = 0; n < model.nodeCount; n += 1) {
    const group = model.nodeGroup[n] as number;
    const closed = group >= 0 ? (groupRep[group] as number) : -1;
    rep[n] = closed >= 0 ? model.nodeCount + closed : n;
  }
  return rep;
}

/** The scene for a given set of open groups. */
export function buildScene(
  model: MapModel,
  view: View,
  open: Uint8Array,
  options: Pick<LodOptions, "margin">,
  folds: LinkFolds = {},
  openPx = 0,
  budget = Infinity,
): Scene {
  const n = model.nodeCount;
  const [x0, y0, x1, y1] = withMargin(view, options.margin);
  const rep = representatives(model, open);
  const itemCount = n + model.groupCount;
  // 1: is a representative in view; 2: pulled in as the far end of a visible edge.
  const shown = new Uint8Array(itemCount);
  const isRep = new Uint8Array(itemCount);
  for (let node = 0; node < n; node += 1) {
    isRep[rep[node] as number] = 1;
  }
  for (let node = 0; node < n; node += 1) {
    if (rep[node] === node) {
      const x = model.nodeX[node] as number;
      const y = model.nodeY[node] as number;
      if (x >= x0 && x <= x1 && y >= y0 && y <= y1) {
        shown[node] = 1;
      }
    }
  }
  const frames: number[] = [];
  for (let g = 0; g < model.groupCount; g += 1) {
    if (!intersects(model, g, x0, y0, x1, y1)) {
      continue;
    }
    if (isRep[n + g] === 1) {
      shown[n + g] = 1;
    } else if (open[g] === 1) {
      frames.push(g);
    }
  }

  const innerSeverity = new Uint8Array(model.groupCount);
  const edges: SceneEdge[] = [];
  const byPair = new Map<number, number>();
  const { utilisation, mark, path, failed, selected } = folds;
  for (let link = 0; link < model.linkCount; link += 1) {
    const ra = rep[model.linkA[link] as number] as number;
    const rb = rep[model.linkB[link] as number] as number;
    const severity = model.linkSeverity[link] as number;
    if (ra === rb) {
      if (ra >= n && severity > (innerSeverity[ra - n] as number)) {
        innerSeverity[ra - n] = severity;
      }
      continue;
    }
    if (shown[ra] !== 1 && shown[rb] !== 1) {
      continue;
    }
    const [low, high] = ra < rb ? [ra, rb] : [rb, ra];
    const key = low * itemCount + high;
    let index = byPair.get(key);
    if (index === undefined) {
      index = edges.length;
      byPair.set(key, index);
      edges.push({ a: low, b: high, count: 0, gbps: 0, severity: 0, utilisation: NaN, mark: -1, path: false, failed: false, selected: false, firstLink: link });
    }
    const edge = edges[index] as SceneEdge;
    edge.count += 1;
    edge.gbps += model.linkGbps[link] as number;
    if (severity > edge.severity) {
      edge.severity = severity;
    }
    if (utilisation) {
      const value = utilisation[link] as number;
      if (!Number.isNaN(value) && !(value <= edge.utilisation)) {
        edge.utilisation = value;
      }
    }
    if (mark && (mark[link] as number) > edge.mark) {
      edge.mark = mark[link] as number;
    }
    if (path && path[link] === 1) {
      edge.path = true;
    }
    if (failed && failed[link] === 1) {
      edge.failed = true;
    }
    if (selected && selected[link] === 1) {
      edge.selected = true;
    }
  }
  const items: number[] = [];
  for (const edge of edges) {
    if (shown[edge.a] === 0) {
      shown[edge.a] = 2;
    }
    if (shown[edge.b] === 0) {
      shown[edge.b] = 2;
    }
  }
  for (let item = 0; item < itemCount; item += 1) {
    if (shown[item] !== 0) {
      items.push(item);
    }
  }
  const total = items.length + edges.length + frames.length;
  return {
    items: Int32Array.from(items),
    edges,
    frames: Int32Array.from(frames),
    open,
    rep,
    innerSeverity,
    counts: { nodes: items.length, edges: edges.length, frames: frames.length, total },
    openPx,
    overBudget: total > budget,
  };
}

/**
 * The most detailed scene within the budget: open every group that is wide
 * enough on screen, and raise the width needed until the scene fits (at worst
 * every group closed but the pinned ones).
 */
export function selectScene(model: MapModel, view: View, options: LodOptions, folds: LinkFolds = {}): Scene {
  let threshold = options.openPx;
  for (let attempt = 0; attempt < 14; attempt += 1) {
    const open = openGroups(model, view, threshold, options);
    const scene = buildScene(model, view, open, options, folds, threshold, options.budget);
    if (!scene.overBudget) {
      return scene;
    }
    threshold *= 1.7;
  }
  const open = openGroups(model, view, Infinity, options);
  return buildScene(model, view, open, options, folds, Infinity, options.budget);
}

/** Every node and link, no aggregation: the naive baseline the benchmark compares with. */
export function fullScene(model: MapModel, folds: LinkFolds = {}): Scene {
  const open = new Uint8Array(model.groupCount).fill(1);
  const huge = 1e12;
  return buildScene(model, { x0: -huge, y0: -huge, x1: huge, y1: huge, pxPerUnit: 1 }, open, { margin: 0 }, folds);
}

/** Groups to pin so that a node shows on its own: all its ancestors. */
export function pinsForNode(model: MapModel, node: number): number[] {
  const pins: number[] = [];
  for (let g = model.nodeGroup[node] ?? -1; g >= 0; g = model.groupParent[g] ?? -1) {
    pins.push(g);
  }
  return pins;
}

/** Groups to pin so that a group opens: itself and its ancestors. */
export function pinsForGroup(model: MapModel, group: number): number[] {
  const pins: number[] = [];
  for (let g = group; g >= 0; g = model.groupParent[g] ?? -1) {
    pins.push(g);
  }
  return pins;
}
