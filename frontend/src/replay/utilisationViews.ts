// The utilisation views under the replay player and live telemetry: the
// threshold legend with its two inputs (the viewer's, in localStorage, also
// applied to the map's overlay), the switch x port heatmap and the leaf uplink
// strip (canvases: one ImageData write per frame, no element per cell), the
// leaf-to-leaf traffic matrix when frames carry one (leafMatrixView.ts) and
// small line charts of the hottest links. Thin DOM wiring over
// switchViews.ts, linkSeries.ts and thresholds.ts.

import { element } from "../core/dom";
import type { NumberFormatters } from "../core/format";
import { decodeCongestion, frameUtilisation, type Frame } from "./frames";
import type { Translate } from "../core/i18n";
import { mountLeafMatrixView } from "./leafMatrixView";
import { HotLinkSeries, seriesIndexAt, seriesY, type LinkSeriesView } from "./linkSeries";
import { BAND_COLOURS } from "../map/overlay";
import { tierLabel } from "../map/labels";
import { sparklinePath } from "./replay";
import {
  buildPortHeatmap,
  buildUplinkStrip,
  linksPerNode,
  paintLinkCells,
  paintValues,
  portCellAt,
  uplinkLoads,
  type PortHeatmap,
  type SwitchLayout,
  type UplinkStrip,
} from "./switchViews";
import { thresholdsFromPercent, type ThresholdStore, type UtilisationThresholds } from "./thresholds";

export interface UtilisationViewsContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly numbers: NumberFormatters;
  readonly thresholds: ThresholdStore;
}

export interface UtilisationViews {
  readonly element: HTMLElement;
  /** The map's layout (rows and columns of the heatmap, the leaves); null hides the switch views. */
  setLayout(layout: SwitchLayout | null): void;
  /** One frame; `key` tells frames apart for the series (a replay's index, a telemetry seq). */
  show(key: number, frame: Frame): void;
  /** Forgets the series and the frame shown. */
  reset(): void;
  /** Stops listening to the thresholds. */
  stop(): void;
}

const SVG = "http://www.w3.org/2000/svg";
const CHART_WIDTH = 240;
const CHART_HEIGHT = 48;

/** A threshold as typed in the inputs: "80", "92.5". */
function percentText(fraction: number): string {
  return String(Math.round(fraction * 1000) / 10);
}

/** CSS pixels per heatmap row: thin rows for big fabrics (the box scrolls). */
export function rowPixels(rows: number): number {
  return rows > 400 ? 2 : rows > 100 ? 4 : rows > 24 ? 8 : 14;
}

function svg<K extends keyof SVGElementTagNameMap>(doc: Document, tag: K, attributes: Readonly<Record<string, string>> = {}): SVGElementTagNameMap[K] {
  const node = doc.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) {
    node.setAttribute(name, value);
  }
  return node;
}

/** The cell under a mouse event on a canvas drawn `cols` x `rows` pixels and stretched by CSS. */
function cellUnder(canvas: HTMLCanvasElement, event: MouseEvent, cols: number, rows: number): { col: number; row: number } | null {
  const box = canvas.getBoundingClientRect();
  if (box.width <= 0 || box.height <= 0) {
    return null;
  }
  return {
    col: Math.floor(((event.clientX - box.left) / box.width) * cols),
    row: Math.floor(((event.clientY - box.top) / box.height) * rows),
  };
}

export function mountUtilisationViews(context: UtilisationViewsContext): UtilisationViews {
  const { doc, t, numbers, thresholds } = context;

  // ---- legend and thresholds ----------------------------------------------
  const warningInput = element(doc, "input", { type: "number", class: "util-threshold util-warning", min: "0", max: "100", step: "1" });
  const criticalInput = element(doc, "input", { type: "number", class: "util-threshold util-critical", min: "0", max: "100", step: "1" });
  const legendList = element(doc, "ul", { class: "legend util-legend-scale" });
  const legend = element(doc, "div", { class: "util-legend", role: "group", "aria-label": t("views.thresholds") }, [
    legendList,
    element(doc, "label", {}, [t("views.warning"), " ", warningInput]),
    element(doc, "label", {}, [t("views.critical"), " ", criticalInput]),
  ]);

  // ---- heatmap ------------------------------------------------------------
  const heatCanvas = element(doc, "canvas", { class: "util-heatmap", role: "img", "aria-label": t("views.heatmapCaption") });
  const heatBox = element(doc, "div", { class: "util-heatmap-box" }, [heatCanvas]);
  const heatTiers = element(doc, "p", { class: "muted util-heatmap-tiers" });
  const heatFigure = element(doc, "figure", { class: "util-figure util-heatmap-figure" }, [
    element(doc, "figcaption", { class: "muted" }, [t("views.heatmapCaption")]),
    heatTiers,
    heatBox,
  ]);

  // ---- leaf uplink strip --------------------------------------------------
  const stripCanvas = element(doc, "canvas", { class: "util-strip", role: "img", "aria-label": t("views.uplinkCaption") });
  const stripFigure = element(doc, "figure", { class: "util-figure util-strip-figure" }, [
    element(doc, "figcaption", { class: "muted" }, [t("views.uplinkCaption")]),
    stripCanvas,
  ]);

  // ---- series ---------------------------------------------------------------
  const seriesList = element(doc, "div", { class: "util-series-list" });
  const seriesEmpty = element(doc, "p", { class: "muted util-series-empty" }, [t("views.seriesEmpty")]);
  const seriesFigure = element(doc, "figure", { class: "util-figure util-series-figure" }, [
    element(doc, "figcaption", { class: "muted" }, [t("views.seriesCaption", { frames: numbers.integer(600) })]),
    seriesEmpty,
    seriesList,
  ]);

  const tooltip = element(doc, "div", { class: "util-tooltip", role: "tooltip" });
  tooltip.hidden = true;

  // ---- leaf-to-leaf traffic -----------------------------------------------
  const leafMatrix = mountLeafMatrixView({
    doc,
    t,
    numbers,
    showTooltip: (event, text) => showTooltip(event, text),
    hideTooltip: () => {
      tooltip.hidden = true;
    },
  });

  const root = element(doc, "section", { class: "util-views", "aria-label": t("views.label") }, [
    legend,
    seriesFigure,
    heatFigure,
    leafMatrix.element,
    stripFigure,
    tooltip,
  ]);
  heatFigure.hidden = true;
  stripFigure.hidden = true;

  // ---- state ----------------------------------------------------------------
  let layout: SwitchLayout | null = null;
  let heatmap: PortHeatmap | null = null;
  let strip: UplinkStrip | null = null;
  let heatImage: ImageData | null = null;
  let stripImage: ImageData | null = null;
  let stripLoads: Float32Array | null = null;
  let utilisation: Float32Array | null = null;
  let congestion: Float32Array | null = null;
  const series = new HotLinkSeries();

  const fits = (values: Float32Array | null): values is Float32Array => values !== null && layout !== null && values.length === layout.linkCount;

  const renderLegend = (current: UtilisationThresholds): void => {
    const warning = percentText(current.warning);
    const critical = percentText(current.critical);
    const entry = (colour: string, label: string): HTMLElement => {
      const swatch = element(doc, "span", { class: "legend-swatch legend-link" });
      swatch.style.background = colour;
      return element(doc, "li", {}, [swatch, label]);
    };
    legendList.replaceChildren(
      entry(BAND_COLOURS.ok, t("map.legend.bandOk", { warning })),
      entry(BAND_COLOURS.warning, t("map.legend.bandWarning", { warning, critical })),
      entry(BAND_COLOURS.critical, t("map.legend.bandCritical", { critical })),
    );
    if (doc.activeElement !== warningInput) {
      warningInput.value = warning;
    }
    if (doc.activeElement !== criticalInput) {
      criticalInput.value = critical;
    }
  };

  const paintHeatmap = (): void => {
    if (heatmap === null || heatImage === null) {
      return;
    }
    paintLinkCells(heatmap.cellLink, fits(utilisation) ? utilisation : null, thresholds.get(), heatImage.data);
    heatCanvas.getContext("2d")?.putImageData(heatImage, 0, 0);
  };

  const paintStrip = (): void => {
    if (strip === null || stripImage === null) {
      return;
    }
    stripLoads = fits(utilisation) ? uplinkLoads(strip, utilisation, stripLoads ?? undefined) : new Float32Array(strip.leaves.length).fill(Number.NaN);
    paintValues(stripLoads, thresholds.get(), stripImage.data);
    stripCanvas.getContext("2d")?.putImageData(stripImage, 0, 0);
  };

  const chart = (view: LinkSeriesView, current: UtilisationThresholds): HTMLElement => {
    const guide = (value: number, band: "warning" | "critical"): SVGLineElement => {
      const y = seriesY(value, CHART_HEIGHT).toFixed(1);
      const line = svg(doc, "line", { class: `util-guide util-guide-${band}`, x1: "0", x2: String(CHART_WIDTH), y1: y, y2: y });
      line.style.stroke = BAND_COLOURS[band];
      return line;
    };
    const dot = svg(doc, "circle", { class: "util-series-dot", r: "2.5", cx: "0", cy: "0" });
    dot.style.display = "none";
    const picture = svg(doc, "svg", {
      class: "util-series-chart",
      viewBox: `0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`,
      preserveAspectRatio: "none",
      role: "img",
      "aria-label": t("views.seriesTitle", { from: view.from, to: view.to, peak: numbers.percent(view.peak) }),
    });
    picture.append(
      guide(current.warning, "warning"),
      guide(current.critical, "critical"),
      svg(doc, "path", { class: "util-series-line", d: sparklinePath(view.values, CHART_WIDTH, CHART_HEIGHT) }),
      dot,
    );
    const readout = element(doc, "span", { class: "util-series-value" });
    picture.addEventListener("mousemove", (event) => {
      const box = picture.getBoundingClientRect();
      const index = seriesIndexAt(((event.clientX - box.left) / Math.max(1, box.width)) * CHART_WIDTH, CHART_WIDTH, view.values.length);
      const value = view.values[index] ?? Number.NaN;
      const position = { position: numbers.integer(index + 1), count: numbers.integer(view.values.length) };
      readout.textContent = t("views.seriesHover", { ...position, value: Number.isNaN(value) ? t("views.noValue") : numbers.percent(value) });
      const x = view.values.length <= 1 ? 0 : (index / (view.values.length - 1)) * CHART_WIDTH;
      dot.setAttribute("cx", x.toFixed(1));
      dot.setAttribute("cy", seriesY(Number.isNaN(value) ? 0 : value, CHART_HEIGHT).toFixed(1));
      dot.style.display = Number.isNaN(value) ? "none" : "";
    });
    picture.addEventListener("mouseleave", () => {
      readout.textContent = "";
      dot.style.display = "none";
    });
    return element(doc, "div", { class: "util-series" }, [
      element(doc, "div", { class: "util-series-head" }, [
        element(doc, "span", { class: "util-series-name" }, [t("views.seriesTitle", { from: view.from, to: view.to, peak: numbers.percent(view.peak) })]),
        " ",
        readout,
      ]),
      picture,
    ]);
  };

  const renderSeries = (): void => {
    const current = thresholds.get();
    const views = series.series();
    seriesList.replaceChildren(...views.map((view) => chart(view, current)));
    seriesEmpty.hidden = views.length > 0;
  };

  const showTooltip = (event: MouseEvent, text: string): void => {
    tooltip.textContent = text;
    tooltip.hidden = false;
    tooltip.style.left = `${event.clientX + 12}px`;
    tooltip.style.top = `${event.clientY + 12}px`;
  };

  const value = (values: Float32Array | null, link: number): string => {
    const v = fits(values) ? (values[link] ?? Number.NaN) : Number.NaN;
    return Number.isNaN(v) ? t("views.noValue") : numbers.percent(v);
  };

  heatCanvas.addEventListener("mousemove", (event) => {
    if (layout === null || heatmap === null) {
      return;
    }
    const at = cellUnder(heatCanvas, event, heatmap.cols, heatmap.rows);
    const cell = at === null ? null : portCellAt(layout, heatmap, at.col, at.row);
    if (cell === null) {
      tooltip.hidden = true;
      return;
    }
    showTooltip(
      event,
      t("views.portTooltip", {
        switch: layout.nodeName[cell.node] ?? "",
        tier: tierLabel(layout.nodeTier[cell.node] ?? null, t),
        port: numbers.integer(cell.port + 1),
        peer: layout.nodeName[cell.peer] ?? "",
        utilisation: value(utilisation, cell.link),
        congestion: value(congestion, cell.link),
      }),
    );
  });
  stripCanvas.addEventListener("mousemove", (event) => {
    if (layout === null || strip === null) {
      return;
    }
    const at = cellUnder(stripCanvas, event, strip.leaves.length, 1);
    const leaf = at === null ? undefined : strip.leaves[at.col];
    if (at === null || leaf === undefined || at.col < 0) {
      tooltip.hidden = true;
      return;
    }
    const load = stripLoads?.[at.col] ?? Number.NaN;
    showTooltip(
      event,
      t("views.uplinkTooltip", { leaf: layout.nodeName[leaf] ?? "", utilisation: Number.isNaN(load) ? t("views.noValue") : numbers.percent(load) }),
    );
  });
  for (const canvas of [heatCanvas, stripCanvas]) {
    canvas.addEventListener("mouseleave", () => {
      tooltip.hidden = true;
    });
  }

  const onInput = (): void => {
    const wanted = thresholdsFromPercent(Number.parseFloat(warningInput.value), Number.parseFloat(criticalInput.value));
    if (wanted !== null) {
      thresholds.set(wanted);
    }
  };
  warningInput.addEventListener("change", onInput);
  criticalInput.addEventListener("change", onInput);
  const unsubscribe = thresholds.subscribe((current) => {
    renderLegend(current);
    paintHeatmap();
    paintStrip();
    renderSeries();
  });
  renderLegend(thresholds.get());

  return {
    element: root,
    setLayout(wanted) {
      layout = wanted;
      heatmap = null;
      strip = null;
      heatImage = null;
      stripImage = null;
      stripLoads = null;
      if (wanted !== null) {
        const ports = linksPerNode(wanted);
        heatmap = buildPortHeatmap(wanted, ports);
        strip = buildUplinkStrip(wanted, ports);
      }
      const hasHeat = heatmap !== null && heatmap.rows > 0 && heatmap.cols > 0;
      const hasStrip = strip !== null && strip.leaves.length > 0;
      heatFigure.hidden = !hasHeat;
      stripFigure.hidden = !hasStrip;
      if (hasHeat && heatmap !== null && wanted !== null) {
        heatCanvas.width = heatmap.cols;
        heatCanvas.height = heatmap.rows;
        heatCanvas.style.height = `${heatmap.rows * rowPixels(heatmap.rows)}px`;
        heatImage = heatCanvas.getContext("2d")?.createImageData(heatmap.cols, heatmap.rows) ?? null;
        heatTiers.textContent = heatmap.tierStarts
          .map(({ tier, row }, i) => {
            const end = heatmap?.tierStarts[i + 1]?.row ?? heatmap?.rows ?? row;
            return t("views.tierRows", { tier: tierLabel(tier, t), count: numbers.integer(end - row) });
          })
          .join(t("list.separator"));
      }
      if (hasStrip && strip !== null) {
        stripCanvas.width = strip.leaves.length;
        stripCanvas.height = 1;
        stripImage = stripCanvas.getContext("2d")?.createImageData(strip.leaves.length, 1) ?? null;
      }
      paintHeatmap();
      paintStrip();
    },
    show(key, frame) {
      utilisation = frameUtilisation(frame);
      congestion = frame.congestion === null ? null : decodeCongestion(frame.congestion, frame.links > 0 ? frame.links : undefined);
      series.push(key, frame.tS, frame.top, utilisation);
      leafMatrix.show(frame.leafMatrix);
      paintHeatmap();
      paintStrip();
      renderSeries();
    },
    reset() {
      series.reset();
      utilisation = null;
      congestion = null;
      leafMatrix.show(null);
      paintHeatmap();
      paintStrip();
      renderSeries();
    },
    stop() {
      unsubscribe();
    },
  };
}

/** The layout the switch views need, when the map hands over its whole model (fakes only give a link count). */
export function layoutOfMap(map: { readonly model?: unknown } | null): SwitchLayout | null {
  const model = map?.model;
  if (typeof model !== "object" || model === null) {
    return null;
  }
  return "linkA" in model && "nodeTier" in model && "nodeName" in model ? (model as SwitchLayout) : null;
}
