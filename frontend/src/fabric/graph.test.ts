import { describe, expect, it } from "vitest";
import { GraphFormatError, nodeDegrees, parseFabricGraph } from "./graph";

describe("parseFabricGraph", () => {
  it("accepts the API shape", () => {
    const graph = parseFabricGraph({
      snapshot: 7,
      nodes: [
        { id: "card-0001", kind: "card", name: "card-0001", tier: null, host: "host-01" },
        { id: "leaf-01", kind: "switch", name: "leaf-01", tier: "leaf", host: null },
      ],
      links: [{ a: "card-0001", b: "leaf-01", state: "degraded", domain: "scale-out", bandwidth_gbps: 400 }],
    });
    expect(graph.nodes[1]?.tier).toBe("leaf");
    expect(graph.links[0]?.state).toBe("degraded");
  });

  it("normalises optional and unknown values instead of failing", () => {
    const graph = parseFabricGraph({
      nodes: [{ id: "n1", kind: "card", tier: "edge" }],
      links: [{ a: "n1", b: "n1", state: "flapping" }],
    });
    expect(graph.nodes[0]).toEqual({ id: "n1", kind: "card", name: "n1", tier: null, host: null });
    expect(graph.links[0]?.state).toBe("up");
  });

  it("rejects structurally broken payloads", () => {
    expect(() => parseFabricGraph(null)).toThrow(GraphFormatError);
    expect(() => parseFabricGraph({ nodes: {}, links: [] })).toThrow(GraphFormatError);
    expect(() => parseFabricGraph({ nodes: [{ kind: "card" }], links: [] })).toThrow(/nodes\[0\]/);
    expect(() => parseFabricGraph({ nodes: [], links: [{ a: 1, b: "x" }] })).toThrow(/links\[0\]/);
  });
});

describe("nodeDegrees", () => {
  it("counts links at both ends", () => {
    const graph = parseFabricGraph({
      nodes: [],
      links: [
        { a: "x", b: "y" },
        { a: "x", b: "z" },
      ],
    });
    expect(Object.fromEntries(nodeDegrees(graph))).toEqual({ x: 2, y: 1, z: 1 });
  });
});
