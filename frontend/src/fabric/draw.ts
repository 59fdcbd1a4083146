// Paints a laid-out graph on a 2D canvas. Nodes are drawn one colour at a
// time, so the fill style changes a handful of times, not per node.

import type { FabricGraph, LinkState } from "./graph";
import { LAYOUT_MARGIN, type LayoutRow, type RowKind, type TierLayout } from "./layout";
import { LINK_STATES_BOTTOM_UP, LINK_STYLES, NODE_COLOURS, nodeCategory, type NodeCategory } from "./palette";

/** The canvas calls the renderer makes; a narrow seam so tests can record them. */
export type DrawingContext = Pick<
  CanvasRenderingContext2D,
  | "setTransform"
  | "clearRect"
  | "beginPath"
  | "moveTo"
  | "lineTo"
  | "quadraticCurveTo"
  | "stroke"
  | "fillRect"
  | "fillText"
  | "strokeStyle"
  | "fillStyle"
  | "lineWidth"
  | "font"
  | "textBaseline"
>;

export interface DrawOptions {
  /** CSS pixels. */
  readonly width: number;
  readonly height: number;
  readonly pixelRatio: number;
  readonly rowLabel: (row: RowKind) => string;
}

/**
 * Links inside one row (scale-up links between cards) would run along the row,
 * hidden under its markers; they bow below it instead, deeper the farther apart
 * their ends are, up to the layout's bottom margin.
 */
const SAME_ROW_BOW = { maxDepth: LAYOUT_MARGIN.bottom - 4, depthPerPixel: 0.25, minDepth: 3 } as const;

const ROW_LABEL_STYLE = { font: "11px system-ui, sans-serif", colour: "#64748b" } as const;

/** Marker edge in CSS pixels: as large as the row's spacing allows, within bounds. */
export function markerSize(row: LayoutRow): number {
  const [smallest, largest] = row.kind === "endpoint" ? [1.5, 7] : [3, 10];
  return Math.min(largest, Math.max(smallest, row.pitch * 0.8));
}

export function drawFabric(context: DrawingContext, graph: FabricGraph, layout: TierLayout, options: DrawOptions): void {
  const { width, height, pixelRatio } = options;
  context.setTransform(pixelRatio, 0, 0, pixelRatio, 0, 0);
  context.clearRect(0, 0, width, height);

  const linksByState: Record<LinkState, [number, number, number, number][]> = { up: [], degraded: [], down: [] };
  for (const link of graph.links) {
    const a = layout.positions.get(link.a);
    const b = layout.positions.get(link.b);
    if (a !== undefined && b !== undefined) {
      linksByState[link.state].push([a.x, a.y, b.x, b.y]);
    }
  }
  // One stroke per link, not one path per state: a software canvas computes a
  // path's coverage as a whole, and for a path of ~1,500 crossing lines that
  // took 180 ms at 2x density against 26 ms for separate strokes (Chromium,
  // --disable-gpu). Overlaps now blend twice, which only darkens busy areas.
  for (const state of LINK_STATES_BOTTOM_UP) {
    context.strokeStyle = LINK_STYLES[state].colour;
    context.lineWidth = LINK_STYLES[state].width;
    for (const [ax, ay, bx, by] of linksByState[state]) {
      context.beginPath();
      context.moveTo(ax, ay);
      if (ay === by) {
        const depth = Math.min(SAME_ROW_BOW.maxDepth, SAME_ROW_BOW.minDepth + Math.abs(bx - ax) * SAME_ROW_BOW.depthPerPixel);
        // A quadratic curve reaches half-way to its control point.
        context.quadraticCurveTo((ax + bx) / 2, ay + 2 * depth, bx, by);
      } else {
        context.lineTo(bx, by);
      }
      context.stroke();
    }
  }

  const sizeByRow = new Map(layout.rows.map((row) => [row.kind, markerSize(row)]));
  const squaresByCategory = new Map<NodeCategory, [number, number, number][]>();
  for (const node of graph.nodes) {
    const place = layout.positions.get(node.id);
    if (place === undefined) {
      continue;
    }
    const category = nodeCategory(node);
    const squares = squaresByCategory.get(category) ?? [];
    squares.push([place.x, place.y, sizeByRow.get(place.row) ?? 3]);
    squaresByCategory.set(category, squares);
  }
  for (const [category, squares] of squaresByCategory) {
    context.fillStyle = NODE_COLOURS[category];
    for (const [x, y, size] of squares) {
      context.fillRect(x - size / 2, y - size / 2, size, size);
    }
  }

  context.font = ROW_LABEL_STYLE.font;
  context.fillStyle = ROW_LABEL_STYLE.colour;
  context.textBaseline = "bottom";
  for (const row of layout.rows) {
    context.fillText(options.rowLabel(row.kind), 4, row.y - markerSize(row) / 2 - 3);
  }
}
