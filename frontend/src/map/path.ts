// The hop path between two cards: which nodes and links to highlight, from
// the path endpoint's answer or, without one, a breadth-first search here.

import type { MapModel } from "./model";

export interface PathHighlight {
  readonly nodes: ReadonlySet<number>;
  /** 1 on the links joining consecutive path nodes (every parallel link). */
  readonly links: Uint8Array;
  /** Switches traversed. */
  readonly hops: number;
  /** Ids of the path the model does not know (a stale layout). */
  readonly unknown: readonly string[];
}

export function pathHighlight(model: MapModel, ids: readonly string[], hops?: number): PathHighlight {
  const nodes = new Set<number>();
  const unknown: string[] = [];
  const order: number[] = [];
  for (const id of ids) {
    const node = model.indexOfId.get(id);
    if (node === undefined) {
      unknown.push(id);
    } else {
      nodes.add(node);
      order.push(node);
    }
  }
  const links = new Uint8Array(model.linkCount);
  for (let i = 1; i < order.length; i += 1) {
    const from = order[i - 1] as number;
    const to = order[i] as number;
    for (const link of model.linksOfNode(from)) {
      const a = model.linkA[link] as number;
      const b = model.linkB[link] as number;
      if ((a === from && b === to) || (a === to && b === from)) {
        links[link] = 1;
      }
    }
  }
  const switches = order.filter((node) => model.nodeKind[node] === "switch").length;
  return { nodes, links, hops: hops ?? switches, unknown };
}

/** Shortest path by hop count over links that are not down; null when unreachable. */
export function shortestPath(model: MapModel, from: number, to: number): number[] | null {
  const previous = new Int32Array(model.nodeCount).fill(-1);
  previous[from] = from;
  let frontier = [from];
  while (frontier.length > 0 && previous[to] === -1) {
    const next: number[] = [];
    for (const node of frontier) {
      for (const link of model.linksOfNode(node)) {
        if (model.linkSeverity[link] === 2) {
          continue;
        }
        const other = model.linkA[link] === node ? (model.linkB[link] as number) : (model.linkA[link] as number);
        if (previous[other] === -1) {
          previous[other] = node;
          next.push(other);
        }
      }
    }
    frontier = next;
  }
  if (previous[to] === -1) {
    return null;
  }
  const path = [to];
  while (path[path.length - 1] !== from) {
    path.push(previous[path[path.length - 1] as number] as number);
  }
  return path.reverse();
}

export function parsePath(value: unknown): { nodes: string[]; hops: number | undefined } | null {
  const body = value as { nodes?: unknown; hops?: unknown } | null;
  if (body === null || typeof body !== "object" || !Array.isArray(body.nodes)) {
    return null;
  }
  const nodes = body.nodes.filter((id): id is string => typeof id === "string");
  return { nodes, hops: typeof body.hops === "number" ? body.hops : undefined };
}
