// Renders a finished run's outcome: the error, or the result view of its kind (hop
// statistics, collective, replay, placement, failures, what-if), each with its plots and
// tables and the raw result behind a download link; a result of a shape this frontend
// does not know is only offered for download, never dumped on the page.

import {
  bottleneckLink,
  candidateBars,
  parseCollectiveResult,
  skippedAlgorithms,
  type CollectiveResult,
} from "./collective";
import { barChartOption } from "../charts/options";
import { chartFigure } from "../charts/figure";
import { element } from "../core/dom";
import { parseFailuresResult } from "./failures";
import { renderFailures } from "./failuresResult";
import { formatDecimalByteSize, formatDuration, formatGBps } from "../core/format";
import { histogramBars, isHopStatsResult, type HopStatsResult } from "./hopStats";
import { resolveLanguage, type MessageKey } from "../core/i18n";
import { parsePlacementResult } from "./placement";
import { renderPlacement } from "./placementResult";
import { parseReplaySummary } from "../replay/replay";
import { renderReplaySummary } from "../replay/replayResult";
import { keyValueList, marksStatus, type RenderContext } from "./resultDom";
import { parseWhatIfResult } from "./whatif";
import { renderWhatIf } from "./whatifResult";
import { runError, type Run } from "./runState";


/** `runUrl` is the run's API URL (exports and detail hang off it); by default /api/runs/<id>/. */
export function renderRunOutcome(run: Run, context: RenderContext, runUrl = ""): HTMLElement {
  const { doc, t } = context;
  const error = runError(run, resolveLanguage(doc.documentElement.lang));
  if (run.status === "failed") {
    return element(doc, "div", { class: "error" }, [error ?? t("run.failedWithoutDetail")]);
  }
  if (run.status === "cancelled") {
    return element(doc, "p", { class: "muted run-cancelled" }, [error ?? t("run.cancelledWithoutDetail")]);
  }
  if (run.result === null) {
    return element(doc, "p", { class: "muted" }, [t("run.noResult")]);
  }
  const url = runUrl === "" ? `/api/runs/${String(run.id)}/` : runUrl;
  const view = resultView(run, url, context);
  const download = element(doc, "p", { class: "run-download muted" }, [
    element(doc, "a", { href: url, download: `run-${String(run.id)}.json` }, [t("run.downloadJson")]),
  ]);
  if (view === null) {
    return element(doc, "div", { class: "run-unknown" }, [element(doc, "p", { class: "muted" }, [t("run.unknownResult")]), download]);
  }
  view.append(download);
  return view;
}

function resultView(run: Run, runUrl: string, context: RenderContext): HTMLElement | null {
  const result = run.result;
  switch (run.kind) {
    case "hop_stats":
      return isHopStatsResult(result) ? renderHopStats(result, context) : null;
    case "collective": {
      const collective = parseCollectiveResult(result);
      return collective === null ? null : renderCollective(collective, context);
    }
    case "replay": {
      const replay = parseReplaySummary(result);
      return replay === null ? null : renderReplaySummary(replay, context);
    }
    case "placement": {
      const placement = parsePlacementResult(result);
      return placement === null ? null : renderPlacement(placement, runUrl, context);
    }
    case "failures": {
      const failures = parseFailuresResult(result);
      return failures === null ? null : renderFailures(failures, context);
    }
    case "whatif": {
      const whatIf = parseWhatIfResult(result);
      return whatIf === null ? null : renderWhatIf(whatIf, run.id, context);
    }
    default:
      return null;
  }
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

  const bars = histogramBars(result);
  const caption = t("hopStats.histogramCaption");
  const histogram = chartFigure(
    doc,
    "hop-histogram",
    caption,
    barChartOption({
      title: caption,
      categoryName: t("hopStats.hopsAxis"),
      categories: bars.map((bar) => numbers.integer(bar.hops)),
      series: [{ name: t("hopStats.pairs"), values: bars.map((bar) => bar.pairs) }],
      value: {
        name: t("hopStats.pairs"),
        format: (pairs) => numbers.integer(pairs),
        tooltip: (pairs) => `${numbers.integer(pairs)} (${numbers.percent(result.pairs > 0 ? pairs / result.pairs : 0)})`,
      },
    }),
    "svg",
    220,
  ).figure;

  // The workspace says here how the map shows the result (hops from one card).
  return element(doc, "div", { class: "hop-stats" }, [summary, histogram, marksStatus(doc)]);
}

const BOUND_LABELS: Readonly<Record<string, MessageKey>> = {
  latency: "collective.bound.latency",
  bandwidth: "collective.bound.bandwidth",
};

function renderCollective(result: CollectiveResult, { doc, t, numbers }: RenderContext): HTMLElement {
  const duration = (seconds: number) => formatDuration(seconds, numbers, t);
  const bytes = (count: number) => formatDecimalByteSize(count, numbers, t);
  const boundKey = BOUND_LABELS[result.bound];
  const algorithm = result.protocol === null ? result.algorithm : `${result.algorithm} (${result.protocol})`;
  const parts: HTMLElement[] = [
    element(doc, "p", { class: "coll-headline" }, [
      t("collective.headline", {
        algorithm,
        time: duration(result.timeS),
        algbw: formatGBps(result.algbwGBps, numbers, t),
        busbw: formatGBps(result.busbwGBps, numbers, t),
        bound: boundKey === undefined ? result.bound : t(boundKey),
      }),
    ]),
    element(doc, "p", { class: "coll-subject muted" }, [
      t("collective.subject", {
        collective: result.collective,
        size: bytes(result.sizeBytes),
        ranks: numbers.integer(result.ranks),
      }),
    ]),
  ];

  const summary: [string, string][] = [];
  if (result.latencyS !== null) {
    summary.push([t("collective.latencyPart"), duration(result.latencyS)]);
  }
  if (result.bandwidthS !== null) {
    summary.push([t("collective.bandwidthPart"), duration(result.bandwidthS)]);
  }
  if (result.maxLinkUtilization !== null) {
    summary.push([t("collective.maxUtilisation"), numbers.percent(result.maxLinkUtilization)]);
  }
  if (summary.length > 0) {
    parts.push(keyValueList(doc, summary));
  }

  if (result.bottleneck !== null) {
    const link = bottleneckLink(result.bottleneck);
    parts.push(
      element(doc, "p", { class: "coll-bottleneck" }, [
        link === null
          ? t("collective.noBottleneck")
          : t("collective.bottleneck", {
              link: link.domain === null ? link.linkClass : t("collective.linkInDomain", { linkClass: link.linkClass, domain: link.domain }),
              utilisation: numbers.percent(result.bottleneck.utilization),
            }),
      ]),
    );
  }

  const choice = result.choice;
  if (choice !== null) {
    const bars = candidateBars(choice);
    // The server's reason is English; the same facts are told from the catalogue (the times are
    // in the chart below, the algorithms left out in their table).
    if (bars.length > 0) {
      parts.push(element(doc, "p", { class: "coll-reason" }, [t("collective.reason", { algorithm, count: numbers.integer(bars.length) })]));
    }
    if (bars.length > 0) {
      const caption = t("collective.candidatesCaption");
      parts.push(
        chartFigure(
          doc,
          "coll-candidates",
          caption,
          barChartOption({
            title: caption,
            categoryName: t("collective.algorithmAxis"),
            categories: bars.map((bar) => bar.algorithm),
            series: [{ name: t("collective.timeAxis"), values: bars.map((bar) => bar.timeS) }],
            value: { name: t("collective.timeAxis"), format: duration },
            horizontal: true,
            highlighted: bars.flatMap((bar, index) => (bar.fastest ? [index] : [])),
          }),
          "svg",
          Math.max(160, 48 + bars.length * 28),
        ).figure,
      );
    }
    const skipped = skippedAlgorithms(choice, resolveLanguage(doc.documentElement.lang));
    if (skipped.length > 0) {
      parts.push(
        element(doc, "div", { class: "coll-skipped" }, [
          element(doc, "h4", {}, [t("collective.skippedCaption")]),
          element(
            doc,
            "ul",
            {},
            skipped.map(([algorithm, why]) => element(doc, "li", {}, [element(doc, "strong", {}, [algorithm]), `: ${why}`])),
          ),
        ]),
      );
    }
  }

  if (result.hottestLinks.length > 0) {
    const header = (["collective.from", "collective.to", "collective.class"] as const).map((key) => element(doc, "th", {}, [t(key)]));
    const numeric = (["collective.utilisation", "collective.bytes"] as const).map((key) =>
      element(doc, "th", { class: "num" }, [t(key)]),
    );
    parts.push(
      element(doc, "table", { class: "data coll-links" }, [
        element(doc, "caption", {}, [t("collective.hottestCaption")]),
        element(doc, "thead", {}, [element(doc, "tr", {}, [...header, ...numeric])]),
        element(
          doc,
          "tbody",
          {},
          result.hottestLinks.map((link) =>
            element(doc, "tr", {}, [
              element(doc, "td", {}, [link.fromName]),
              element(doc, "td", {}, [link.toName]),
              element(doc, "td", {}, [link.linkClass]),
              element(doc, "td", { class: "num" }, [numbers.percent(link.utilization)]),
              element(doc, "td", { class: "num" }, [bytes(link.bytes)]),
            ]),
          ),
        ),
      ]),
    );
  }

  return element(doc, "div", { class: "collective" }, parts);
}
