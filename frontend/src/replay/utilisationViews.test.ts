// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { parseFrame, type Frame } from "./frames";
import { translator } from "../core/i18n";
import fixture from "../map/fatTree64.fixture.json";
import { parseLayout } from "../map/model";
import { base64Bytes, chartTexts, chartsDrawn, replayFrame } from "../testing/fakes";
import { thresholdStore } from "./thresholds";
import { renderChartSvg } from "../charts/chart";
import { SEQUENTIAL_COLOURS } from "../charts/palette";
import { decodeLeafMatrix } from "./leafMatrix";
import { heatmapHeight, leafMatrixOption } from "./utilisationCharts";
import { layoutOfMap, mountUtilisationViews } from "./utilisationViews";

const model = parseLayout(fixture);

function frame(bytes: number[], top: Record<string, unknown>[] = []): Frame {
  const parsed = parseFrame(replayFrame({ links: bytes.length, utilization: base64Bytes(bytes), top }));
  if (parsed === null) {
    throw new Error("bad frame");
  }
  return parsed;
}

describe("utilisation views", () => {
  // Stopped after each test: a chart's pending draw (a real timer) would otherwise fire after
  // the test file's DOM is gone.
  const mountedViews: { stop(): void }[] = [];
  beforeEach(() => {
    document.body.innerHTML = "";
  });
  afterEach(() => mountedViews.splice(0).forEach((views) => views.stop()));

  function mount() {
    const store = thresholdStore(null);
    const views = mountUtilisationViews({ doc: document, t: translator("en"), numbers: numberFormatters("en"), thresholds: store });
    mountedViews.push(views);
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

  it("draws the heatmap and the uplink bars from the layout, and charts the hottest links", async () => {
    const { views, root } = mount();
    const heatmap = root.querySelector<HTMLElement>(".util-heatmap")!;
    expect(heatmap.closest("figure")?.hidden).toBe(true);
    views.setLayout(layoutOfMap({ model }));
    expect(heatmap.closest("figure")?.hidden).toBe(false);
    // 40 switches x 8 ports: few enough cells for SVG (a canvas above CANVAS_CELLS).
    expect(heatmap.querySelector("svg")).not.toBeNull();
    expect(heatmap.style.height).toBe(`${String(heatmapHeight(40))}px`);
    expect(root.querySelector(".util-heatmap-tiers")?.textContent).toBe("Core: 8 rows, Spine: 16 rows, Leaf: 16 rows");
    await chartsDrawn();
    const uplinks = chartTexts(root.querySelector(".util-strip"));
    expect(uplinks).toEqual(expect.arrayContaining(["Leaf switch", "Utilisation", "0.0%", "100.0%"]));
    expect(root.querySelector(".util-series-empty")?.hasAttribute("hidden")).toBe(false);

    const bytes = new Array<number>(model.linkCount).fill(0);
    bytes[5] = 255;
    views.show(0, frame(bytes, [{ link: 5, from: "x", to: "y", utilization: 1, congestion: 1.2, class: "" }]));
    views.show(1, frame(bytes, []));
    await chartsDrawn();
    const series = chartTexts(root.querySelector(".util-series-chart"));
    expect(series).toEqual(expect.arrayContaining(["x → y (peak 100.0%)", "Frame received", "Utilisation", "warning", "critical"]));
    expect(root.querySelector(".util-series-empty")?.hasAttribute("hidden")).toBe(true);
    views.reset();
    expect(root.querySelector(".util-series-chart svg")).toBeNull();
    // happy-dom lays SVG out far slower than a browser: three charts redrawn per frame take seconds here.
  }, 30000);

  it("colours the port heatmap by the threshold bands, named on its scale, with labelled axes", async () => {
    const { portHeatmapOption } = await import("./utilisationCharts");
    const { buildPortHeatmap } = await import("./switchViews");
    const { renderChartSvg } = await import("../charts/chart");
    const layout = layoutOfMap({ model })!;
    const ports = buildPortHeatmap(layout);
    const utilisation = new Float32Array(model.linkCount).fill(0.5);
    utilisation[0] = 0.97;
    const option = portHeatmapOption(layout, ports, utilisation, null, { warning: 0.8, critical: 0.95 }, { t: translator("en"), numbers: numberFormatters("en") });
    const svg = renderChartSvg(option, 800, heatmapHeight(ports.rows));
    for (const text of ["Port (in link order)", "Switch", "Below 80 %", "80 % to 95 %", "95 % and above", layout.nodeName[ports.rowNode[0]!]!]) {
      expect(svg).toContain(text);
    }
    expect(svg).toContain('fill="#bb5566"');
    const tooltip = (option["tooltip"] as { formatter: (p: { value: number[] }) => string }).formatter;
    const link = ports.cellLink[0]!;
    expect(tooltip({ value: [0, 0, utilisation[link]!] })).toMatch(/port 1 → .*<br>Utilisation (97\.0|50\.0)%, congestion no value/);
  });

  it("draws the leaf-to-leaf matrix of frames that carry one as a heatmap, hidden for frames without", () => {
    const { views, root } = mount();
    const figure = root.querySelector<HTMLElement>(".util-leaf-figure")!;
    expect(figure.hidden).toBe(true);
    const leafMatrix = { groups: ["leaf-01", "leaf-02"], scale_bytes: 2e9, values: base64Bytes([0, 255, 51, 0]) };
    const withMatrix = parseFrame(replayFrame({ leaf_matrix: leafMatrix }))!;
    views.show(0, withMatrix);
    expect(figure.hidden).toBe(false);
    expect(figure.querySelector(".util-leaf-chart svg")).not.toBeNull();
    views.show(2, frame([0, 0, 0, 0]));
    expect(figure.hidden).toBe(true);
    views.show(3, withMatrix);
    views.reset();
    expect(figure.hidden).toBe(true);
  });

  it("gives the leaf-to-leaf heatmap labelled axes, a byte scale to the busiest pair and a tooltip with names and bytes", () => {
    const text = { t: translator("en"), numbers: numberFormatters("en") };
    const matrix = decodeLeafMatrix({ groups: ["leaf-01", "leaf-02"], scaleBytes: 2e9, values: base64Bytes([0, 255, 51, 0]) })!;
    const option = leafMatrixOption(matrix, text);
    const svg = renderChartSvg(option, 640, heatmapHeight(2));
    for (const label of ["To (columns)", "From (rows)", "01", "02", "2.00 GB", "0 B"]) {
      expect(svg).toContain(label);
    }
    // Viridis (SEQUENTIAL_COLOURS): the busiest pair its last colour, yellow; the pair that sent nothing is left blank.
    expect(SEQUENTIAL_COLOURS.at(-1)).toBe("#fde725");
    expect(svg).toContain("rgb(253,231,37)");
    const series = (option["series"] as { data: number[][] }[])[0]!;
    expect(series.data).toEqual([
      [1, 0, 2e9],
      [0, 1, 4e8],
    ]);
    const tooltip = (option["tooltip"] as { formatter: (p: { value: number[] }) => string }).formatter;
    expect(tooltip({ value: [0, 1, 4e8] })).toBe("leaf-02 → leaf-01: 400 MB (20.0% of the frame&#39;s busiest pair)");
  });

  it("needs the map's whole model for the switch views", () => {
    expect(layoutOfMap(null)).toBeNull();
    expect(layoutOfMap({ model: { linkCount: 4 } })).toBeNull();
    expect(layoutOfMap({ model })).toBe(model);
    expect(heatmapHeight(1280)).toBe(2480);
    expect(heatmapHeight(10)).toBe(220);
  });
});
