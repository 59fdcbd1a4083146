// The charts of the utilisation views, pure: the switch x port heatmap (switches down,
// ports across, coloured by the viewer's threshold bands), the leaf-to-leaf traffic
// matrix, the leaf uplink bars and the hottest links over time (one line each, the
// thresholds as guides). No DOM access.

import { barChartOption, heatmapOption, lineChartOption, type ColourBand } from "../charts/options";
import { formatDecimalByteSize, type NumberFormatters } from "../core/format";
import type { Translate } from "../core/i18n";
import { tierLabel } from "../map/labels";
import { BAND_COLOURS } from "../map/overlay";
import { axisLabels, shareOfMax, type LeafMatrix } from "./leafMatrix";
import type { LinkSeriesView } from "./linkSeries";
import { portCellAt, type PortHeatmap, type SwitchLayout, type UplinkStrip } from "./switchViews";
import type { UtilisationThresholds } from "./thresholds";

export interface ChartText {
  readonly t: Translate;
  readonly numbers: NumberFormatters;
}

/** "80" for 0.8: thresholds as the inputs show them. */
function percentText(fraction: number): string {
  return String(Math.round(fraction * 1000) / 10);
}

/** The threshold bands as a colour scale: below warning, warning to critical, critical and above. */
export function thresholdBands(thresholds: UtilisationThresholds, t: Translate): ColourBand[] {
  const warning = percentText(thresholds.warning);
  const critical = percentText(thresholds.critical);
  return [
    { to: thresholds.warning, colour: BAND_COLOURS.ok, label: t("map.legend.bandOk", { warning }) },
    { from: thresholds.warning, to: thresholds.critical, colour: BAND_COLOURS.warning, label: t("map.legend.bandWarning", { warning, critical }) },
    { from: thresholds.critical, colour: BAND_COLOURS.critical, label: t("map.legend.bandCritical", { critical }) },
  ];
}

function valueText(values: ArrayLike<number> | null, link: number, { t, numbers }: ChartText): string {
  const value = values === null ? Number.NaN : (values[link] ?? Number.NaN);
  return Number.isNaN(value) ? t("views.noValue") : numbers.percent(value);
}

/** Above this many cells the heatmap draws on a canvas, which repaints them without an element each. */
export const CANVAS_CELLS = 1024;

/** CSS pixels of the heatmap chart: its rows (thinner for big fabrics), plus the axes. */
export function heatmapHeight(rows: number): number {
  const perRow = rows > 400 ? 2 : rows > 100 ? 4 : rows > 24 ? 8 : 14;
  return Math.min(2400, Math.max(120, rows * perRow)) + 80;
}

export function portHeatmapOption(
  layout: SwitchLayout,
  heatmap: PortHeatmap,
  utilisation: ArrayLike<number> | null,
  congestion: ArrayLike<number> | null,
  thresholds: UtilisationThresholds,
  text: ChartText,
): Record<string, unknown> {
  const { t, numbers } = text;
  const cells: [number, number, number][] = [];
  for (let row = 0; row < heatmap.rows; row += 1) {
    for (let col = 0; col < heatmap.cols; col += 1) {
      const link = heatmap.cellLink[row * heatmap.cols + col] as number;
      const value = link < 0 || utilisation === null ? Number.NaN : (utilisation[link] ?? Number.NaN);
      if (Number.isFinite(value)) {
        cells.push([col, row, value]);
      }
    }
  }
  return heatmapOption({
    title: t("views.heatmapCaption"),
    xName: t("views.portAxis"),
    yName: t("views.switchAxis"),
    xLabels: Array.from({ length: heatmap.cols }, (_, col) => numbers.integer(col + 1)),
    yLabels: Array.from(heatmap.rowNode, (node) => layout.nodeName[node] ?? ""),
    cells,
    scale: { bands: thresholdBands(thresholds, t) },
    format: (value) => numbers.percent(value),
    scaleName: t("collective.utilisation"),
    describe: (col, row) => {
      const cell = portCellAt(layout, heatmap, col, row);
      if (cell === null) {
        return "";
      }
      return t("views.portTooltip", {
        switch: layout.nodeName[cell.node] ?? "",
        tier: tierLabel(layout.nodeTier[cell.node] ?? null, t),
        port: numbers.integer(cell.port + 1),
        peer: layout.nodeName[cell.peer] ?? "",
        utilisation: valueText(utilisation, cell.link, text),
        congestion: valueText(congestion, cell.link, text),
      });
    },
  });
}

/** Each leaf's busiest uplink, a bar per leaf coloured by its band. */
export function uplinkOption(layout: SwitchLayout, strip: UplinkStrip, loads: ArrayLike<number>, thresholds: UtilisationThresholds, { t, numbers }: ChartText): Record<string, unknown> {
  const leaves = Array.from(strip.leaves, (leaf) => layout.nodeName[leaf] ?? "");
  const values = Array.from(loads);
  const option = barChartOption({
    title: t("views.uplinkCaption"),
    categoryName: t("views.leafAxis"),
    categories: leaves,
    series: [{ name: t("views.uplinkSeries"), values }],
    value: { name: t("views.uplinkAxis"), format: (value) => numbers.percent(value), log: false, min: 0, max: 1 },
  });
  const bands = thresholdBands(thresholds, t);
  const colourOf = (value: number) => bands.find((band) => (band.from === undefined || value >= band.from) && (band.to === undefined || value < band.to))?.colour;
  const series = (option["series"] as Record<string, unknown>[]).map((entry) => ({
    ...entry,
    data: values.map((value) => (Number.isFinite(value) ? { value, itemStyle: { color: colourOf(value) } } : null)),
  }));
  return { ...option, series };
}

/** The hottest links, one line each over the frames received, the thresholds as dashed guides. */
export function hotLinksOption(views: readonly LinkSeriesView[], thresholds: UtilisationThresholds, { t, numbers }: ChartText): Record<string, unknown> {
  return lineChartOption({
    title: t("views.seriesCaption", { frames: numbers.integer(600) }),
    x: { name: t("views.frameAxis"), format: (value) => numbers.integer(value), log: false, min: 1 },
    y: { name: t("views.utilisationAxis"), format: (value) => numbers.percent(value), log: false, min: 0, max: 1 },
    series: views.map((view) => ({
      name: t("views.seriesTitle", { from: view.from, to: view.to, peak: numbers.percent(view.peak) }),
      points: Array.from(view.values, (value, index) => [index + 1, value] as const),
    })),
    legend: true,
    guides: [
      { name: t("views.warningGuide"), value: thresholds.warning, colour: BAND_COLOURS.warning },
      { name: t("views.criticalGuide"), value: thresholds.critical, colour: BAND_COLOURS.critical },
    ],
  });
}

/**
 * A replay frame's leaf-to-leaf traffic: sending groups down, receiving groups across, viridis from
 * nothing to the frame's busiest pair; pairs that sent nothing are left blank.
 */
export function leafMatrixOption(matrix: LeafMatrix, { t, numbers }: ChartText): Record<string, unknown> {
  const { groups, bytes, max } = matrix;
  const g = groups.length;
  const cells: [number, number, number][] = [];
  for (let row = 0; row < g; row += 1) {
    for (let col = 0; col < g; col += 1) {
      const value = bytes[row * g + col] as number;
      if (value > 0) {
        cells.push([col, row, value]);
      }
    }
  }
  const labels = axisLabels(groups);
  const format = (value: number): string => formatDecimalByteSize(value, numbers, t);
  return heatmapOption({
    title: t("views.leafCaption"),
    xName: t("views.leafTo"),
    yName: t("views.leafFrom"),
    xLabels: labels,
    yLabels: labels,
    cells,
    scale: { min: 0, max: Math.max(max, 1) },
    format,
    scaleName: t("collective.bytes"),
    describe: (col, row, value) =>
      t("views.leafTooltip", { from: groups[row] ?? "", to: groups[col] ?? "", bytes: format(value), share: numbers.percent(shareOfMax(value, max)) }),
  });
}
