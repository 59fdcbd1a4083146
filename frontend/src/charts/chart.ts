// Mounts an ECharts chart on an element. Only the chart types and components the
// views use are bundled (tree-shaken through echarts/core). Small charts draw SVG (crisp,
// its text readable by tests and screen readers); heatmaps draw on a canvas, which
// repaints thousands of cells per frame without an element each.

import { BarChart, HeatmapChart, LineChart } from "echarts/charts";
import { AriaComponent, GridComponent, LegendComponent, MarkLineComponent, TooltipComponent, VisualMapComponent } from "echarts/components";
import { init, use, type ECharts } from "echarts/core";
import { CanvasRenderer, SVGRenderer } from "echarts/renderers";

use([BarChart, LineChart, HeatmapChart, GridComponent, LegendComponent, TooltipComponent, VisualMapComponent, MarkLineComponent, AriaComponent, SVGRenderer, CanvasRenderer]);

export type ChartRenderer = "svg" | "canvas";

/** The shortest time between two draws of one chart. */
export const MIN_DRAW_INTERVAL_MS = 500;

export interface Chart {
  readonly element: HTMLElement;
  /**
   * Shows `option`: axes, legend and scale are updated in place, the series replaced. At most
   * one draw every MIN_DRAW_INTERVAL_MS: updates that come faster (a replay at 10 frames a
   * second) are drawn once, the newest, so the page stays responsive on a slow machine.
   */
  update(option: Record<string, unknown>): void;
  dispose(): void;
}

/** The chart's box is sized by CSS (`.chart`); `height` in CSS pixels. */
export function mountChart(host: HTMLElement, option: Record<string, unknown>, renderer: ChartRenderer = "svg", height = 260): Chart {
  host.classList.add("chart");
  host.style.height = `${height}px`;
  // Before the box is laid out (hidden, or in tests) it has no width: start at a usual one.
  const width = host.clientWidth > 0 ? undefined : 640;
  const chart: ECharts = init(host, null, { renderer, height, ...(width === undefined ? {} : { width }) });
  chart.setOption(option);
  const observer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => chart.resize({ width: "auto", height }));
  observer?.observe(host);
  let drawnAt = performance.now();
  let pending: Record<string, unknown> | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const draw = (): void => {
    timer = null;
    if (pending !== null) {
      chart.setOption(pending, { replaceMerge: ["series"] });
      pending = null;
      drawnAt = performance.now();
    }
  };
  return {
    element: host,
    update(next) {
      pending = next;
      timer ??= setTimeout(draw, Math.max(0, drawnAt + MIN_DRAW_INTERVAL_MS - performance.now()));
    },
    dispose() {
      if (timer !== null) {
        clearTimeout(timer);
      }
      observer?.disconnect();
      chart.dispose();
    },
  };
}

/** The chart's SVG markup without a DOM (server-side rendering): for tests. */
export function renderChartSvg(option: Record<string, unknown>, width = 640, height = 260): string {
  const chart = init(null, null, { renderer: "svg", ssr: true, width, height });
  chart.setOption(option);
  const svg = chart.renderToSVGString();
  chart.dispose();
  return svg;
}
