// Graph builders shared by the fabric tests.

import type { FabricGraph, FabricLink, FabricNode } from "../fabric/graph";

export function switchNode(id: string, tier: FabricNode["tier"]): FabricNode {
  return { id, kind: "switch", name: id, tier, host: null };
}

export function endpointNode(id: string, kind = "card", host: string | null = null): FabricNode {
  return { id, kind, name: id, tier: null, host };
}

export function link(a: string, b: string, state: FabricLink["state"] = "up"): FabricLink {
  return { a, b, state, domain: "scale-out", bandwidth_gbps: 400 };
}

const pad = (value: number) => String(value).padStart(4, "0");

/**
 * A three-tier Clos fabric: `cores` core switches, `spines` spines, `leaves`
 * leaves with `cardsPerLeaf` cards each; every leaf uplinks to every spine and
 * every spine to every core.
 */
export function closFabric(cores: number, spines: number, leaves: number, cardsPerLeaf: number): FabricGraph {
  const nodes: FabricNode[] = [];
  const links: FabricLink[] = [];
  for (let c = 0; c < cores; c += 1) {
    nodes.push(switchNode(`core-${pad(c)}`, "core"));
  }
  for (let s = 0; s < spines; s += 1) {
    nodes.push(switchNode(`spine-${pad(s)}`, "spine"));
    for (let c = 0; c < cores; c += 1) {
      links.push(link(`spine-${pad(s)}`, `core-${pad(c)}`));
    }
  }
  for (let l = 0; l < leaves; l += 1) {
    nodes.push(switchNode(`leaf-${pad(l)}`, "leaf"));
    for (let s = 0; s < spines; s += 1) {
      links.push(link(`leaf-${pad(l)}`, `spine-${pad(s)}`));
    }
    for (let k = 0; k < cardsPerLeaf; k += 1) {
      const card = `card-${pad(l * cardsPerLeaf + k)}`;
      nodes.push(endpointNode(card, "card", `host-${pad(Math.floor((l * cardsPerLeaf + k) / 8))}`));
      links.push(link(card, `leaf-${pad(l)}`));
    }
  }
  return { nodes, links };
}
