// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { parseFrame, type Frame } from "./frames";
import { translator } from "../core/i18n";
import fixture from "../map/fatTree64.fixture.json";
import { parseLayout } from "../map/model";
import { base64Bytes, chartTexts, chartsDrawn, replayFrame } from "../testing/fakes";
import { thresholdStore } from "./thresholds";
import { heatmapHeight } from "./utilisationCharts";
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

  it("draws the leaf-to-leaf matrix of frames that carry one, with labels, scale and tooltip", () => {
    const { views, root } = mount();
    const canvas = root.querySelector<HTMLCanvasElement>(".util-leaf-matrix")!;
    const figure = canvas.closest("figure")!;
    expect(figure.hidden).toBe(true);
    const leafMatrix = { groups: ["leaf-01", "leaf-02"], scale_bytes: 2e9, values: base64Bytes([0, 255, 51, 0]) };
    const withMatrix = parseFrame(replayFrame({ leaf_matrix: leafMatrix }))!;
    views.show(0, withMatrix);
    expect(figure.hidden).toBe(false);
    expect([canvas.width, canvas.height]).toEqual([2, 2]);
    expect([...root.querySelectorAll(".util-leaf-cols span")].map((label) => label.textContent)).toEqual(["01", "02"]);
    expect(root.querySelector(".util-leaf-rows span")?.getAttribute("title")).toBe("leaf-01");
    expect(root.querySelector(".util-leaf-max")?.textContent).toBe("Busiest pair: 2.00 GB");
    expect(root.querySelector<HTMLElement>(".util-leaf-note")?.hidden).toBe(true);

    canvas.getBoundingClientRect = () => ({ left: 0, top: 0, width: 360, height: 360, right: 360, bottom: 360, x: 0, y: 0, toJSON: () => ({}) });
    canvas.dispatchEvent(new MouseEvent("mousemove", { clientX: 10, clientY: 300 }));
    const tooltip = root.querySelector<HTMLElement>(".util-tooltip")!;
    expect(tooltip.hidden).toBe(false);
    expect(tooltip.textContent).toBe("leaf-02 → leaf-01: 400 MB (20.0% of the frame's busiest pair)");
    canvas.dispatchEvent(new MouseEvent("mouseleave"));
    expect(tooltip.hidden).toBe(true);

    const many = Array.from({ length: 40 }, (_, i) => `leaf-${i}`);
    views.show(1, parseFrame(replayFrame({ leaf_matrix: { groups: many, scale_bytes: 1, values: base64Bytes(new Array<number>(1600).fill(1)) } }))!);
    expect(canvas.width).toBe(40);
    expect(root.querySelectorAll(".util-leaf-cols span")).toHaveLength(0);
    expect(root.querySelector(".util-leaf-note")?.textContent).toBe("40 leaf groups a side; hover for names");

    views.show(2, frame([0, 0, 0, 0]));
    expect(figure.hidden).toBe(true);
    views.show(3, withMatrix);
    views.reset();
    expect(figure.hidden).toBe(true);
  });

  it("needs the map's whole model for the switch views", () => {
    expect(layoutOfMap(null)).toBeNull();
    expect(layoutOfMap({ model: { linkCount: 4 } })).toBeNull();
    expect(layoutOfMap({ model })).toBe(model);
    expect(heatmapHeight(1280)).toBe(2480);
    expect(heatmapHeight(10)).toBe(220);
  });
});
