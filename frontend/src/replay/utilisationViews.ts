// The utilisation views under the replay player and live telemetry: the
// threshold legend with its two inputs (the viewer's, in localStorage, also
// applied to the map's overlay), the switch x port heatmap (ECharts on a canvas:
// switches down, ports across, the threshold bands as its colour scale), the leaf
// uplink bars, the leaf-to-leaf traffic matrix when frames carry one
// (leafMatrixView.ts) and the hottest links over time in one line chart. Thin DOM
// wiring over switchViews.ts, linkSeries.ts, thresholds.ts and utilisationCharts.ts.

import { mountChart, type Chart } from "../charts/chart";
import { element } from "../core/dom";
import type { NumberFormatters } from "../core/format";
import { decodeCongestion, frameUtilisation, type Frame } from "./frames";
import type { Translate } from "../core/i18n";
import { mountLeafMatrixView } from "./leafMatrixView";
import { HotLinkSeries } from "./linkSeries";
import { BAND_COLOURS } from "../map/overlay";
import { tierLabel } from "../map/labels";
import { buildPortHeatmap, buildUplinkStrip, linksPerNode, uplinkLoads, type PortHeatmap, type SwitchLayout, type UplinkStrip } from "./switchViews";
import { thresholdsFromPercent, type ThresholdStore, type UtilisationThresholds } from "./thresholds";
import { CANVAS_CELLS, heatmapHeight, hotLinksOption, portHeatmapOption, uplinkOption } from "./utilisationCharts";

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

/** A threshold as typed in the inputs: "80", "92.5". */
function percentText(fraction: number): string {
  return String(Math.round(fraction * 1000) / 10);
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
  const heatHost = element(doc, "div", { class: "util-heatmap", role: "img" });
  const heatBox = element(doc, "div", { class: "util-heatmap-box" }, [heatHost]);
  const heatTiers = element(doc, "p", { class: "muted util-heatmap-tiers" });
  const heatFigure = element(doc, "figure", { class: "util-figure util-heatmap-figure" }, [
    element(doc, "figcaption", { class: "muted" }, [t("views.heatmapCaption")]),
    heatTiers,
    heatBox,
  ]);

  // ---- leaf uplink strip --------------------------------------------------
  const stripHost = element(doc, "div", { class: "util-strip", role: "img" });
  const stripFigure = element(doc, "figure", { class: "util-figure util-strip-figure" }, [
    element(doc, "figcaption", { class: "muted" }, [t("views.uplinkCaption")]),
    stripHost,
  ]);

  // ---- series ---------------------------------------------------------------
  const seriesHost = element(doc, "div", { class: "util-series-chart", role: "img" });
  const seriesEmpty = element(doc, "p", { class: "muted util-series-empty" }, [t("views.seriesEmpty")]);
  const seriesFigure = element(doc, "figure", { class: "util-figure util-series-figure" }, [
    element(doc, "figcaption", { class: "muted" }, [t("views.seriesCaption", { frames: numbers.integer(600) })]),
    seriesEmpty,
    seriesHost,
  ]);


  // ---- leaf-to-leaf traffic -----------------------------------------------
  const leafMatrix = mountLeafMatrixView({ doc, t, numbers });

  const root = element(doc, "section", { class: "util-views", "aria-label": t("views.label") }, [
    legend,
    seriesFigure,
    heatFigure,
    leafMatrix.element,
    stripFigure,
  ]);
  heatFigure.hidden = true;
  stripFigure.hidden = true;

  // ---- state ----------------------------------------------------------------
  let layout: SwitchLayout | null = null;
  let heatmap: PortHeatmap | null = null;
  let strip: UplinkStrip | null = null;
  let heatChart: Chart | null = null;
  let stripChart: Chart | null = null;
  let seriesChart: Chart | null = null;
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

  const text = { t, numbers };

  const paintHeatmap = (): void => {
    if (layout === null || heatmap === null || heatChart === null) {
      return;
    }
    heatChart.update(portHeatmapOption(layout, heatmap, fits(utilisation) ? utilisation : null, fits(congestion) ? congestion : null, thresholds.get(), text));
  };

  const paintStrip = (): void => {
    if (layout === null || strip === null || stripChart === null) {
      return;
    }
    stripLoads = fits(utilisation) ? uplinkLoads(strip, utilisation, stripLoads ?? undefined) : new Float32Array(strip.leaves.length).fill(Number.NaN);
    stripChart.update(uplinkOption(layout, strip, stripLoads, thresholds.get(), text));
  };

  const renderSeries = (): void => {
    const views = series.series();
    seriesEmpty.hidden = views.length > 0;
    seriesHost.hidden = views.length === 0;
    if (views.length === 0) {
      seriesChart?.dispose();
      seriesChart = null;
      seriesHost.replaceChildren();
      return;
    }
    const option = hotLinksOption(views, thresholds.get(), text);
    if (seriesChart === null) {
      seriesChart = mountChart(seriesHost, option, "svg", 280);
    } else {
      seriesChart.update(option);
    }
  };

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
      stripLoads = null;
      heatChart?.dispose();
      stripChart?.dispose();
      heatChart = null;
      stripChart = null;
      if (wanted !== null) {
        const ports = linksPerNode(wanted);
        heatmap = buildPortHeatmap(wanted, ports);
        strip = buildUplinkStrip(wanted, ports);
      }
      const hasHeat = heatmap !== null && heatmap.rows > 0 && heatmap.cols > 0;
      const hasStrip = strip !== null && strip.leaves.length > 0;
      heatFigure.hidden = !hasHeat;
      stripFigure.hidden = !hasStrip;
      if (hasHeat && heatmap !== null) {
        heatChart = mountChart(heatHost, {}, heatmap.rows * heatmap.cols > CANVAS_CELLS ? "canvas" : "svg", heatmapHeight(heatmap.rows));
        heatTiers.textContent = heatmap.tierStarts
          .map(({ tier, row }, i) => {
            const end = heatmap?.tierStarts[i + 1]?.row ?? heatmap?.rows ?? row;
            return t("views.tierRows", { tier: tierLabel(tier, t), count: numbers.integer(end - row) });
          })
          .join(t("list.separator"));
      }
      if (hasStrip && strip !== null) {
        stripChart = mountChart(stripHost, {}, "svg", 220);
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
      for (const chart of [heatChart, stripChart, seriesChart]) {
        chart?.dispose();
      }
      heatChart = stripChart = seriesChart = null;
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
