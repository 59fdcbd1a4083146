// Pure ECharts option builders: every plot has named axes with units, a legend when it
// shows more than one series, a tooltip, and a log axis when its values span more than
// a decade (so one slow algorithm does not flatten the rest). No DOM here: the tests
// render these options to SVG on the server side of ECharts.

import { HIGHLIGHT_COLOUR, SEQUENTIAL_COLOURS, SERIES_COLOURS } from "./palette";

/** Formats one value of an axis for people, unit included ("13.7 ms", "512 GB/s"). */
export type ValueFormat = (value: number) => string;

export interface ValueAxis {
  /** The axis title, unit included: "Time (ms)", "Card pairs". */
  readonly name: string;
  readonly format: ValueFormat;
  /** How a value reads in the tooltip, when it says more than the axis (a share beside a count). */
  readonly tooltip?: ValueFormat;
  /** Forces a linear or log axis; by default log when the positive values span more than a decade. */
  readonly log?: boolean;
  readonly min?: number;
  readonly max?: number;
}

/** The largest over the smallest positive value above which an axis is logarithmic. */
export const LOG_AXIS_SPAN = 10;

export function wantsLogAxis(values: readonly number[]): boolean {
  const positive = values.filter((value) => Number.isFinite(value) && value > 0);
  if (positive.length < 2) {
    return false;
  }
  return Math.max(...positive) / Math.min(...positive) > LOG_AXIS_SPAN;
}

function valueAxis(axis: ValueAxis, values: readonly number[]): Record<string, unknown> {
  const log = axis.log ?? wantsLogAxis(values);
  return {
    type: log ? "log" : "value",
    name: axis.name,
    nameLocation: "middle",
    nameGap: 52,
    ...(log ? { logBase: 10 } : {}),
    ...(axis.min === undefined ? {} : { min: axis.min }),
    ...(axis.max === undefined ? {} : { max: axis.max }),
    axisLabel: { formatter: (value: number) => axis.format(value), hideOverlap: true },
    splitLine: { show: true },
  };
}

const TEXT = { fontFamily: "system-ui, sans-serif", fontSize: 12 };

function base(ariaLabel: string): Record<string, unknown> {
  return {
    animation: false,
    color: [...SERIES_COLOURS],
    textStyle: TEXT,
    aria: { enabled: true, label: { description: ariaLabel } },
  };
}

export interface BarSeries {
  readonly name: string;
  /** One value per category; NaN for none. */
  readonly values: readonly number[];
}

export interface BarChartSpec {
  /** Read by screen readers: what the chart shows. */
  readonly title: string;
  readonly categoryName: string;
  readonly categories: readonly string[];
  readonly series: readonly BarSeries[];
  readonly value: ValueAxis;
  /** Bars along the value axis from the left (long category names read better). */
  readonly horizontal?: boolean;
  /** Categories drawn in the highlight colour (single-series charts). */
  readonly highlighted?: readonly number[];
}

export function barChartOption(spec: BarChartSpec): Record<string, unknown> {
  const values = spec.series.flatMap((series) => series.values);
  const log = spec.value.log ?? wantsLogAxis(values);
  const categoryAxis = {
    type: "category",
    name: spec.categoryName,
    nameLocation: "middle",
    nameGap: spec.horizontal === true ? 96 : 30,
    data: [...spec.categories],
    axisLabel: { interval: 0, hideOverlap: true, width: 90, overflow: "truncate" },
    ...(spec.horizontal === true ? { inverse: true } : {}),
  };
  const numeric = valueAxis({ ...spec.value, log }, values);
  const highlighted = new Set(spec.highlighted ?? []);
  return {
    ...base(spec.title),
    grid: { left: spec.horizontal === true ? 110 : 70, right: 24, top: spec.series.length > 1 ? 36 : 16, bottom: 56, containLabel: false },
    legend: { show: spec.series.length > 1, top: 0 },
    tooltip: {
      trigger: "axis",
      axisPointer: { type: "shadow" },
      valueFormatter: (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? (spec.value.tooltip ?? spec.value.format)(value) : "—"),
    },
    xAxis: spec.horizontal === true ? numeric : categoryAxis,
    yAxis: spec.horizontal === true ? categoryAxis : numeric,
    series: spec.series.map((series) => ({
      type: "bar",
      name: series.name,
      // A log axis has no zero: bars start at its bottom, and a missing value is no bar.
      data: series.values.map((value, index) => {
        const shown = Number.isFinite(value) && (!log || value > 0) ? value : null;
        return highlighted.has(index) && spec.series.length === 1 ? { value: shown, itemStyle: { color: HIGHLIGHT_COLOUR } } : shown;
      }),
    })),
  };
}

export interface LineSeries {
  readonly name: string;
  /** [x, y] points; NaN y is a gap. */
  readonly points: readonly (readonly [number, number])[];
  readonly dashed?: boolean;
}

export interface GuideLine {
  readonly name: string;
  readonly value: number;
  readonly colour: string;
}

export interface LineChartSpec {
  readonly title: string;
  readonly x: ValueAxis;
  readonly y: ValueAxis;
  readonly series: readonly LineSeries[];
  /** Horizontal guides (thresholds), each with its name. */
  readonly guides?: readonly GuideLine[];
  /** A vertical marker (the knee) at this x, with its label. */
  readonly marker?: { readonly x: number; readonly label: string };
  /** Shows the legend even for one series (when its name says which one it is). */
  readonly legend?: boolean;
}

export function lineChartOption(spec: LineChartSpec): Record<string, unknown> {
  const xs = spec.series.flatMap((series) => series.points.map(([x]) => x));
  const ys = spec.series.flatMap((series) => series.points.map(([, y]) => y));
  const marks: Record<string, unknown>[] = [
    ...(spec.guides ?? []).map((guide) => ({ yAxis: guide.value, name: guide.name, lineStyle: { color: guide.colour, type: "dashed" }, label: { formatter: guide.name, position: "insideEndTop" } })),
    ...(spec.marker === undefined ? [] : [{ xAxis: spec.marker.x, name: spec.marker.label, lineStyle: { color: HIGHLIGHT_COLOUR, type: "dotted", width: 2 }, label: { formatter: spec.marker.label, position: "insideEndTop" } }]),
  ];
  const legend = spec.legend ?? spec.series.length > 1;
  return {
    ...base(spec.title),
    grid: { left: 76, right: 32, top: legend ? 40 : 20, bottom: 56 },
    legend: { show: legend, top: 0, type: "scroll" },
    tooltip: {
      trigger: "axis",
      axisPointer: { type: "line", label: { formatter: (params: { value: unknown }) => (typeof params.value === "number" ? spec.x.format(params.value) : "") } },
      valueFormatter: (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? (spec.y.tooltip ?? spec.y.format)(value) : "—"),
    },
    xAxis: { ...valueAxis(spec.x, xs), nameGap: 30 },
    yAxis: valueAxis(spec.y, ys),
    series: spec.series.map((series, index) => ({
      type: "line",
      name: series.name,
      showSymbol: series.points.length <= 40,
      connectNulls: false,
      lineStyle: { width: 2, type: series.dashed === true ? "dashed" : "solid" },
      data: series.points.map(([x, y]) => [x, Number.isFinite(y) ? y : null]),
      ...(index === 0 && marks.length > 0 ? { markLine: { symbol: "none", silent: true, data: marks } } : {}),
    })),
  };
}

export interface HeatmapSpec {
  readonly title: string;
  readonly xName: string;
  readonly yName: string;
  readonly xLabels: readonly string[];
  readonly yLabels: readonly string[];
  /** [column, row, value] per cell that has a value. */
  readonly cells: readonly (readonly [number, number, number])[];
  /** The colour scale: continuous from min to max, or bands (thresholds) each with its colour and name. */
  readonly scale: { readonly min: number; readonly max: number } | { readonly bands: readonly ColourBand[] };
  readonly format: ValueFormat;
  /** The colour scale's title: "Utilisation", "Bytes". */
  readonly scaleName: string;
  /** Tooltip of one cell. */
  readonly describe: (column: number, row: number, value: number) => string;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

export interface ColourBand {
  /** From this value (inclusive); the first band has none. */
  readonly from?: number;
  /** Up to this value (exclusive); the last band has none. */
  readonly to?: number;
  readonly colour: string;
  readonly label: string;
}

function visualMap(spec: HeatmapSpec): Record<string, unknown> {
  const common = { right: 0, top: "middle", orient: "vertical", textGap: 6, seriesIndex: 0 };
  if ("bands" in spec.scale) {
    return {
      ...common,
      type: "piecewise",
      pieces: spec.scale.bands.map((band) => ({
        ...(band.from === undefined ? {} : { gte: band.from }),
        ...(band.to === undefined ? {} : { lt: band.to }),
        color: band.colour,
        label: band.label,
      })),
    };
  }
  return {
    ...common,
    type: "continuous",
    min: spec.scale.min,
    max: spec.scale.max,
    calculable: false,
    text: [spec.format(spec.scale.max), spec.format(spec.scale.min)],
    itemHeight: 140,
    inRange: { color: [...SEQUENTIAL_COLOURS] },
    formatter: (value: number) => spec.format(value),
  };
}

export function heatmapOption(spec: HeatmapSpec): Record<string, unknown> {
  return {
    ...base(spec.title),
    grid: { left: 110, right: 150, top: 16, bottom: 56 },
    tooltip: {
      trigger: "item",
      // ECharts writes a formatter's answer as HTML: names from uploaded files are escaped first.
      formatter: (params: { value: readonly [number, number, number] }) => escapeHtml(spec.describe(params.value[0], params.value[1], params.value[2])).replace(/\n/g, "<br>"),
    },
    xAxis: { type: "category", name: spec.xName, nameLocation: "middle", nameGap: 40, data: [...spec.xLabels], splitArea: { show: false }, axisLabel: { hideOverlap: true } },
    yAxis: { type: "category", name: spec.yName, nameLocation: "middle", nameGap: 80, data: [...spec.yLabels], inverse: true, axisLabel: { hideOverlap: true, width: 70, overflow: "truncate" } },
    visualMap: visualMap(spec),
    series: [
      {
        type: "heatmap",
        name: spec.scaleName,
        data: spec.cells.map((cell) => [...cell]),
        progressive: 0,
        emphasis: { itemStyle: { borderColor: "#000", borderWidth: 1 } },
      },
    ],
  };
}
