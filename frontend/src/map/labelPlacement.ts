// Where the map's labels go: the titles of open group frames ("domain-1") and
// the names beside markers ("leaf-17 (33)", "spine-03"), placed greedily in
// order of importance, each in the first of a few spots that overlaps no marker
// and no label placed before it, or left out. Sigma's own label grid keeps one label per
// cell but lets neighbouring cells' labels and the frame titles (drawn on
// another canvas) overlap; one placement for all of them cannot. Pure: the map
// and the SVG export pass screen positions and a text measure.

import type { MapModel } from "./model";
import type { StyledNode } from "./style";

export const LABEL_FONT_PX = 11;
export const TITLE_COLOUR = "#64748b";
export const NAME_COLOUR = "#1f2933";
const LINE_PX = LABEL_FONT_PX + 3;
/** Room kept between two labels, px. */
const GAP_PX = 2;
/** Frame titles are drawn only in boxes at least this big on screen. */
const TITLE_MIN_W = 70;
const TITLE_MIN_H = 16;

export interface Box {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

export interface PlacedLabel extends Box {
  readonly text: string;
  readonly kind: "title" | "marker";
}

/** A place to try: the text starts at x, ends at x, or is centred on x; y is its top. */
interface Spot {
  readonly x: number;
  readonly y: number;
  readonly align: "start" | "end" | "centre";
}

interface Candidate {
  readonly text: string;
  readonly kind: "title" | "marker";
  /** Lower first. */
  readonly priority: number;
  /** Spots to try, in order, and the widest the text may be. */
  readonly spots: readonly Spot[];
  readonly maxWidth: number;
}

export type Measure = (text: string) => number;
export type ToScreen = (x: number, y: number) => { x: number; y: number };

export function boxesOverlap(a: Box, b: Box): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** The labels a scene would like to show: open frames' titles, then markers by importance. */
function candidates(model: MapModel, nodes: readonly StyledNode[], frames: ArrayLike<number>, toScreen: ToScreen, width: number, height: number): Candidate[] {
  const out: Candidate[] = [];
  for (let i = 0; i < frames.length; i += 1) {
    const g = frames[i] as number;
    if (model.groupKind[g] === "tier") {
      continue; // a row of switches: its switches carry the names
    }
    const x = model.groupX[g] as number;
    const y = model.groupY[g] as number;
    const a = toScreen(x, y);
    const b = toScreen(x + (model.groupW[g] as number), y + (model.groupH[g] as number));
    const w = b.x - a.x;
    if (w <= TITLE_MIN_W || b.y - a.y <= TITLE_MIN_H || b.x < 0 || b.y < 0 || a.x > width || a.y > height) {
      continue;
    }
    // Outer boxes first: a domain's title before its pods' and leaves'.
    out.push({ text: model.groupLabel[g] ?? "", kind: "title", priority: 10 + (model.groupDepth[g] ?? 0), spots: [{ x: Math.max(a.x, 0) + 4, y: Math.max(a.y, 0) + 3, align: "start" }], maxWidth: w - 8 });
  }
  for (const node of nodes) {
    if (node.label === "") {
      continue;
    }
    const at = toScreen(node.x, node.y);
    if (at.x < -50 || at.y < -20 || at.x > width + 50 || at.y > height + 20) {
      continue;
    }
    const kind = node.group ? "group" : (model.nodeKind[node.item] ?? "");
    // The selection and a path's nodes, then aggregates, then switches, then the rest.
    const priority = node.highlighted ? 0 : kind === "group" ? 20 : kind === "switch" ? 30 : 40;
    const r = node.size + 2;
    const half = LINE_PX / 2;
    out.push({
      text: node.label,
      kind: "marker",
      priority,
      // Right of the marker, left of it, above, below.
      spots: [
        { x: at.x + r, y: at.y - half, align: "start" },
        { x: at.x - r, y: at.y - half, align: "end" },
        { x: at.x, y: at.y - r - LINE_PX, align: "centre" },
        { x: at.x, y: at.y + r, align: "centre" },
      ],
      maxWidth: Infinity,
    });
  }
  return out;
}

/** A grid of the boxes placed so far, so that each test looks at a few neighbours only. */
class BoxGrid {
  private readonly cells = new Map<number, Box[]>();
  private static readonly CELL = 64;

  private keys(box: Box): number[] {
    const keys: number[] = [];
    const c = BoxGrid.CELL;
    for (let gx = Math.floor(box.x / c); gx <= Math.floor((box.x + box.w) / c); gx += 1) {
      for (let gy = Math.floor(box.y / c); gy <= Math.floor((box.y + box.h) / c); gy += 1) {
        keys.push((gx + 4096) * 8192 + (gy + 4096));
      }
    }
    return keys;
  }

  free(box: Box): boolean {
    return this.keys(box).every((key) => !(this.cells.get(key) ?? []).some((other) => boxesOverlap(box, other)));
  }

  add(box: Box): void {
    for (const key of this.keys(box)) {
      const cell = this.cells.get(key);
      if (cell === undefined) {
        this.cells.set(key, [box]);
      } else {
        cell.push(box);
      }
    }
  }
}

/**
 * Places the scene's labels on a width x height screen: no two placed boxes (each padded by GAP_PX) overlap,
 * none covers a marker, and none runs off the screen.
 * `nodes` are the drawn markers, `frames` the open groups drawn as boxes.
 */
export function placeLabels(
  model: MapModel,
  nodes: readonly StyledNode[],
  frames: ArrayLike<number>,
  toScreen: ToScreen,
  size: { readonly width: number; readonly height: number },
  measure: Measure,
): PlacedLabel[] {
  const wanted = candidates(model, nodes, frames, toScreen, size.width, size.height).sort((a, b) => a.priority - b.priority);
  const grid = new BoxGrid();
  // The markers are in the way too: a name over another marker hides it.
  for (const node of nodes) {
    const at = toScreen(node.x, node.y);
    if (at.x >= -20 && at.y >= -20 && at.x <= size.width + 20 && at.y <= size.height + 20) {
      grid.add({ x: at.x - node.size, y: at.y - node.size, w: 2 * node.size, h: 2 * node.size });
    }
  }
  const placed: PlacedLabel[] = [];
  const widths = new Map<string, number>();
  for (const candidate of wanted) {
    let width = widths.get(candidate.text);
    if (width === undefined) {
      width = measure(candidate.text);
      widths.set(candidate.text, width);
    }
    width = Math.min(width, candidate.maxWidth);
    for (const spot of candidate.spots) {
      const x = spot.align === "start" ? spot.x : spot.align === "end" ? spot.x - width : spot.x - width / 2;
      const box = { x: x - GAP_PX / 2, y: spot.y - GAP_PX / 2, w: width + GAP_PX, h: LINE_PX + GAP_PX };
      const onScreen = x >= 0 && spot.y >= 0 && x + width <= size.width && spot.y + LINE_PX <= size.height;
      if (onScreen && grid.free(box)) {
        grid.add(box);
        placed.push({ text: candidate.text, kind: candidate.kind, x, y: spot.y, w: width, h: LINE_PX });
        break;
      }
    }
  }
  return placed;
}
