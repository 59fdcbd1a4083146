// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { numberFormatters } from "./format";
import { parseFrame, type Frame } from "./frames";
import { translator } from "./i18n";
import fixture from "./map/fatTree64.fixture.json";
import { parseLayout } from "./map/model";
import { base64Bytes, replayFrame } from "./testing/fakes";
import { thresholdStore } from "./thresholds";
import { layoutOfMap, mountUtilisationViews, rowPixels } from "./utilisationViews";

const model = parseLayout(fixture);

function frame(bytes: number[], top: Record<string, unknown>[] = []): Frame {
  const parsed = parseFrame(replayFrame({ links: bytes.length, utilization: base64Bytes(bytes), top }));
  if (parsed === null) {
    throw new Error("bad frame");
  }
  return parsed;
}

describe("utilisation views", () => {
  beforeEach(() => {
    document.body.innerHTML = "";
  });

  function mount() {
    const store = thresholdStore(null);
    const views = mountUtilisationViews({ doc: document, t: translator("en"), numbers: numberFormatters("en"), thresholds: store });
    document.body.append(views.element);
    return { store, views, root: views.element };
  }

  it("shows the legend with the thresholds and edits them from the inputs", () => {
    const { store, root } = mount();
    const legend = [...root.querySelectorAll(".util-legend-scale li")].map((item) => item.textContent);
    expect(legend).toEqual(["Below 80 %", "80 % to 95 %", "95 % and above"]);
    const warning = root.querySelector<HTMLInputElement>(".util-warning")!;
    const critical = root.querySelector<HTMLInputElement>(".util-critical")!;
    expect([warning.value, critical.value]).toEqual(["80", "95"]);
    warning.value = "70";
    warning.dispatchEvent(new Event("change"));
    expect(store.get()).toEqual({ warning: 0.7, critical: 0.95 });
    expect(root.querySelector(".util-legend-scale li")?.textContent).toBe("Below 70 %");
  });

  it("sizes the heatmap and the uplink strip from the layout and charts the hottest links", () => {
    const { views, root } = mount();
    const heatmap = root.querySelector<HTMLCanvasElement>(".util-heatmap")!;
    expect(heatmap.closest("figure")?.hidden).toBe(true);
    views.setLayout(layoutOfMap({ model }));
    expect([heatmap.width, heatmap.height]).toEqual([8, 40]);
    expect(heatmap.closest("figure")?.hidden).toBe(false);
    expect(root.querySelector(".util-heatmap-tiers")?.textContent).toBe("Core: 8 rows, Spine: 16 rows, Leaf: 16 rows");
    expect(root.querySelector<HTMLCanvasElement>(".util-strip")?.width).toBe(16);
    expect(root.querySelector(".util-series-empty")?.hasAttribute("hidden")).toBe(false);

    const bytes = new Array<number>(model.linkCount).fill(0);
    bytes[5] = 255;
    views.show(0, frame(bytes, [{ link: 5, from: "x", to: "y", utilization: 1, congestion: 1.2, class: "" }]));
    views.show(1, frame(bytes, []));
    const charts = root.querySelectorAll(".util-series");
    expect(charts).toHaveLength(1);
    expect(charts[0]?.querySelector(".util-series-name")?.textContent).toBe("x → y (peak 100.0%)");
    expect(charts[0]?.querySelectorAll(".util-guide")).toHaveLength(2);
    expect(charts[0]?.querySelector(".util-series-line")?.getAttribute("d")).toMatch(/^M0\.0 0\.0L240\.0 0\.0$/);
    views.reset();
    expect(root.querySelectorAll(".util-series")).toHaveLength(0);
  });

  it("needs the map's whole model for the switch views", () => {
    expect(layoutOfMap(null)).toBeNull();
    expect(layoutOfMap({ model: { linkCount: 4 } })).toBeNull();
    expect(layoutOfMap({ model })).toBe(model);
    expect(rowPixels(1280)).toBe(2);
    expect(rowPixels(10)).toBe(14);
  });
});
