// The switch views under the replay player and live telemetry, pure parts: the
// switch x port heatmap's rows and columns from the map's layout and the leaf
// uplink strip (utilisationCharts.ts draws them). No DOM access.

import type { MapModel } from "../map/model";

/** The part of the layout these views read. */
export type SwitchLayout = Pick<
  MapModel,
  "nodeCount" | "nodeId" | "nodeName" | "nodeKind" | "nodeTier" | "nodeX" | "nodeY" | "linkCount" | "linkA" | "linkB"
>;

/** Row order of the tiers: the higher tiers first, leaves after them, switches without a tier last. */
const TIER_ORDER: Readonly<Record<string, number>> = { core: 0, spine: 1, leaf: 2 };
/** How high a tier sits; an uplink goes to a higher one. */
const TIER_LEVEL: Readonly<Record<string, number>> = { leaf: 1, spine: 2, core: 3 };

export function isSwitch(layout: SwitchLayout, node: number): boolean {
  return layout.nodeKind[node] === "switch" || (layout.nodeTier[node] ?? null) !== null;
}

function tierRank(tier: string | null | undefined): number {
  return TIER_ORDER[tier ?? ""] ?? 3;
}

/** Nodes ordered like the map within a row: left to right, then top to bottom. */
function byPosition(layout: SwitchLayout): (a: number, b: number) => number {
  return (a, b) =>
    (layout.nodeX[a] as number) - (layout.nodeX[b] as number) || (layout.nodeY[a] as number) - (layout.nodeY[b] as number) || a - b;
}

/** The layout links at each node, in layout link order (a switch's ports). */
export function linksPerNode(layout: SwitchLayout): number[][] {
  const out: number[][] = Array.from({ length: layout.nodeCount }, () => []);
  for (let link = 0; link < layout.linkCount; link += 1) {
    const a = layout.linkA[link] as number;
    const b = layout.linkB[link] as number;
    out[a]?.push(link);
    if (b !== a) {
      out[b]?.push(link);
    }
  }
  return out;
}

export interface PortHeatmap {
  readonly rows: number;
  /** The widest switch's port count. */
  readonly cols: number;
  /** The switch (node index) of each row. */
  readonly rowNode: Int32Array;
  /** rows x cols, row-major: the layout link of each cell, -1 past the switch's last port. */
  readonly cellLink: Int32Array;
  /** Where each tier's rows start, in row order. */
  readonly tierStarts: readonly { readonly tier: string | null; readonly row: number }[];
}

/** Rows: switches by tier (cores, spines, then leaves, then others), like the map within a tier; columns: their ports. */
export function buildPortHeatmap(layout: SwitchLayout, ports: number[][] = linksPerNode(layout)): PortHeatmap {
  const position = byPosition(layout);
  const switches: number[] = [];
  for (let node = 0; node < layout.nodeCount; node += 1) {
    if (isSwitch(layout, node)) {
      switches.push(node);
    }
  }
  switches.sort((a, b) => tierRank(layout.nodeTier[a]) - tierRank(layout.nodeTier[b]) || position(a, b));
  const rows = switches.length;
  const cols = switches.reduce((widest, node) => Math.max(widest, ports[node]?.length ?? 0), 0);
  const cellLink = new Int32Array(rows * cols).fill(-1);
  const tierStarts: { tier: string | null; row: number }[] = [];
  switches.forEach((node, row) => {
    const tier = layout.nodeTier[node] ?? null;
    if (tierStarts.length === 0 || tierStarts[tierStarts.length - 1]?.tier !== tier) {
      tierStarts.push({ tier, row });
    }
    (ports[node] ?? []).forEach((link, col) => {
      cellLink[row * cols + col] = link;
    });
  });
  return { rows, cols, rowNode: Int32Array.from(switches), cellLink, tierStarts };
}

export interface PortCell {
  readonly node: number;
  /** 0-based port: the column. */
  readonly port: number;
  readonly link: number;
  /** The node at the link's other end. */
  readonly peer: number;
}

/** The cell at (col, row), or null outside the grid or past the switch's last port. */
export function portCellAt(layout: SwitchLayout, heatmap: PortHeatmap, col: number, row: number): PortCell | null {
  if (!Number.isInteger(col) || !Number.isInteger(row) || col < 0 || row < 0 || col >= heatmap.cols || row >= heatmap.rows) {
    return null;
  }
  const link = heatmap.cellLink[row * heatmap.cols + col] as number;
  if (link < 0) {
    return null;
  }
  const node = heatmap.rowNode[row] as number;
  const a = layout.linkA[link] as number;
  return { node, port: col, link, peer: a === node ? (layout.linkB[link] as number) : a };
}

// ---- leaf uplink strip --------------------------------------------------

export interface UplinkStrip {
  /** Leaf switches (node indices), ordered like the map: left to right. */
  readonly leaves: Int32Array;
  /** CSR: the uplinks of leaf i are links[offsets[i] .. offsets[i + 1]). */
  readonly offsets: Int32Array;
  readonly links: Int32Array;
}

/** Each leaf's links to switches of a higher tier (spine, core). */
export function buildUplinkStrip(layout: SwitchLayout, ports: number[][] = linksPerNode(layout)): UplinkStrip {
  const leaves: number[] = [];
  for (let node = 0; node < layout.nodeCount; node += 1) {
    if (layout.nodeTier[node] === "leaf") {
      leaves.push(node);
    }
  }
  leaves.sort(byPosition(layout));
  const offsets = new Int32Array(leaves.length + 1);
  const links: number[] = [];
  leaves.forEach((leaf, i) => {
    for (const link of ports[leaf] ?? []) {
      const a = layout.linkA[link] as number;
      const peer = a === leaf ? (layout.linkB[link] as number) : a;
      if ((TIER_LEVEL[layout.nodeTier[peer] ?? ""] ?? 0) > TIER_LEVEL["leaf"]!) {
        links.push(link);
      }
    }
    offsets[i + 1] = links.length;
  });
  return { leaves: Int32Array.from(leaves), offsets, links: Int32Array.from(links) };
}

/** Per leaf, the highest utilisation of its uplinks; NaN for a leaf without an uplink or without values. */
export function uplinkLoads(
  strip: UplinkStrip,
  utilisation: ArrayLike<number>,
  out: Float32Array = new Float32Array(strip.leaves.length),
): Float32Array {
  for (let i = 0; i < strip.leaves.length; i += 1) {
    let max = Number.NaN;
    for (let k = strip.offsets[i] as number; k < (strip.offsets[i + 1] as number); k += 1) {
      const value = utilisation[strip.links[k] as number] ?? Number.NaN;
      if (!Number.isNaN(value) && !(value <= max)) {
        max = value;
      }
    }
    out[i] = max;
  }
  return out;
}
