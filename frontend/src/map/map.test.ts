// Pure parts of the WebGL map: layout parsing, level of detail and
// aggregation, search keyboard model, path highlighting, overlay colours and
// the SVG export. The fixture is fabric_layout(fat_tree(endpoints=64, radix=8)).
import { describe, expect, it } from "vitest";
import fixture from "./fatTree64.fixture.json";
import { buildScene, fullScene, openGroups, pinsForNode, representatives, selectScene, type View } from "./lod";
import { LayoutFormatError, parseLayout } from "./model";
import {
  FAILED_LINK_COLOUR,
  GROUP_MARK_COLOURS,
  NODE_MARK_COLOURS,
  diffArrays,
  diffClassOfRank,
  diffRank,
  emptyOverlays,
  linkMarkArray,
  linksByPair,
  nodeMarkArray,
  nodeMarkCode,
  nodeMarkColour,
  utilisationArray,
  utilisationColour,
} from "./overlay";
import { pathHighlight, shortestPath } from "./path";
import { CLOSED, searchKey, searchLocally, withResults, type SearchResult } from "./searchModel";
import { DIMMED_COLOUR, PATH_COLOUR, styleScene, type MapState } from "./style";
import { escapeXml, sceneToSvg } from "./svgExport";

const model = parseLayout(fixture);
const whole = (pxPerUnit: number): View => ({ ...model.bounds, pxPerUnit });
const options = { budget: 3000, openPx: 56, margin: 0.25, pinned: new Set<number>() };
const plainState = (overrides: Partial<MapState> = {}): MapState => ({
  overlays: emptyOverlays(),
  pathNodes: new Set(),
  selected: null,
  pathStart: null,
  linkOverlay: "none",
  ...overrides,
});

describe("layout model", () => {
  it("decodes the columns and the group tree", () => {
    expect(model.nodeCount).toBe(104);
    expect(model.linkCount).toBe(192);
    expect(model.nodeKind.filter((kind) => kind === "card")).toHaveLength(64);
    expect(model.groupKind.filter((kind) => kind === "pod")).toHaveLength(4);
    expect(model.linksOfNode(model.indexOfId.get("card-01") as number)).toHaveLength(1);
    for (let g = 0; g < model.groupCount; g += 1) {
      expect(model.groupParent[g]).toBeLessThan(g);
    }
  });

  it("rejects malformed layouts", () => {
    expect(() => parseLayout({ ...fixture, version: 2 })).toThrow(LayoutFormatError);
    expect(() => parseLayout({ ...fixture, links: { ...fixture.links, a: [999] } })).toThrow(LayoutFormatError);
  });
});

describe("level of detail", () => {
  it("shows everything when it fits, aggregating nothing", () => {
    const scene = selectScene(model, whole(100), options);
    expect(scene.counts.nodes).toBe(104);
    expect(scene.counts.edges).toBe(fullScene(model).counts.edges);
    expect(scene.items.every((item) => item < model.nodeCount)).toBe(true);
  });

  it("keeps within the element budget by collapsing groups", () => {
    const everything = selectScene(model, whole(100), options).counts.total;
    for (const budget of [everything - 1, 120, 40]) {
      const scene = selectScene(model, whole(100), { ...options, budget });
      expect(scene.counts.total).toBeLessThanOrEqual(budget);
      expect(scene.items.some((item) => item >= model.nodeCount)).toBe(true);
    }
  });

  it("opens only groups wide enough on screen", () => {
    const zoomedOut = openGroups(model, whole(0.01), 56, options);
    expect(Array.from(zoomedOut).every((open) => open === 0)).toBe(true);
    const scene = selectScene(model, whole(0.01), options);
    // The one domain, as one marker.
    expect(scene.counts.nodes).toBe(1);
  });

  it("aggregates links between representatives with counts and the worst state", () => {
    const severity = Uint8Array.from(model.linkSeverity);
    const downLink = model.linksOfNode(model.indexOfId.get("card-01") as number)[0] as number;
    severity[downLink] = 2;
    const broken = { ...model, linkSeverity: severity };
    const open = new Uint8Array(model.groupCount);
    open[0] = 1; // the domain: pods and the core row become markers
    const scene = buildScene(broken, whole(1), open, options);
    const rep = representatives(broken, open);
    const cardRep = rep[model.indexOfId.get("card-01") as number] as number;
    expect(cardRep).toBeGreaterThanOrEqual(model.nodeCount);
    // The card's link is inside its pod: folded into the pod's inner state.
    expect(scene.innerSeverity[cardRep - model.nodeCount]).toBe(2);
    const counted = scene.edges.reduce((sum, edge) => sum + edge.count, 0);
    let crossing = 0;
    for (let link = 0; link < model.linkCount; link += 1) {
      crossing += rep[model.linkA[link] as number] !== rep[model.linkB[link] as number] ? 1 : 0;
    }
    expect(counted).toBe(crossing);
    expect(scene.edges.every((edge) => edge.gbps === edge.count * 400)).toBe(true);
  });

  it("pins the groups of a searched node open", () => {
    const node = model.indexOfId.get("card-33") as number;
    const pinned = new Set(pinsForNode(model, node));
    const scene = selectScene(model, whole(0.01), { ...options, pinned });
    expect(scene.rep[node]).toBe(node);
  });
});

describe("search keyboard model", () => {
  const results: SearchResult[] = ["a", "b", "c"].map((id) => ({ id, name: id, kind: "card", tier: null, host: null, match: "name" }));

  it("moves with the arrows, wrapping, and chooses with Enter", () => {
    let state = withResults(results);
    expect(state.active).toBe(0);
    for (const [key, active] of [["ArrowDown", 1], ["ArrowDown", 2], ["ArrowDown", 0], ["ArrowUp", 2], ["Home", 0], ["End", 2]] as const) {
      const outcome = searchKey(state, key);
      expect(outcome.kind).toBe("move");
      state = (outcome as { state: typeof state }).state;
      expect(state.active).toBe(active);
    }
    const chosen = searchKey(state, "Enter");
    expect(chosen).toMatchObject({ kind: "choose", result: { id: "c" }, state: { open: false } });
  });

  it("closes with Escape and leaves typing alone", () => {
    expect(searchKey(withResults(results), "Escape").kind).toBe("close");
    expect(searchKey(CLOSED, "Escape").kind).toBe("ignore");
    expect(searchKey(withResults(results), "x").kind).toBe("ignore");
    expect(searchKey(CLOSED, "Enter").kind).toBe("ignore");
  });

  it("searches the layout locally, exact matches first", () => {
    const found = searchLocally(model.nodeId, model.nodeName, model.nodeKind, model.nodeTier, "leaf-01");
    expect(found[0]?.id).toBe("leaf-01");
    expect(searchLocally(model.nodeId, model.nodeName, model.nodeKind, model.nodeTier, "card", 5)).toHaveLength(5);
  });
});

describe("path highlighting", () => {
  it("finds a shortest path and marks its nodes and links", () => {
    const a = model.indexOfId.get("card-01") as number;
    const b = model.indexOfId.get("card-64") as number;
    const path = shortestPath(model, a, b) as number[];
    expect(path[0]).toBe(a);
    expect(path[path.length - 1]).toBe(b);
    const highlight = pathHighlight(model, path.map((node) => model.nodeId[node] as string));
    expect(highlight.hops).toBe(5); // leaf, spine, core, spine, leaf
    // Every parallel link between consecutive nodes (spine-core pairs have two here).
    expect(highlight.links.reduce((sum, on) => sum + on, 0)).toBeGreaterThanOrEqual(path.length - 1);
    const scene = fullScene(model, { path: highlight.links });
    const styled = styleScene(model, scene, plainState({ pathNodes: highlight.nodes }));
    expect(styled.edges.filter((edge) => edge.color === PATH_COLOUR)).toHaveLength(path.length - 1);
    expect(styled.nodes.filter((node) => node.color === PATH_COLOUR)).toHaveLength(path.length);
    expect(styled.nodes.some((node) => node.color === DIMMED_COLOUR)).toBe(true);
  });

  it("reports ids the layout does not know", () => {
    expect(pathHighlight(model, ["card-01", "ghost"], 1).unknown).toEqual(["ghost"]);
  });
});

describe("overlays", () => {
  it("colours utilisation from green to red and leaves unknown values out", () => {
    expect(utilisationColour(0)).toBe("#004488");
    expect(utilisationColour(1)).toBe("#bb5566");
    expect(utilisationColour(2)).toBe("#bb5566");
    expect(utilisationColour(0.25)).toMatch(/^#[0-9a-f]{6}$/);
    expect(utilisationColour(Number.NaN)).toBeNull();
  });

  it("maps values given by node-id pairs onto every parallel link, max when aggregated", () => {
    const pairs = () => linksByPair(model);
    const { values, unmatched } = utilisationArray(model, { a: ["card-01", "x"], b: ["leaf-01", "y"], value: [0.9, 1] }, pairs);
    expect(unmatched).toBe(1);
    expect(Array.from(values).filter((v) => !Number.isNaN(v)).map((v) => v.toFixed(2))).toEqual(["0.90"]);
    const open = new Uint8Array(model.groupCount);
    open[0] = 1;
    const scene = buildScene(model, whole(1), open, options, { utilisation: values });
    expect(scene.edges.every((edge) => Number.isNaN(edge.utilisation))).toBe(true); // inside a pod
    const full = fullScene(model, { utilisation: values });
    expect(full.edges.filter((edge) => edge.utilisation === Number(values.find((v) => !Number.isNaN(v))))).toHaveLength(1);
  });

  it("ranks diff classes and marks both ends and their link", () => {
    expect(diffRank("MISSING")).toBeGreaterThan(diffRank("CHANGED"));
    expect(diffClassOfRank(diffRank("SWAPPED"))).toBe("SWAPPED");
    expect(diffRank("NOPE")).toBe(-1);
    const arrays = diffArrays(
      model,
      [
        { class: "MISWIRED", end: { node: "card-01" }, peer: { node: "leaf-01" } },
        { class: "EXTRA", end: { node: "ghost" }, peer: null },
      ],
      () => linksByPair(model),
    );
    expect(arrays.present).toEqual(new Set(["MISWIRED"]));
    expect(arrays.nodeDiff[model.indexOfId.get("leaf-01") as number]).toBe(diffRank("MISWIRED"));
    expect(Array.from(arrays.linkDiff).filter((rank) => rank >= 0)).toHaveLength(1);
  });

  it("keeps the most serious node mark", () => {
    const marks = nodeMarkArray(model, ["card-01", "card-01", "card-02"], ["failed", "placed", "placed"]);
    expect(marks[model.indexOfId.get("card-01") as number]).toBe(1);
    expect(marks[model.indexOfId.get("card-02") as number]).toBe(0);
  });

  it("colours placed ranks per group, cycling the palette, below failed", () => {
    expect([nodeMarkCode("placed"), nodeMarkCode("failed"), nodeMarkCode("placed:0"), nodeMarkCode("nope"), nodeMarkCode("placed:x")]).toEqual([0, 1, 2, -1, -1]);
    expect(nodeMarkCode(`placed:${GROUP_MARK_COLOURS.length + 1}`)).toBe(nodeMarkCode("placed:1"));
    expect(nodeMarkColour(nodeMarkCode("placed:1"))).toBe(GROUP_MARK_COLOURS[1]);
    expect(nodeMarkColour(nodeMarkCode("failed"))).toBe(NODE_MARK_COLOURS.failed);
    const marks = nodeMarkArray(model, ["card-01", "card-01", "card-02", "card-02"], ["placed:3", "failed", "placed", "placed:4"]);
    expect(marks[model.indexOfId.get("card-01") as number]).toBe(nodeMarkCode("failed"));
    expect(marks[model.indexOfId.get("card-02") as number]).toBe(nodeMarkCode("placed:4"));
    const styled = styleScene(model, fullScene(model), plainState({ overlays: { ...emptyOverlays(), nodeMark: marks } }));
    const card = styled.nodes.find((node) => node.item === model.indexOfId.get("card-02"));
    expect(card?.color).toBe(GROUP_MARK_COLOURS[4]);
  });

  it("draws links marked failed, folded into the aggregates that hide them", () => {
    const link = model.linksOfNode(model.indexOfId.get("card-01") as number)[0] as number;
    const { marks, unmatched } = linkMarkArray(model, [link, -1, 9999]);
    expect(unmatched).toBe(2);
    expect(Array.from(marks).filter((mark) => mark === 1)).toHaveLength(1);
    const full = fullScene(model, { failed: marks });
    expect(full.edges.filter((edge) => edge.failed)).toHaveLength(1);
    const styled = styleScene(model, full, plainState({ overlays: { ...emptyOverlays(), linkMark: marks } }));
    expect(styled.edges.filter((edge) => edge.color === FAILED_LINK_COLOUR)).toHaveLength(1);
    const scene = selectScene(model, whole(0.01), options, { failed: marks });
    expect(scene.edges.filter((edge) => edge.failed).length).toBeLessThanOrEqual(1);
  });
});

describe("SVG export", () => {
  it("writes the visible frames, links and markers of a small scene", () => {
    const open = new Uint8Array(model.groupCount);
    open[0] = 1;
    const view = whole(1);
    const scene = buildScene(model, view, open, options);
    const styled = styleScene(model, scene, plainState());
    const svg = sceneToSvg(model, styled, view, { width: 800, height: 400, title: "map <7>", frames: scene.frames });
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg).toContain("<title>map &lt;7&gt;</title>");
    expect(svg.match(/<circle /g)).toHaveLength(styled.nodes.length);
    expect(svg.match(/<line /g)).toHaveLength(styled.edges.length);
    expect(svg.match(/<rect x=/g)).toHaveLength(scene.frames.length);
    expect(svg).toContain("pod-1");
  });

  it("escapes markup in names", () => {
    expect(escapeXml(`<a href="x">&'`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
  });
});

describe("adding a picked element to the failure what-if", () => {
  it("appends once and keeps the list tidy", async () => {
    const { addElement } = await import("./failurePick");
    expect(addElement("", "leaf-01")).toBe("leaf-01");
    expect(addElement("leaf-01, spine-02", "leaf-01")).toBe("leaf-01, spine-02");
    expect(addElement(" leaf-01 ,, ", "spine-03")).toBe("leaf-01, spine-03");
  });
});
