// The layout served by /api/snapshots/<id>/layout/ (twin/simcore/layout.py),
// validated once at the boundary and turned into typed arrays and a group
// hierarchy that the level-of-detail code walks without allocating.

export type LinkStateName = "up" | "down" | "degraded";

export interface LayoutJson {
  readonly version: number;
  readonly snapshot: unknown;
  readonly bounds: { x0: number; y0: number; x1: number; y1: number };
  readonly groups: Record<string, unknown[]>;
  readonly nodes: Record<string, unknown[]>;
  readonly links: Record<string, unknown[]>;
  readonly codes: Record<string, unknown[]>;
}

export interface Bounds {
  readonly x0: number;
  readonly y0: number;
  readonly x1: number;
  readonly y1: number;
}

export interface MapModel {
  readonly snapshot: unknown;
  readonly bounds: Bounds;
  // Nodes.
  readonly nodeCount: number;
  readonly nodeId: readonly string[];
  readonly nodeName: readonly string[];
  /** Kind name per node (card, switch …). */
  readonly nodeKind: readonly string[];
  /** Tier name per node, null for endpoints. */
  readonly nodeTier: readonly (string | null)[];
  readonly nodeX: Float64Array;
  readonly nodeY: Float64Array;
  /** Innermost group, -1 for none. */
  readonly nodeGroup: Int32Array;
  readonly indexOfId: ReadonlyMap<string, number>;
  // Groups, parents before children.
  readonly groupCount: number;
  readonly groupLabel: readonly string[];
  readonly groupKind: readonly string[];
  readonly groupParent: Int32Array;
  readonly groupX: Float64Array;
  readonly groupY: Float64Array;
  readonly groupW: Float64Array;
  readonly groupH: Float64Array;
  /** Cards below the group. */
  readonly groupCards: Int32Array;
  /** Nodes below the group. */
  readonly groupNodes: Int32Array;
  readonly groupDepth: Int32Array;
  // Links.
  readonly linkCount: number;
  readonly linkA: Int32Array;
  readonly linkB: Int32Array;
  /** Severity: 0 up, 1 degraded, 2 down. */
  readonly linkSeverity: Uint8Array;
  readonly linkScaleOut: Uint8Array;
  readonly linkGbps: Float64Array;
  /** Links of each node, for neighbour look-ups. */
  readonly linksOfNode: (nodeIndex: number) => readonly number[];
}

export class LayoutFormatError extends Error {
  constructor(what: string) {
    super(`invalid layout: ${what}`);
    this.name = "LayoutFormatError";
  }
}

export const SEVERITY_STATES: readonly LinkStateName[] = ["up", "degraded", "down"];

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new LayoutFormatError(what);
  }
  return value as Record<string, unknown>;
}

function column(table: Record<string, unknown>, name: string, length: number | null, what: string): unknown[] {
  const values = table[name];
  if (!Array.isArray(values) || (length !== null && values.length !== length)) {
    throw new LayoutFormatError(`${what}.${name} must be an array${length === null ? "" : ` of ${length}`}`);
  }
  return values;
}

function numbers(values: unknown[], what: string): Float64Array {
  const out = new Float64Array(values.length);
  values.forEach((value, index) => {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new LayoutFormatError(`${what}[${index}] is not a number`);
    }
    out[index] = value;
  });
  return out;
}

function indices(values: unknown[], limit: number, what: string, allowNone = false): Int32Array {
  const out = new Int32Array(values.length);
  values.forEach((value, index) => {
    if (!Number.isInteger(value) || (value as number) >= limit || (value as number) < (allowNone ? -1 : 0)) {
      throw new LayoutFormatError(`${what}[${index}] is not an index below ${limit}`);
    }
    out[index] = value as number;
  });
  return out;
}

function decode(values: unknown[], table: unknown[], what: string): (string | null)[] {
  return values.map((value, index) => {
    const decoded = Number.isInteger(value) ? table[value as number] : undefined;
    if (decoded === undefined || (decoded !== null && typeof decoded !== "string")) {
      throw new LayoutFormatError(`${what}[${index}] is not a known code`);
    }
    return decoded;
  });
}

const SEVERITY: Readonly<Record<string, number>> = { up: 0, degraded: 1, down: 2 };

export function parseLayout(value: unknown): MapModel {
  const top = record(value, "top level is not an object");
  if (top["version"] !== 1) {
    throw new LayoutFormatError(`unsupported version ${String(top["version"])}`);
  }
  const codes = record(top["codes"], "codes");
  const kindCodes = column(codes, "kind", null, "codes");
  const tierCodes = column(codes, "tier", null, "codes");
  const stateCodes = column(codes, "state", null, "codes");
  const domainCodes = column(codes, "domain", null, "codes");
  const groupKindCodes = Array.isArray(codes["group_kind"])
    ? (codes["group_kind"] as unknown[])
    : ["domain", "pod", "leaf", "tier", "block", "unattached"];

  const nodes = record(top["nodes"], "nodes");
  const ids = column(nodes, "id", null, "nodes");
  const n = ids.length;
  const nodeId = ids.map((id, index) => {
    if (typeof id !== "string") {
      throw new LayoutFormatError(`nodes.id[${index}] is not a string`);
    }
    return id;
  });
  const nodeName = column(nodes, "name", n, "nodes").map((name, index) =>
    typeof name === "string" && name !== "" ? name : (nodeId[index] as string),
  );

  const groups = record(top["groups"], "groups");
  const groupIds = column(groups, "id", null, "groups");
  const g = groupIds.length;
  const groupParent = indices(column(groups, "parent", g, "groups"), g, "groups.parent", true);
  const groupDepth = new Int32Array(g);
  for (let i = 0; i < g; i += 1) {
    const parent = groupParent[i] as number;
    if (parent >= i) {
      throw new LayoutFormatError(`groups.parent[${i}] must come before the group`);
    }
    groupDepth[i] = parent < 0 ? 0 : (groupDepth[parent] as number) + 1;
  }

  const links = record(top["links"], "links");
  const linkA = indices(column(links, "a", null, "links"), n, "links.a");
  const l = linkA.length;
  const linkB = indices(column(links, "b", l, "links"), n, "links.b");
  const stateNames = decode(column(links, "state", l, "links"), stateCodes, "links.state");
  const domainNames = decode(column(links, "domain", l, "links"), domainCodes, "links.domain");
  const linkSeverity = Uint8Array.from(stateNames, (state) => SEVERITY[state ?? ""] ?? 1);
  const linkScaleOut = Uint8Array.from(domainNames, (domain) => (domain === "scale-out" ? 1 : 0));

  const bounds = record(top["bounds"], "bounds");
  const edge = (name: string): number => {
    const v = bounds[name];
    if (typeof v !== "number") {
      throw new LayoutFormatError(`bounds.${name}`);
    }
    return v;
  };

  const indexOfId = new Map<string, number>();
  nodeId.forEach((id, index) => indexOfId.set(id, index));

  // Adjacency as CSR arrays: built once, read on every click.
  const degree = new Int32Array(n + 1);
  for (let i = 0; i < l; i += 1) {
    const a = (linkA[i] as number) + 1;
    const b = (linkB[i] as number) + 1;
    degree[a] = (degree[a] as number) + 1;
    degree[b] = (degree[b] as number) + 1;
  }
  for (let i = 0; i < n; i += 1) {
    degree[i + 1] = (degree[i + 1] as number) + (degree[i] as number);
  }
  const fill = degree.slice(0, n);
  const adjacency = new Int32Array(2 * l);
  for (let i = 0; i < l; i += 1) {
    for (const end of [linkA[i] as number, linkB[i] as number]) {
      const slot = fill[end] as number;
      adjacency[slot] = i;
      fill[end] = slot + 1;
    }
  }

  return {
    snapshot: top["snapshot"] ?? null,
    bounds: { x0: edge("x0"), y0: edge("y0"), x1: edge("x1"), y1: edge("y1") },
    nodeCount: n,
    nodeId,
    nodeName,
    nodeKind: decode(column(nodes, "kind", n, "nodes"), kindCodes, "nodes.kind").map((kind) => kind ?? "other"),
    nodeTier: decode(column(nodes, "tier", n, "nodes"), tierCodes, "nodes.tier"),
    nodeX: numbers(column(nodes, "x", n, "nodes"), "nodes.x"),
    nodeY: numbers(column(nodes, "y", n, "nodes"), "nodes.y"),
    nodeGroup: indices(column(nodes, "group", n, "nodes"), g, "nodes.group", true),
    indexOfId,
    groupCount: g,
    groupLabel: column(groups, "label", g, "groups").map((label) => String(label)),
    groupKind: decode(column(groups, "kind", g, "groups"), groupKindCodes, "groups.kind").map((k) => k ?? "group"),
    groupParent,
    groupX: numbers(column(groups, "x", g, "groups"), "groups.x"),
    groupY: numbers(column(groups, "y", g, "groups"), "groups.y"),
    groupW: numbers(column(groups, "w", g, "groups"), "groups.w"),
    groupH: numbers(column(groups, "h", g, "groups"), "groups.h"),
    groupCards: Int32Array.from(column(groups, "members", g, "groups") as number[]),
    groupNodes: Int32Array.from(column(groups, "nodes", g, "groups") as number[]),
    groupDepth,
    linkCount: l,
    linkA,
    linkB,
    linkSeverity,
    linkScaleOut,
    linkGbps: numbers(column(links, "bandwidth_gbps", l, "links"), "links.bandwidth_gbps"),
    linksOfNode: (node) => Array.from(adjacency.subarray(degree[node] as number, degree[node + 1] as number)),
  };
}

/** Groups from the outermost down to the node's innermost group. */
export function ancestorsOfNode(model: MapModel, node: number): number[] {
  const chain: number[] = [];
  for (let group = model.nodeGroup[node] ?? -1; group >= 0; group = model.groupParent[group] ?? -1) {
    chain.push(group);
  }
  return chain.reverse();
}

/** Centre of a group's box. */
export function groupCentre(model: MapModel, group: number): { x: number; y: number } {
  return {
    x: (model.groupX[group] as number) + (model.groupW[group] as number) / 2,
    y: (model.groupY[group] as number) + (model.groupH[group] as number) / 2,
  };
}
