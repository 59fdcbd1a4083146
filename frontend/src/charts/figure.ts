// A captioned chart: <figure class="chart-figure …"><figcaption/><div class="chart"/></figure>.

import { element } from "../core/dom";
import { mountChart, type Chart, type ChartRenderer } from "./chart";

export interface ChartFigure {
  readonly figure: HTMLElement;
  readonly chart: Chart;
}

export function chartFigure(doc: Document, className: string, caption: string, option: Record<string, unknown>, renderer: ChartRenderer = "svg", height = 260): ChartFigure {
  const host = element(doc, "div", { role: "img" });
  const chart = mountChart(host, option, renderer, height);
  const figure = element(doc, "figure", { class: `chart-figure ${className}` }, [element(doc, "figcaption", {}, [caption]), host]);
  return { figure, chart };
}
