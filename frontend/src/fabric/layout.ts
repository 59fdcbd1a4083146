// Deterministic tier layout: one row per switch tier (core on top), endpoints
// (cards, NICs, hosts …) along the bottom, each grouped under its leaf switch.
// Pure: positions depend only on the graph and the size, never on input order.

import type { FabricGraph, FabricNode } from "./graph";

export type RowKind = "core" | "spine" | "leaf" | "endpoint";

/** Top to bottom. */
export const ROW_ORDER: readonly RowKind[] = ["core", "spine", "leaf", "endpoint"];

export interface Placement {
  readonly x: number;
  readonly y: number;
  readonly row: RowKind;
}

export interface LayoutRow {
  readonly kind: RowKind;
  readonly y: number;
  readonly count: number;
  /** Smallest horizontal gap between neighbours in this row; sizes the markers. */
  readonly pitch: number;
}

export interface TierLayout {
  readonly positions: ReadonlyMap<string, Placement>;
  /** Only rows that hold nodes, top to bottom. */
  readonly rows: readonly LayoutRow[];
}

/** Room for the row labels above the top row and for same-row links that bow below the bottom row. */
export const LAYOUT_MARGIN = { top: 28, bottom: 22, side: 14 } as const;

/** Switches without a tier sit with the leaves: they are the lowest switches we know of. */
export function rowOf(node: FabricNode): RowKind {
  return node.kind === "switch" ? (node.tier ?? "leaf") : "endpoint";
}

const naturalOrder = new Intl.Collator("en", { numeric: true });

function compareNodes(left: FabricNode, right: FabricNode): number {
  const byName = naturalOrder.compare(left.name, right.name);
  if (byName !== 0) {
    return byName;
  }
  return left.id < right.id ? -1 : left.id > right.id ? 1 : 0;
}

/**
 * Assigns each endpoint the leaf it hangs from: the nearest leaf-row switch,
 * reached directly or through other endpoints (card -> NIC -> leaf), ties going
 * to the leftmost leaf. Returns endpoint id -> leaf index; absent if no leaf.
 */
function assignEndpointsToLeaves(
  graph: FabricGraph,
  rowById: ReadonlyMap<string, RowKind>,
  leafIndex: ReadonlyMap<string, number>,
): Map<string, number> {
  const endpointNeighbours = new Map<string, string[]>();
  const assigned = new Map<string, number>();
  const addNeighbour = (from: string, to: string): void => {
    const list = endpointNeighbours.get(from);
    if (list === undefined) {
      endpointNeighbours.set(from, [to]);
    } else {
      list.push(to);
    }
  };

  for (const { a, b } of graph.links) {
    const rowA = rowById.get(a);
    const rowB = rowById.get(b);
    if (rowA === "endpoint" && rowB === "endpoint") {
      addNeighbour(a, b);
      addNeighbour(b, a);
      continue;
    }
    const [endpoint, other] = rowA === "endpoint" ? [a, b] : rowB === "endpoint" ? [b, a] : [null, null];
    const leaf = other === null ? undefined : leafIndex.get(other);
    if (endpoint !== null && leaf !== undefined) {
      assigned.set(endpoint, Math.min(leaf, assigned.get(endpoint) ?? leaf));
    }
  }

  // Breadth-first, one distance at a time; taking the minimum leaf index per
  // layer keeps the outcome independent of link order.
  let frontier = [...assigned.keys()];
  while (frontier.length > 0) {
    const reached = new Map<string, number>();
    for (const endpoint of frontier) {
      const leaf = assigned.get(endpoint) as number;
      for (const neighbour of endpointNeighbours.get(endpoint) ?? []) {
        if (!assigned.has(neighbour)) {
          reached.set(neighbour, Math.min(leaf, reached.get(neighbour) ?? leaf));
        }
      }
    }
    for (const [endpoint, leaf] of reached) {
      assigned.set(endpoint, leaf);
    }
    frontier = [...reached.keys()];
  }
  return assigned;
}

function smallestGap(xs: readonly number[], fallback: number): number {
  let gap = fallback;
  for (let i = 1; i < xs.length; i += 1) {
    gap = Math.min(gap, (xs[i] as number) - (xs[i - 1] as number));
  }
  return gap;
}

export function tierLayout(graph: FabricGraph, width: number, height: number): TierLayout {
  const rows = new Map<RowKind, FabricNode[]>(ROW_ORDER.map((kind) => [kind, []]));
  const rowById = new Map<string, RowKind>();
  for (const node of graph.nodes) {
    const row = rowOf(node);
    rows.get(row)?.push(node);
    rowById.set(node.id, row);
  }
  for (const members of rows.values()) {
    members.sort(compareNodes);
  }

  const left = LAYOUT_MARGIN.side;
  const innerWidth = Math.max(0, width - 2 * LAYOUT_MARGIN.side);
  const xs = new Map<string, number>();

  // Switch rows above the leaves are spread evenly.
  for (const kind of ["core", "spine"] as const) {
    const members = rows.get(kind) ?? [];
    members.forEach((node, index) => xs.set(node.id, left + ((index + 0.5) * innerWidth) / members.length));
  }

  // Leaves and endpoints share columns: each leaf owns as many slots as it has
  // endpoints (at least one) and sits over their middle, so every endpoint is
  // directly under its leaf whatever the group sizes.
  const leaves = rows.get("leaf") ?? [];
  const endpoints = rows.get("endpoint") ?? [];
  const leafIndex = new Map(leaves.map((leaf, index) => [leaf.id, index]));
  const leafOfEndpoint = assignEndpointsToLeaves(graph, rowById, leafIndex);
  const groups: FabricNode[][] = leaves.map(() => []);
  const unattached: FabricNode[] = [];
  for (const endpoint of endpoints) {
    const leaf = leafOfEndpoint.get(endpoint.id);
    (leaf === undefined ? unattached : (groups[leaf] as FabricNode[])).push(endpoint);
  }

  const slotCount = groups.reduce((sum, group) => sum + Math.max(1, group.length), 0) + unattached.length;
  const slotWidth = slotCount > 0 ? innerWidth / slotCount : 0;
  let slot = 0;
  leaves.forEach((leaf, index) => {
    const group = groups[index] as FabricNode[];
    const span = Math.max(1, group.length);
    xs.set(leaf.id, left + (slot + span / 2) * slotWidth);
    group.forEach((endpoint, offset) => xs.set(endpoint.id, left + (slot + offset + 0.5) * slotWidth));
    slot += span;
  });
  unattached.forEach((endpoint, offset) => xs.set(endpoint.id, left + (slot + offset + 0.5) * slotWidth));

  const orderedEndpoints = [...groups.flat(), ...unattached];
  const membersInDrawOrder: Record<RowKind, readonly FabricNode[]> = {
    core: rows.get("core") ?? [],
    spine: rows.get("spine") ?? [],
    leaf: leaves,
    endpoint: orderedEndpoints,
  };

  const filledRows = ROW_ORDER.filter((kind) => membersInDrawOrder[kind].length > 0);
  const top = LAYOUT_MARGIN.top;
  const innerHeight = Math.max(0, height - LAYOUT_MARGIN.top - LAYOUT_MARGIN.bottom);
  const rowGap = filledRows.length > 1 ? innerHeight / (filledRows.length - 1) : 0;

  const positions = new Map<string, Placement>();
  const layoutRows = filledRows.map((kind, index): LayoutRow => {
    const y = filledRows.length > 1 ? top + index * rowGap : top + innerHeight / 2;
    const members = membersInDrawOrder[kind];
    const rowXs = members.map((node) => xs.get(node.id) as number);
    members.forEach((node, i) => positions.set(node.id, { x: rowXs[i] as number, y, row: kind }));
    return { kind, y, count: members.length, pitch: smallestGap(rowXs, innerWidth) };
  });

  return { positions, rows: layoutRows };
}
