import { describe, expect, it } from "vitest";
import { renderChartSvg } from "./chart";
import { barChartOption, heatmapOption, lineChartOption, wantsLogAxis } from "./options";
import { HIGHLIGHT_COLOUR } from "./palette";

const ms = (value: number) => `${String(value)} ms`;

describe("log axes", () => {
  it("are wanted when the positive values span more than a decade", () => {
    expect(wantsLogAxis([15, 7460])).toBe(true);
    expect(wantsLogAxis([15, 120])).toBe(false);
    expect(wantsLogAxis([0, Number.NaN, 3, 30.1])).toBe(true);
    expect(wantsLogAxis([5])).toBe(false);
  });
});

describe("bar charts", () => {
  const option = barChartOption({
    title: "Algorithms compared",
    categoryName: "Algorithm",
    categories: ["ring", "tree", "one-shot"],
    series: [{ name: "Time", values: [15, 20, 7460] }],
    value: { name: "Time (ms)", format: ms },
    horizontal: true,
    highlighted: [0],
  });

  it("draw the slow one on a log axis with named axes and unit labels", () => {
    expect((option["xAxis"] as { type: string }).type).toBe("log");
    const svg = renderChartSvg(option);
    expect(svg).toContain("Time (ms)");
    expect(svg).toContain("Algorithm");
    expect(svg).toContain("one-shot");
    expect(svg).toMatch(/1,?000 ms|1000 ms/);
    expect(svg.toLowerCase()).toContain(HIGHLIGHT_COLOUR.toLowerCase());
  });

  it("show a legend only with several series, and format tooltips with the unit", () => {
    expect((option["legend"] as { show: boolean }).show).toBe(false);
    const format = (option["tooltip"] as { valueFormatter: (value: unknown) => string }).valueFormatter;
    expect(format(7460)).toBe("7460 ms");
    expect(format(null)).toBe("—");
    const two = barChartOption({ ...{ title: "t", categoryName: "c", categories: ["a"], value: { name: "v", format: ms } }, series: [{ name: "A", values: [1] }, { name: "B", values: [2] }] });
    expect((two["legend"] as { show: boolean }).show).toBe(true);
    expect(renderChartSvg(two)).toContain(">B<");
  });
});

describe("line charts", () => {
  it("name both axes, mark guides and the marker", () => {
    const option = lineChartOption({
      title: "busbw vs cards",
      x: { name: "Cards", format: String, log: true },
      y: { name: "busbw (GB/s)", format: (v) => `${String(v)} GB/s` },
      series: [{ name: "one-supernode", points: [[1024, 40], [2048, 39], [4096, 20]] }, { name: "rail", points: [[1024, 41], [2048, Number.NaN]] }],
      guides: [{ name: "warning", value: 30, colour: "#E69F00" }],
      marker: { x: 4096, label: "knee" },
    });
    const svg = renderChartSvg(option);
    for (const text of ["Cards", "busbw (GB/s)", "one-supernode", "rail", "knee", "warning"]) {
      expect(svg).toContain(text);
    }
    const series = option["series"] as { data: unknown[][] }[];
    expect(series[1]?.data[1]).toEqual([2048, null]);
  });
});

describe("heatmaps", () => {
  it("name each band of a banded scale", () => {
    const option = heatmapOption({
      title: "Switch ports",
      xName: "Port",
      yName: "Switch",
      xLabels: ["1"],
      yLabels: ["leaf-1"],
      cells: [[0, 0, 0.97]],
      scale: { bands: [{ to: 0.8, colour: "#004488", label: "Below 80 %" }, { from: 0.8, to: 0.95, colour: "#ddaa33", label: "80 % to 95 %" }, { from: 0.95, colour: "#bb5566", label: "95 % and above" }] },
      format: String,
      scaleName: "Utilisation",
      describe: () => "",
    });
    const svg = renderChartSvg(option);
    for (const text of ["Below 80 %", "80 % to 95 %", "95 % and above"]) {
      expect(svg).toContain(text);
    }
    expect(svg).toContain('fill="#bb5566"');
  });

  it("label both axes and draw a colour scale with its ends", () => {
    const spec = {
      title: "Switch ports",
      xName: "Port",
      yName: "Switch",
      xLabels: ["1", "2"],
      yLabels: ["spine-1", "leaf-1"],
      cells: [[0, 0, 0.2], [1, 1, 0.9]],
      scale: { min: 0, max: 1 },
      format: (v: number) => `${String(Math.round(v * 100))} %`,
      scaleName: "Utilisation",
      describe: (c: number, r: number, v: number) => `${String(c)}/${String(r)}: ${String(v)}`,
    } as const;
    const option = heatmapOption(spec);
    const svg = renderChartSvg(option);
    for (const text of ["Port", "Switch", "spine-1", "leaf-1", "100 %", "0 %"]) {
      expect(svg).toContain(text);
    }
    // 20 % and 90 % of the way along viridis: dark blue and yellow-green.
    expect(svg).toContain('fill="rgb(61,66,128)"');
    expect(svg).toContain('fill="rgb(189,219,61)"');
    const tooltip = option["tooltip"] as { formatter: (p: { value: number[] }) => string };
    expect(tooltip.formatter({ value: [1, 1, 0.9] })).toBe("1/1: 0.9");
    // Names come from uploaded files: the tooltip's HTML never carries their markup.
    const hostile = heatmapOption({ ...spec, describe: () => "<img src=x onerror=alert(1)>\nline" })["tooltip"] as typeof tooltip;
    expect(hostile.formatter({ value: [0, 0, 0] })).toBe("&lt;img src=x onerror=alert(1)&gt;<br>line");
  });
});
