// Picking a link on the map: which drawn edge a click landed on (within a few
// pixels of its line, so that a 1-2 px link can be hit), which layout links
// that edge carries (one, parallel cables, or every link between two closed
// groups at a coarse level of detail) and their summary for the details panel.
// Pure: the map passes screen positions and the scene's representatives.

import type { MapModel } from "./model";

/** Screen distance (CSS px) within which a click picks a link. */
export const LINK_PICK_PX = 6;

export interface ScreenPoint {
  readonly x: number;
  readonly y: number;
}

/** Distance from p to the segment a-b. */
export function segmentDistance(p: ScreenPoint, a: ScreenPoint, b: ScreenPoint): number {
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const length2 = dx * dx + dy * dy;
  const along = length2 === 0 ? 0 : Math.max(0, Math.min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length2));
  return Math.hypot(p.x - (a.x + along * dx), p.y - (a.y + along * dy));
}

/** Edges closer than this to each other at the click are one line on screen. */
const SAME_LINE_PX = 1;

/**
 * Index of the edge nearest to `point` within `tolerance` px, or -1; `screenOf` maps an item to its
 * screen position. Of edges drawn over one another (a column of NICs under their leaf), the shortest
 * wins: the click is on the one that ends nearest.
 */
export function nearestEdge(
  edges: readonly { readonly a: number; readonly b: number }[],
  screenOf: (item: number) => ScreenPoint | undefined,
  point: ScreenPoint,
  tolerance = LINK_PICK_PX,
): number {
  let best = -1;
  let bestDistance = Infinity;
  let bestLength = Infinity;
  edges.forEach((edge, index) => {
    const a = screenOf(edge.a);
    const b = screenOf(edge.b);
    if (a === undefined || b === undefined) {
      return;
    }
    const distance = segmentDistance(point, a, b);
    const length = Math.hypot(b.x - a.x, b.y - a.y);
    if (distance > tolerance) {
      return;
    }
    const sameLine = Math.abs(distance - bestDistance) <= SAME_LINE_PX;
    if ((sameLine && length < bestLength) || (!sameLine && distance < bestDistance)) {
      best = index;
      bestDistance = distance;
      bestLength = length;
    }
  });
  return best;
}

/** The layout links an edge between items `a` and `b` stands for, given each node's representative item. */
export function linksOfEdge(model: MapModel, rep: Int32Array, a: number, b: number): number[] {
  const links: number[] = [];
  for (let link = 0; link < model.linkCount; link += 1) {
    const ra = rep[model.linkA[link] as number];
    const rb = rep[model.linkB[link] as number];
    if ((ra === a && rb === b) || (ra === b && rb === a)) {
      links.push(link);
    }
  }
  return links;
}

/** Every link joining the two ends of `link` (parallel cables included), in layout order. */
export function parallelLinks(model: MapModel, link: number): number[] {
  const a = model.linkA[link] as number;
  const b = model.linkB[link] as number;
  return model.linksOfNode(a).filter((other) => {
    const oa = model.linkA[other];
    const ob = model.linkB[other];
    return (oa === a && ob === b) || (oa === b && ob === a);
  });
}

export interface LinkSummary {
  readonly links: number;
  readonly up: number;
  readonly degraded: number;
  readonly down: number;
  readonly gbps: number;
  /** Highest utilisation 0..1 among the links with a value; null when none has one. */
  readonly utilisation: number | null;
}

export function summariseLinks(model: MapModel, links: readonly number[], utilisation: Float32Array | null): LinkSummary {
  const counts = [0, 0, 0];
  let gbps = 0;
  let highest: number | null = null;
  for (const link of links) {
    const severity = model.linkSeverity[link] as number;
    counts[severity] = (counts[severity] as number) + 1;
    gbps += model.linkGbps[link] as number;
    const value = utilisation?.[link];
    if (value !== undefined && !Number.isNaN(value) && (highest === null || value > highest)) {
      highest = value;
    }
  }
  return { links: links.length, up: counts[0] as number, degraded: counts[1] as number, down: counts[2] as number, gbps, utilisation: highest };
}

/** 1 on the given links: the fold that highlights the selection in whatever edge carries it. */
export function linkMask(model: MapModel, links: readonly number[]): Uint8Array {
  const mask = new Uint8Array(model.linkCount);
  for (const link of links) {
    mask[link] = 1;
  }
  return mask;
}
