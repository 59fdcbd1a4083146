import { describe, expect, it } from "vitest";
import fixture from "../map/fatTree64.fixture.json";
import { parseLayout } from "../map/model";
import { buildPortHeatmap, buildUplinkStrip, linksPerNode, portCellAt, uplinkLoads, type SwitchLayout } from "./switchViews";

const model = parseLayout(fixture);

/** A hand-made layout: core c0; spines s0, s1; leaves l1 (right) and l0 (left); card k0 under l0. */
function tiny(): SwitchLayout {
  const nodes = [
    ["l1", "switch", "leaf", 20, 20],
    ["c0", "switch", "core", 10, 0],
    ["s1", "switch", "spine", 20, 10],
    ["s0", "switch", "spine", 0, 10],
    ["l0", "switch", "leaf", 0, 20],
    ["k0", "card", null, 0, 30],
  ] as const;
  // links: l0-s0, l0-s1, l1-s0, l1-s1, s0-c0, s1-c0, k0-l0, l0-l1 (a same-tier link)
  const links = [
    [4, 3],
    [4, 2],
    [0, 3],
    [0, 2],
    [3, 1],
    [2, 1],
    [5, 4],
    [4, 0],
  ] as const;
  return {
    nodeCount: nodes.length,
    nodeId: nodes.map((n) => n[0]),
    nodeName: nodes.map((n) => n[0].toUpperCase()),
    nodeKind: nodes.map((n) => n[1]),
    nodeTier: nodes.map((n) => n[2]),
    nodeX: Float64Array.from(nodes, (n) => n[3]),
    nodeY: Float64Array.from(nodes, (n) => n[4]),
    linkCount: links.length,
    linkA: Int32Array.from(links, (l) => l[0]),
    linkB: Int32Array.from(links, (l) => l[1]),
  };
}

describe("switch x port heatmap", () => {
  it("puts cores and spines before leaves, left to right, with ports in link order", () => {
    const layout = tiny();
    const heatmap = buildPortHeatmap(layout);
    expect(Array.from(heatmap.rowNode, (node) => layout.nodeId[node])).toEqual(["c0", "s0", "s1", "l0", "l1"]);
    expect(heatmap.cols).toBe(4); // l0: s0, s1, k0, l1
    expect(heatmap.tierStarts).toEqual([
      { tier: "core", row: 0 },
      { tier: "spine", row: 1 },
      { tier: "leaf", row: 3 },
    ]);
    const row = (r: number) => Array.from(heatmap.cellLink.subarray(r * 4, r * 4 + 4));
    expect(row(0)).toEqual([4, 5, -1, -1]);
    expect(row(1)).toEqual([0, 2, 4, -1]);
    expect(row(3)).toEqual([0, 1, 6, 7]);
    expect(row(4)).toEqual([2, 3, 7, -1]);
  });

  it("finds the cell under the mouse: switch, port, link and peer", () => {
    const layout = tiny();
    const heatmap = buildPortHeatmap(layout);
    expect(portCellAt(layout, heatmap, 2, 3)).toEqual({ node: 4, port: 2, link: 6, peer: 5 });
    expect(portCellAt(layout, heatmap, 1, 0)).toEqual({ node: 1, port: 1, link: 5, peer: 2 });
    expect(portCellAt(layout, heatmap, 3, 4)).toBeNull(); // past l1's last port
    expect(portCellAt(layout, heatmap, 4, 0)).toBeNull();
    expect(portCellAt(layout, heatmap, -1, 0)).toBeNull();
    expect(portCellAt(layout, heatmap, 0, 5)).toBeNull();
  });

  it("covers every switch port of the 64-card fat-tree once per end", () => {
    const heatmap = buildPortHeatmap(model);
    expect(heatmap.rows).toBe(40);
    expect(heatmap.cols).toBe(8);
    expect(heatmap.tierStarts.map((start) => [start.tier, start.row])).toEqual([
      ["core", 0],
      ["spine", 8],
      ["leaf", 24],
    ]);
    const used = Array.from(heatmap.cellLink).filter((link) => link >= 0);
    // 64 card-leaf links (one switch end) + 128 switch-switch links (two ends).
    expect(used).toHaveLength(64 + 2 * 128);
    expect(linksPerNode(model).reduce((sum, links) => sum + links.length, 0)).toBe(2 * model.linkCount);
  });
});

describe("leaf uplink strip", () => {
  it("takes each leaf's links to higher tiers, leaves ordered like the map", () => {
    const layout = tiny();
    const strip = buildUplinkStrip(layout);
    expect(Array.from(strip.leaves, (node) => layout.nodeId[node])).toEqual(["l0", "l1"]);
    expect(Array.from(strip.offsets)).toEqual([0, 2, 4]);
    expect(Array.from(strip.links)).toEqual([0, 1, 2, 3]); // not the card link nor the leaf-leaf link
  });

  it("aggregates the maximum uplink utilisation per leaf, NaN without values", () => {
    const layout = tiny();
    const strip = buildUplinkStrip(layout);
    const loads = uplinkLoads(strip, [0.2, 0.9, Number.NaN, Number.NaN, 1, 1, 1, 1]);
    expect(loads[0]).toBeCloseTo(0.9);
    expect(loads[1]).toBeNaN();
    const fat = buildUplinkStrip(model);
    expect(fat.leaves).toHaveLength(16);
    expect(fat.links).toHaveLength(64);
    const xs = Array.from(fat.leaves, (leaf) => model.nodeX[leaf] as number);
    expect(xs).toEqual([...xs].sort((a, b) => a - b));
    const values = new Float32Array(model.linkCount).fill(0.5);
    values[fat.links[0] as number] = 0.97;
    const fatLoads = uplinkLoads(fat, values);
    expect(fatLoads[0]).toBeCloseTo(0.97);
    expect(fatLoads[1]).toBeCloseTo(0.5);
  });
});
