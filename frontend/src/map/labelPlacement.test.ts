// Label placement on fabric_layout(fat_tree(endpoints=64, radix=8)): at every
// zoom, no two drawn label boxes intersect (the "domain-1" over "leaf-17").
import { describe, expect, it } from "vitest";
import fixture from "./fatTree64.fixture.json";
import { boxesOverlap, placeLabels, type PlacedLabel } from "./labelPlacement";
import { DEFAULT_LOD, selectScene, type View } from "./lod";
import { parseLayout } from "./model";
import { emptyOverlays } from "./overlay";
import { sceneToSvg } from "./svgExport";
import { styleScene, type MapState } from "./style";

const model = parseLayout(fixture);
const SCREEN = { width: 1000, height: 600 };
const measure = (text: string) => text.length * 6.5;
const state = (selected: number | null = null): MapState => ({ overlays: emptyOverlays(), pathNodes: new Set(), selected, pathStart: null, linkOverlay: "none" });

/** A view of `zoom` times the whole fabric's scale, centred on the fabric or on a node. */
function viewAt(zoom: number, centre: number | null = null): View {
  const { x0, x1, y0, y1 } = model.bounds;
  const pxPerUnit = Math.min(SCREEN.width / (x1 - x0), SCREEN.height / (y1 - y0)) * zoom;
  const cx = centre === null ? (x0 + x1) / 2 : (model.nodeX[centre] as number);
  const cy = centre === null ? (y0 + y1) / 2 : (model.nodeY[centre] as number);
  const w = SCREEN.width / pxPerUnit;
  const h = SCREEN.height / pxPerUnit;
  return { x0: cx - w / 2, x1: cx + w / 2, y0: cy - h / 2, y1: cy + h / 2, pxPerUnit };
}

function labelsAt(zoom: number, selected: number | null = null): PlacedLabel[] {
  const view = viewAt(zoom, selected);
  const scene = selectScene(model, view, DEFAULT_LOD);
  const styled = styleScene(model, scene, state(selected));
  const toScreen = (x: number, y: number) => ({ x: (x - view.x0) * view.pxPerUnit, y: (y - view.y0) * view.pxPerUnit });
  return placeLabels(model, styled.nodes, scene.frames, toScreen, SCREEN, measure);
}

function overlapping(labels: readonly PlacedLabel[]): [string, string][] {
  const pairs: [string, string][] = [];
  labels.forEach((a, i) => {
    for (const b of labels.slice(i + 1)) {
      if (boxesOverlap(a, b)) {
        pairs.push([a.text, b.text]);
      }
    }
  });
  return pairs;
}

describe("label placement", () => {
  it("tells overlapping boxes from touching ones", () => {
    expect(boxesOverlap({ x: 0, y: 0, w: 10, h: 10 }, { x: 9, y: 9, w: 5, h: 5 })).toBe(true);
    expect(boxesOverlap({ x: 0, y: 0, w: 10, h: 10 }, { x: 10, y: 0, w: 5, h: 5 })).toBe(false);
  });

  it.each([0.6, 1, 2, 4, 8, 16, 40])("leaves no two labels overlapping, and no marker under a label, at %sx", (zoom) => {
    const labels = labelsAt(zoom);
    expect(labels.length).toBeGreaterThan(0);
    expect(overlapping(labels)).toEqual([]);
    const view = viewAt(zoom);
    const styled = styleScene(model, selectScene(model, view, DEFAULT_LOD), state());
    const covered = styled.nodes.filter((node) => {
      const x = (node.x - view.x0) * view.pxPerUnit;
      const y = (node.y - view.y0) * view.pxPerUnit;
      return labels.some((label) => boxesOverlap(label, { x: x - node.size, y: y - node.size, w: 2 * node.size, h: 2 * node.size }));
    });
    expect(covered.map((node) => node.label)).toEqual([]);
    expect(labels.filter((label) => label.x < 0 || label.y < 0 || label.x + label.w > SCREEN.width || label.y + label.h > SCREEN.height)).toEqual([]);
  });

  it("keeps the domain's title and puts the leaves' names elsewhere or leaves them out", () => {
    const labels = labelsAt(4);
    const title = labels.find((label) => label.text === "domain-1" && label.kind === "title");
    expect(title).toBeDefined();
    expect(labels.some((label) => label.kind === "marker" && label.text.startsWith("leaf-"))).toBe(true);
  });

  it("always names the selected node, before anything else", () => {
    const card = model.indexOfId.get("card-37") as number;
    const labels = labelsAt(8, card);
    expect(labels.map((label) => label.text)).toContain(model.nodeName[card]);
    expect(overlapping(labels)).toEqual([]);
  });

  it("places the SVG export's labels the same way: none overlap", () => {
    const view = viewAt(4);
    const scene = selectScene(model, view, DEFAULT_LOD);
    const svg = sceneToSvg(model, styleScene(model, scene, state()), view, { ...SCREEN, title: "map", frames: scene.frames });
    const texts = [...svg.matchAll(/<text x="([\d.-]+)" y="([\d.-]+)"[^>]*>([^<]*)<\/text>/g)].map(([, x, y, text]) => ({
      text: text as string,
      kind: "marker" as const,
      x: Number(x),
      y: Number(y) - 11,
      w: (text as string).length * 11 * 0.6,
      h: 14,
    }));
    expect(texts.length).toBeGreaterThan(0);
    expect(overlapping(texts)).toEqual([]);
  });
});
