import { describe, expect, it } from "vitest";
import type { FabricGraph } from "./graph";
import { LAYOUT_MARGIN, tierLayout, type Placement } from "./layout";
import { closFabric, endpointNode, link, switchNode } from "../testing/fabricGraphs";

const WIDTH = 1200;
const HEIGHT = 520;

function place(layout: ReturnType<typeof tierLayout>, id: string): Placement {
  const placement = layout.positions.get(id);
  if (placement === undefined) {
    throw new Error(`${id} was not placed`);
  }
  return placement;
}

/** Deterministic shuffle (LCG) so the test itself is repeatable. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed;
  for (let i = copy.length - 1; i > 0; i -= 1) {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    const j = state % (i + 1);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

describe("tierLayout", () => {
  it("stacks rows core > spine > leaf > endpoints from the top", () => {
    const layout = tierLayout(closFabric(2, 4, 8, 4), WIDTH, HEIGHT);
    expect(layout.rows.map((row) => row.kind)).toEqual(["core", "spine", "leaf", "endpoint"]);
    const ys = layout.rows.map((row) => row.y);
    expect([...ys].sort((a, b) => a - b)).toEqual(ys);
    expect(place(layout, "core-0000").y).toBeLessThan(place(layout, "spine-0000").y);
    expect(place(layout, "spine-0000").y).toBeLessThan(place(layout, "leaf-0000").y);
    expect(place(layout, "leaf-0000").y).toBeLessThan(place(layout, "card-0000").y);
  });

  it("keeps every node inside the margins", () => {
    const layout = tierLayout(closFabric(2, 4, 8, 4), WIDTH, HEIGHT);
    for (const { x, y } of layout.positions.values()) {
      expect(x).toBeGreaterThanOrEqual(LAYOUT_MARGIN.side);
      expect(x).toBeLessThanOrEqual(WIDTH - LAYOUT_MARGIN.side);
      expect(y).toBeGreaterThanOrEqual(LAYOUT_MARGIN.top);
      expect(y).toBeLessThanOrEqual(HEIGHT - LAYOUT_MARGIN.bottom);
    }
  });

  it("puts each card under its own leaf, groups ordered by leaf then card name", () => {
    const graph = closFabric(1, 2, 4, 3);
    const layout = tierLayout(graph, WIDTH, HEIGHT);
    const leaves = ["leaf-0000", "leaf-0001", "leaf-0002", "leaf-0003"].map((id) => place(layout, id).x);
    expect([...leaves].sort((a, b) => a - b)).toEqual(leaves);
    for (let l = 0; l < 4; l += 1) {
      const cards = [0, 1, 2].map((k) => place(layout, `card-${String(l * 3 + k).padStart(4, "0")}`).x);
      expect([...cards].sort((a, b) => a - b)).toEqual(cards);
      // The leaf sits over the middle card, and its column holds exactly its cards.
      expect(cards[1]).toBeCloseTo(leaves[l] as number, 6);
      const neighbourLeft = l > 0 ? (leaves[l - 1] as number) : -Infinity;
      const neighbourRight = l < 3 ? (leaves[l + 1] as number) : Infinity;
      for (const x of cards) {
        expect(Math.abs(x - (leaves[l] as number))).toBeLessThan(Math.abs(x - neighbourLeft));
        expect(Math.abs(x - (leaves[l] as number))).toBeLessThan(Math.abs(x - neighbourRight));
      }
    }
  });

  it("keeps cards under their leaf when groups differ in size", () => {
    const graph: FabricGraph = {
      nodes: [switchNode("leaf-a", "leaf"), switchNode("leaf-b", "leaf"), ...["c1", "c2", "c3", "c4", "c5"].map((id) => endpointNode(id))],
      links: [link("c1", "leaf-a"), link("c2", "leaf-b"), link("c3", "leaf-b"), link("c4", "leaf-b"), link("c5", "leaf-b")],
    };
    const layout = tierLayout(graph, 700, 300);
    const leafA = place(layout, "leaf-a").x;
    const leafB = place(layout, "leaf-b").x;
    expect(place(layout, "c1").x).toBeCloseTo(leafA, 6);
    const bCards = ["c2", "c3", "c4", "c5"].map((id) => place(layout, id).x);
    expect(Math.min(...bCards)).toBeGreaterThan(place(layout, "c1").x);
    expect((Math.min(...bCards) + Math.max(...bCards)) / 2).toBeCloseTo(leafB, 6);
  });

  it("sorts names naturally so leaf-10 follows leaf-9", () => {
    const graph: FabricGraph = {
      nodes: [switchNode("leaf-10", "leaf"), switchNode("leaf-9", "leaf"), switchNode("leaf-1", "leaf")],
      links: [],
    };
    const layout = tierLayout(graph, 600, 300);
    const xs = ["leaf-1", "leaf-9", "leaf-10"].map((id) => place(layout, id).x);
    expect([...xs].sort((a, b) => a - b)).toEqual(xs);
  });

  it("groups endpoints that reach a leaf only through a NIC", () => {
    const graph: FabricGraph = {
      nodes: [
        switchNode("leaf-1", "leaf"),
        switchNode("leaf-2", "leaf"),
        endpointNode("card-a"),
        endpointNode("nic-a", "nic"),
        endpointNode("card-b"),
      ],
      // card-a -> nic-a -> leaf-2 ; card-b -> leaf-1
      links: [link("card-a", "nic-a"), link("nic-a", "leaf-2"), link("card-b", "leaf-1")],
    };
    const layout = tierLayout(graph, 600, 300);
    expect(place(layout, "card-b").x).toBeLessThan(place(layout, "card-a").x);
    expect(place(layout, "card-b").x).toBeLessThan(place(layout, "nic-a").x);
  });

  it("places cards with no leaf after the attached ones, ordered by name", () => {
    const graph: FabricGraph = {
      nodes: [switchNode("leaf-1", "leaf"), endpointNode("card-z"), endpointNode("orphan-2"), endpointNode("orphan-1")],
      links: [link("card-z", "leaf-1")],
    };
    const layout = tierLayout(graph, 600, 300);
    const [attached, first, second] = ["card-z", "orphan-1", "orphan-2"].map((id) => place(layout, id));
    expect(attached?.x).toBeLessThan(first?.x as number);
    expect(first?.x).toBeLessThan(second?.x as number);
    expect(first?.row).toBe("endpoint");
  });

  it("lays out a fabric with no switches at all", () => {
    const graph: FabricGraph = { nodes: [endpointNode("b"), endpointNode("a")], links: [link("a", "b")] };
    const layout = tierLayout(graph, 600, 300);
    expect(layout.rows.map((row) => row.kind)).toEqual(["endpoint"]);
    expect(place(layout, "a").x).toBeLessThan(place(layout, "b").x);
  });

  it("gives tierless switches a place in the leaf row", () => {
    const layout = tierLayout({ nodes: [switchNode("sw", null), endpointNode("c")], links: [link("c", "sw")] }, 600, 300);
    expect(place(layout, "sw").row).toBe("leaf");
    expect(place(layout, "c").x).toBeCloseTo(place(layout, "sw").x, 6);
  });

  it("handles an empty graph", () => {
    const layout = tierLayout({ nodes: [], links: [] }, WIDTH, HEIGHT);
    expect(layout.positions.size).toBe(0);
    expect(layout.rows).toEqual([]);
  });

  it("survives a zero-sized canvas and links to unknown nodes", () => {
    const graph: FabricGraph = { nodes: [switchNode("leaf", "leaf")], links: [link("leaf", "ghost")] };
    const layout = tierLayout(graph, 0, 0);
    expect(Number.isFinite(place(layout, "leaf").x)).toBe(true);
  });

  it("is deterministic: node and link order do not matter", () => {
    const graph = closFabric(2, 4, 8, 8);
    const reference = tierLayout(graph, WIDTH, HEIGHT);
    const reordered = tierLayout(
      { nodes: shuffled(graph.nodes, 7), links: shuffled(graph.links, 11) },
      WIDTH,
      HEIGHT,
    );
    expect(new Map([...reordered.positions].sort())).toEqual(new Map([...reference.positions].sort()));
  });

  it("breaks leaf ties consistently for a card wired to two leaves", () => {
    const graph: FabricGraph = {
      nodes: [switchNode("leaf-2", "leaf"), switchNode("leaf-1", "leaf"), endpointNode("dual"), endpointNode("solo")],
      links: [link("dual", "leaf-2"), link("dual", "leaf-1"), link("solo", "leaf-2")],
    };
    const layout = tierLayout(graph, 600, 300);
    expect(place(layout, "dual").x).toBeCloseTo(place(layout, "leaf-1").x, 6);
  });

  it("lays out a 1,024-card super-node quickly", () => {
    const graph = closFabric(8, 8, 32, 32);
    const started = performance.now();
    const layout = tierLayout(graph, 1600, 520);
    expect(performance.now() - started).toBeLessThan(250);
    expect(layout.positions.size).toBe(8 + 8 + 32 + 1024);
  });
});
