// Hop counts from one card to every other, for the hop statistics drawn on the
// map: the run's histogram counts every card pair, the map shows one card's row
// of it ("how far is everything from here"). Same rules as the run
// (twin/simcore/hops.py): a hop is a switch traversed; cards are endpoints, a
// path never passes through a third one; NICs, hosts and aggregation nodes are
// passive and count nothing; links that are down do not exist. A breadth-first
// search over the layout's links, level by level: milliseconds at 16,384 cards.

import { SEQUENTIAL_COLOURS } from "../charts/palette";
import type { MapModel } from "./model";

export const UNREACHABLE = -1;
const DOWN = 2;

/** Hops from `source` to every node (meaningful for cards; UNREACHABLE where no path is up). */
export function hopsFrom(model: MapModel, source: number): Int16Array {
  const hops = new Int16Array(model.nodeCount).fill(UNREACHABLE);
  const settled = new Uint8Array(model.nodeCount);
  hops[source] = 0;
  // One level at a time: passive peers join the level being walked, switches the next one.
  let level: number[] = [source];
  while (level.length > 0) {
    const next: number[] = [];
    while (level.length > 0) {
      const node = level.pop() as number;
      if (settled[node] === 1) {
        continue;
      }
      settled[node] = 1;
      // A card other than the source is where a path ends.
      if (model.nodeKind[node] === "card" && node !== source) {
        continue;
      }
      const here = hops[node] as number;
      for (const link of model.linksOfNode(node)) {
        if (model.linkSeverity[link] === DOWN) {
          continue;
        }
        const peer = (model.linkA[link] === node ? model.linkB[link] : model.linkA[link]) as number;
        const step = model.nodeKind[peer] === "switch" ? 1 : 0;
        const known = hops[peer] as number;
        if (settled[peer] === 1 || (known !== UNREACHABLE && known <= here + step)) {
          continue;
        }
        hops[peer] = here + step;
        (step === 0 ? level : next).push(peer);
      }
    }
    level = next;
  }
  return hops;
}

export interface HopCount {
  /** Hop count, or UNREACHABLE. */
  readonly hops: number;
  readonly cards: number;
  readonly colour: string;
}

const UNREACHABLE_COLOUR = "#000000";

/**
 * Cards at each hop count from the source (the source itself left out), nearest first, unreachable
 * last, each with its colour: viridis from near (dark) to far (green), black for unreachable.
 */
export function hopCounts(model: MapModel, hops: Int16Array, source: number): HopCount[] {
  const counts = new Map<number, number>();
  for (let node = 0; node < model.nodeCount; node += 1) {
    if (model.nodeKind[node] === "card" && node !== source) {
      const value = hops[node] as number;
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
  }
  const reachable = [...counts.keys()].filter((value) => value !== UNREACHABLE).sort((a, b) => a - b);
  // Viridis without its last, light yellow, which a small marker on white would lose.
  const last = SEQUENTIAL_COLOURS.length - 2;
  const rows: HopCount[] = reachable.map((value, index) => ({
    hops: value,
    cards: counts.get(value) ?? 0,
    colour: SEQUENTIAL_COLOURS[reachable.length === 1 ? 0 : Math.round((index * last) / (reachable.length - 1))] as string,
  }));
  const unreachable = counts.get(UNREACHABLE);
  if (unreachable !== undefined) {
    rows.push({ hops: UNREACHABLE, cards: unreachable, colour: UNREACHABLE_COLOUR });
  }
  return rows;
}
