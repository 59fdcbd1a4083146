// Colours shared by the canvas and its legend, so the two cannot disagree.

import type { FabricNode, LinkState, NodeKind, SwitchTier } from "./graph";

/** Switch tiers, the tierless "switch", endpoint kinds, and "other" for kinds this build does not know. */
export type NodeCategory = SwitchTier | NodeKind | "other";

/** Legend order: switches top-down, then endpoints. */
export const NODE_CATEGORIES: readonly NodeCategory[] = [
  "core",
  "spine",
  "leaf",
  "switch",
  "card",
  "nic",
  "host",
  "aggregation",
  "other",
];

const KNOWN_ENDPOINT_KINDS: ReadonlySet<string> = new Set<NodeKind>(["card", "nic", "host", "aggregation"]);

export function nodeCategory(node: FabricNode): NodeCategory {
  if (node.kind === "switch") {
    return node.tier ?? "switch";
  }
  return KNOWN_ENDPOINT_KINDS.has(node.kind) ? (node.kind as NodeCategory) : "other";
}

export const NODE_COLOURS: Readonly<Record<NodeCategory, string>> = {
  core: "#7c3aed",
  spine: "#2563eb",
  leaf: "#0891b2",
  switch: "#475569",
  card: "#16a34a",
  nic: "#ca8a04",
  host: "#db2777",
  aggregation: "#854d0e",
  other: "#94a3b8",
};

/** Healthy links recede (many, translucent); faults stand out. */
export const LINK_STYLES: Readonly<Record<LinkState, { readonly colour: string; readonly width: number }>> = {
  up: { colour: "rgba(100, 116, 139, 0.22)", width: 0.6 },
  degraded: { colour: "#f97316", width: 1.2 },
  down: { colour: "#dc2626", width: 1.4 },
};

/** Drawn in this order so faults end up on top of healthy links. */
export const LINK_STATES_BOTTOM_UP: readonly LinkState[] = ["up", "degraded", "down"];
