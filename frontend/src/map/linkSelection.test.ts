// @vitest-environment happy-dom
// Picking a link: the hit test, the links an edge stands for, their summary
// and the details panel, on fabric_layout(fat_tree(endpoints=64, radix=8)).
import { describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { translator } from "../core/i18n";
import { cablesTo, detailsFromModel, renderLinkDetails } from "./details";
import fixture from "./fatTree64.fixture.json";
import { linkMask, linksOfEdge, nearestEdge, parallelLinks, segmentDistance, summariseLinks } from "./linkSelection";
import { buildScene, fullScene } from "./lod";
import { parseLayout } from "./model";
import { SELECTED_COLOUR, styleScene } from "./style";
import { emptyOverlays } from "./overlay";

const model = parseLayout(fixture);
const card = model.indexOfId.get("card-01") as number;
const cardLink = model.linksOfNode(card)[0] as number;
const leaf = (model.linkA[cardLink] === card ? model.linkB[cardLink] : model.linkA[cardLink]) as number;

describe("the hit test", () => {
  it("measures the distance to a segment, its ends included", () => {
    expect(segmentDistance({ x: 5, y: 3 }, { x: 0, y: 0 }, { x: 10, y: 0 })).toBe(3);
    expect(segmentDistance({ x: -4, y: 3 }, { x: 0, y: 0 }, { x: 10, y: 0 })).toBe(5);
    expect(segmentDistance({ x: 1, y: 1 }, { x: 1, y: 1 }, { x: 1, y: 1 })).toBe(0);
  });

  it("picks the nearest edge within the tolerance, or none", () => {
    const at = new Map([
      [0, { x: 0, y: 0 }],
      [1, { x: 100, y: 0 }],
      [2, { x: 0, y: 10 }],
      [3, { x: 100, y: 10 }],
    ]);
    const edges = [
      { a: 0, b: 1 },
      { a: 2, b: 3 },
      { a: 0, b: 9 }, // an end not drawn: never picked
    ];
    expect(nearestEdge(edges, (item) => at.get(item), { x: 50, y: 2 })).toBe(0);
    expect(nearestEdge(edges, (item) => at.get(item), { x: 50, y: 7 })).toBe(1);
    expect(nearestEdge(edges, (item) => at.get(item), { x: 50, y: 30 })).toBe(-1);
 
  });

  it("takes the shortest of edges drawn over one another: the one that ends nearest the click", () => {
    // A leaf (0) above a column of NICs (1, 2, 3): its three links share the top of the column.
    const at = new Map([
      [0, { x: 0, y: 0 }],
      [1, { x: 0, y: 30 }],
      [2, { x: 0, y: 60 }],
      [3, { x: 0, y: 90 }],
    ]);
    const edges = [
      { a: 0, b: 3 },
      { a: 0, b: 1 },
      { a: 0, b: 2 },
    ];
    expect(nearestEdge(edges, (item) => at.get(item), { x: 0.5, y: 15 })).toBe(1);
    expect(nearestEdge(edges, (item) => at.get(item), { x: 0.5, y: 45 })).toBe(2);
    expect(nearestEdge(edges, (item) => at.get(item), { x: 0.5, y: 75 })).toBe(0);
  });
});

describe("the links an edge stands for", () => {
  it("is the one cable between two drawn nodes", () => {
    const scene = fullScene(model);
    expect(linksOfEdge(model, scene.rep, card, leaf)).toEqual([cardLink]);
    expect(linksOfEdge(model, scene.rep, leaf, card)).toEqual([cardLink]);
    expect(parallelLinks(model, cardLink)).toEqual([cardLink]);
  });

  it("is every link between two closed groups, summarised with its states and utilisation", () => {
    const view = { ...model.bounds, pxPerUnit: 0.01 };
    // Only the domain open: its core tier and its pods are closed, joined by aggregated edges.
    const open = new Uint8Array(model.groupCount);
    open[0] = 1;
    const scene = buildScene(model, view, open, { margin: 0.25 });
    const edge = scene.edges.find((e) => e.a >= model.nodeCount && e.b >= model.nodeCount);
    expect(edge).toBeDefined();
    const links = linksOfEdge(model, scene.rep, edge!.a, edge!.b);
    expect(links.length).toBe(edge!.count);
    const utilisation = new Float32Array(model.linkCount).fill(Number.NaN);
    utilisation[links[0] as number] = 0.25;
    utilisation[links[1] as number] = 0.75;
    const summary = summariseLinks(model, links, utilisation);
    expect(summary).toMatchObject({ links: links.length, up: links.length, degraded: 0, down: 0, utilisation: 0.75 });
    expect(summary.gbps).toBeCloseTo(links.reduce((sum, link) => sum + (model.linkGbps[link] as number), 0));
    expect(summariseLinks(model, links, null).utilisation).toBeNull();
  });

  it("is drawn in the selection colour in whatever edge carries it", () => {
    const folds = { selected: linkMask(model, [cardLink]) };
    const scene = fullScene(model, folds);
    const styled = styleScene(model, scene, { overlays: emptyOverlays(), pathNodes: new Set(), selected: null, pathStart: null, linkOverlay: "none" });
    const picked = styled.edges.filter((edge) => edge.color === SELECTED_COLOUR);
    expect(picked).toHaveLength(1);
    expect([picked[0]!.a, picked[0]!.b].sort()).toEqual([card, leaf].sort());
  });
});

describe("the link's details", () => {
  const t = translator("en");
  const numbers = numberFormatters("en");

  it("names both ends and lists the cable as end a's port sees it", () => {
    const cables = cablesTo(detailsFromModel(model, card), model.nodeId[leaf] as string);
    expect(cables).toHaveLength(1);
    const summary = summariseLinks(model, [cardLink], null);
    const a = { id: "card-01", name: "card-01" };
    const b = { id: model.nodeId[leaf] as string, name: model.nodeName[leaf] as string };
    const shown: string[] = [];
    const parts = renderLinkDetails(document, { a, b, aggregated: false, summary, cables }, t, numbers, (id) => shown.push(id));
    const text = parts.map((part) => part.textContent).join(" ");
    expect(text).toContain("1 up, 0 degraded, 0 down");
    expect(text).toContain(`Port of ${b.name}`);
    expect(parts[1]!.querySelectorAll("tbody tr")).toHaveLength(1);
    parts[2]!.querySelector("button")!.click();
    expect(shown).toEqual(["card-01"]);
  });

  it("says how many links of an aggregate are faulty", () => {
    const summary = { links: 32, up: 29, degraded: 2, down: 1, gbps: 12800, utilisation: null };
    const group = { id: null, name: "leaf-1 (9)" };
    const parts = renderLinkDetails(document, { a: group, b: group, aggregated: true, summary, cables: [] }, t, numbers, () => undefined);
    const text = parts.map((part) => part.textContent).join(" ");
    expect(text).toContain("29 up, 2 degraded, 1 down");
    expect(text).toContain("3 of them are degraded or down");
  });
});
