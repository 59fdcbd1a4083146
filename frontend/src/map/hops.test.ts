// Hop counts drawn on the map, on fabric_layout(fat_tree(endpoints=64, radix=8)):
// 4 cards a leaf, 4 leaves a pod, 4 pods under the cores.
import { describe, expect, it } from "vitest";
import fixture from "./fatTree64.fixture.json";
import { UNREACHABLE, hopCounts, hopsFrom } from "./hops";
import { buildScene, fullScene } from "./lod";
import { parseLayout } from "./model";
import { emptyOverlays } from "./overlay";
import { NO_HOPS_COLOUR, styleScene, type MapState } from "./style";

const model = parseLayout(fixture);
const card = model.indexOfId.get("card-01") as number;

describe("hops from one card", () => {
  it("counts the switches traversed, as the hop statistics run does", () => {
    const hops = hopsFrom(model, card);
    expect(hops[card]).toBe(0);
    // The run's histogram for this fabric has 96 pairs at 1 hop, 384 at 3 and 1,536 at 5: per card 3, 12 and 48.
    expect(hopCounts(model, hops, card).map(({ hops: h, cards }) => [h, cards])).toEqual([
      [1, 3],
      [3, 12],
      [5, 48],
    ]);
  });

  it("goes round links that are down, and calls cut-off cards unreachable", () => {
    const cardLink = model.linksOfNode(card)[0] as number;
    const cut = { ...model, linkSeverity: Uint8Array.from(model.linkSeverity) };
    cut.linkSeverity[cardLink] = 2;
    const fromOther = hopsFrom(cut, model.indexOfId.get("card-02") as number);
    expect(fromOther[card]).toBe(UNREACHABLE);
    const counts = hopCounts(cut, fromOther, model.indexOfId.get("card-02") as number);
    expect(counts.at(-1)).toMatchObject({ hops: UNREACHABLE, cards: 1, colour: "#000000" });
  });

  it("colours near and far apart, and a closed group by its nearest card", () => {
    const values = hopsFrom(model, card);
    const counts = hopCounts(model, values, card);
    expect(new Set(counts.map((row) => row.colour)).size).toBe(3);
    const state: MapState = {
      overlays: emptyOverlays(),
      pathNodes: new Set(),
      selected: null,
      pathStart: null,
      linkOverlay: "none",
      hops: { source: card, values, colours: new Map(counts.map((row) => [row.hops, row.colour])) },
    };
    const styled = styleScene(model, fullScene(model), state);
    const colourOf = (id: string) => styled.nodes.find((node) => node.item === model.indexOfId.get(id))?.color;
    expect(colourOf("card-02")).toBe(counts[0]!.colour);
    expect(colourOf("card-64")).toBe(counts[2]!.colour);
    // Switches are not what the hops are about: grey.
    const switchItem = styled.nodes.find((node) => model.nodeKind[node.item] === "switch");
    expect(switchItem?.color).toBe(NO_HOPS_COLOUR);
    // Everything closed under the domain: each pod's marker takes its nearest card's colour.
    const open = new Uint8Array(model.groupCount);
    open[0] = 1;
    const closed = styleScene(model, buildScene(model, { ...model.bounds, pxPerUnit: 0.01 }, open, { margin: 0.25 }), state);
    const pods = closed.nodes.filter((node) => node.group && model.groupKind[node.item - model.nodeCount] === "pod");
    expect(pods.map((node) => node.color).sort()).toEqual([counts[0]!.colour, counts[2]!.colour, counts[2]!.colour, counts[2]!.colour].sort());
  });
});
