// The snapshot graph served by /api/snapshots/<id>/graph/, validated at the
// boundary so the layout and renderer can trust its shape.

export type NodeKind = "card" | "switch" | "nic" | "host" | "aggregation";
export type SwitchTier = "leaf" | "spine" | "core";
export type LinkState = "up" | "down" | "degraded";

export interface FabricNode {
  readonly id: string;
  /** One of NodeKind in today's API; kept open so a new kind still draws. */
  readonly kind: string;
  readonly name: string;
  readonly tier: SwitchTier | null;
  readonly host: string | null;
}

export interface FabricLink {
  readonly a: string;
  readonly b: string;
  readonly state: LinkState;
  readonly domain: string;
  readonly bandwidth_gbps: number;
}

export interface FabricGraph {
  readonly nodes: readonly FabricNode[];
  readonly links: readonly FabricLink[];
}

export class GraphFormatError extends Error {
  constructor(what: string) {
    super(`invalid graph: ${what}`);
    this.name = "GraphFormatError";
  }
}

const TIERS: ReadonlySet<string> = new Set<SwitchTier>(["leaf", "spine", "core"]);
const LINK_STATES: ReadonlySet<string> = new Set<LinkState>(["up", "down", "degraded"]);

function asRecord(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GraphFormatError(what);
  }
  return value as Record<string, unknown>;
}

function parseNode(value: unknown, index: number): FabricNode {
  const node = asRecord(value, `nodes[${index}]`);
  const { id, kind, name, tier, host } = node;
  if (typeof id !== "string" || typeof kind !== "string") {
    throw new GraphFormatError(`nodes[${index}] needs string id and kind`);
  }
  return {
    id,
    kind,
    name: typeof name === "string" && name !== "" ? name : id,
    tier: typeof tier === "string" && TIERS.has(tier) ? (tier as SwitchTier) : null,
    host: typeof host === "string" ? host : null,
  };
}

function parseLink(value: unknown, index: number): FabricLink {
  const link = asRecord(value, `links[${index}]`);
  const { a, b, state, domain, bandwidth_gbps: bandwidth } = link;
  if (typeof a !== "string" || typeof b !== "string") {
    throw new GraphFormatError(`links[${index}] needs string endpoints a and b`);
  }
  return {
    a,
    b,
    // An unknown state is drawn as up rather than dropping the link.
    state: typeof state === "string" && LINK_STATES.has(state) ? (state as LinkState) : "up",
    domain: typeof domain === "string" ? domain : "",
    bandwidth_gbps: typeof bandwidth === "number" ? bandwidth : 0,
  };
}

export function parseFabricGraph(value: unknown): FabricGraph {
  const graph = asRecord(value, "top level is not an object");
  const { nodes, links } = graph;
  if (!Array.isArray(nodes) || !Array.isArray(links)) {
    throw new GraphFormatError("nodes and links must be arrays");
  }
  return { nodes: nodes.map(parseNode), links: links.map(parseLink) };
}

/** Links per node id; links naming unknown nodes still count for the known end. */
export function nodeDegrees(graph: FabricGraph): Map<string, number> {
  const degrees = new Map<string, number>();
  for (const link of graph.links) {
    degrees.set(link.a, (degrees.get(link.a) ?? 0) + 1);
    degrees.set(link.b, (degrees.get(link.b) ?? 0) + 1);
  }
  return degrees;
}
