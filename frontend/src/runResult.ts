// Renders a finished run's outcome: the error, a hop_stats report, or a
// generic key/value view for kinds this frontend does not know yet.

import { element } from "./dom";
import type { NumberFormatters } from "./format";
import { histogramBars, isHopStatsResult, type HopStatsResult } from "./hopStats";
import type { Translate } from "./i18n";
import type { Run } from "./runState";

export interface RenderContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly numbers: NumberFormatters;
}

export function renderRunOutcome(run: Run, context: RenderContext): HTMLElement {
  const { doc, t } = context;
  if (run.status === "failed") {
    return element(doc, "div", { class: "error" }, [run.error ?? t("run.failedWithoutDetail")]);
  }
  if (run.result === null) {
    return element(doc, "p", { class: "muted" }, [t("run.noResult")]);
  }
  if (run.kind === "hop_stats" && isHopStatsResult(run.result)) {
    return renderHopStats(run.result, context);
  }
  return renderGeneric(run.result, doc);
}

function keyValueList(doc: Document, rows: readonly (readonly [string, Node | string])[]): HTMLDListElement {
  return element(
    doc,
    "dl",
    { class: "kv" },
    rows.flatMap(([key, value]) => [element(doc, "dt", {}, [key]), element(doc, "dd", {}, [value])]),
  );
}

function renderHopStats(result: HopStatsResult, { doc, t, numbers }: RenderContext): HTMLElement {
  const summary = keyValueList(doc, [
    [t("hopStats.cards"), numbers.integer(result.cards)],
    [t("hopStats.switches"), numbers.integer(result.switches)],
    [t("hopStats.links"), numbers.integer(result.links)],
    [t("hopStats.pairs"), numbers.integer(result.pairs)],
    [t("hopStats.meanHops"), numbers.decimal(result.mean_hops, 2)],
    [t("hopStats.diameter"), numbers.integer(result.diameter)],
    [t("hopStats.unreachablePairs"), numbers.integer(result.unreachable_pairs)],
  ]);

  const rows = histogramBars(result).map((bar) => {
    const label = bar.hops === 1 ? t("hopStats.oneHopLabel") : t("hopStats.hopsLabel", { hops: bar.hops });
    const fill = element(doc, "span", { class: "hist-bar" });
    fill.style.width = `${(bar.scale * 100).toFixed(2)}%`;
    return element(doc, "div", { class: "hist-row" }, [
      element(doc, "span", { class: "hist-label" }, [label]),
      element(doc, "span", { class: "hist-track" }, [fill]),
      element(doc, "span", { class: "hist-value" }, [`${numbers.integer(bar.pairs)} (${numbers.percent(bar.share)})`]),
    ]);
  });
  const histogram = element(doc, "figure", { class: "hist" }, [
    element(doc, "figcaption", {}, [t("hopStats.histogramCaption")]),
    ...rows,
  ]);

  return element(doc, "div", { class: "hop-stats" }, [summary, histogram]);
}

function renderGeneric(result: unknown, doc: Document): HTMLElement {
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    return element(doc, "pre", {}, [JSON.stringify(result, null, 2)]);
  }
  return keyValueList(
    doc,
    Object.entries(result).map(([key, value]) => [
      key,
      typeof value === "object" && value !== null
        ? element(doc, "pre", {}, [JSON.stringify(value, null, 2)])
        : String(value),
    ]),
  );
}
