// Renders a finished run's outcome: the error, a hop_stats, collective,
// replay, placement or failures report, or a generic key/value view for kinds
// this frontend does not know yet.

import {
  bottleneckLink,
  candidateBars,
  parseCollectiveResult,
  skippedAlgorithms,
  type CollectiveResult,
} from "./collective";
import { element } from "../core/dom";
import { parseFailuresResult } from "./failures";
import { renderFailures } from "./failuresResult";
import { formatDecimalByteSize, formatDuration, formatGBps } from "../core/format";
import { histogramBars, isHopStatsResult, type HopStatsResult } from "./hopStats";
import type { MessageKey } from "../core/i18n";
import { parsePlacementResult } from "./placement";
import { renderPlacement } from "./placementResult";
import { parseReplaySummary } from "../replay/replay";
import { renderReplaySummary } from "../replay/replayResult";
import { barRow, keyValueList, type RenderContext } from "./resultDom";
import type { Run } from "./runState";


/** `runUrl` is the run's API URL (exports and detail hang off it); by default /api/runs/<id>/. */
export function renderRunOutcome(run: Run, context: RenderContext, runUrl = ""): HTMLElement {
  const { doc, t } = context;
  if (run.status === "failed") {
    return element(doc, "div", { class: "error" }, [run.error ?? t("run.failedWithoutDetail")]);
  }
  if (run.status === "cancelled") {
    return element(doc, "p", { class: "muted run-cancelled" }, [run.error ?? t("run.cancelledWithoutDetail")]);
  }
  if (run.result === null) {
    return element(doc, "p", { class: "muted" }, [t("run.noResult")]);
  }
  if (run.kind === "hop_stats" && isHopStatsResult(run.result)) {
    return renderHopStats(run.result, context);
  }
  const collective = run.kind === "collective" ? parseCollectiveResult(run.result) : null;
  if (collective !== null) {
    return renderCollective(collective, context);
  }
  const replay = run.kind === "replay" ? parseReplaySummary(run.result) : null;
  if (replay !== null) {
    return renderReplaySummary(replay, context);
  }
  const placement = run.kind === "placement" ? parsePlacementResult(run.result) : null;
  if (placement !== null) {
    return renderPlacement(placement, runUrl === "" ? `/api/runs/${String(run.id)}/` : runUrl, context);
  }
  const failures = run.kind === "failures" ? parseFailuresResult(run.result) : null;
  if (failures !== null) {
    return renderFailures(failures, context);
  }
  return renderGeneric(run.result, doc);
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

  const rows = histogramBars(result).map((bar) =>
    barRow(
      doc,
      bar.hops === 1 ? t("hopStats.oneHopLabel") : t("hopStats.hopsLabel", { hops: bar.hops }),
      bar.scale,
      `${numbers.integer(bar.pairs)} (${numbers.percent(bar.share)})`,
    ),
  );
  const histogram = element(doc, "figure", { class: "hist" }, [
    element(doc, "figcaption", {}, [t("hopStats.histogramCaption")]),
    ...rows,
  ]);

  return element(doc, "div", { class: "hop-stats" }, [summary, histogram]);
}

const BOUND_LABELS: Readonly<Record<string, MessageKey>> = {
  latency: "collective.bound.latency",
  bandwidth: "collective.bound.bandwidth",
};

function renderCollective(result: CollectiveResult, { doc, t, numbers }: RenderContext): HTMLElement {
  const duration = (seconds: number) => formatDuration(seconds, numbers, t);
  const bytes = (count: number) => formatDecimalByteSize(count, numbers, t);
  const boundKey = BOUND_LABELS[result.bound];
  const parts: HTMLElement[] = [
    element(doc, "p", { class: "coll-headline" }, [
      t("collective.headline", {
        algorithm: result.protocol === null ? result.algorithm : `${result.algorithm} (${result.protocol})`,
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
    if (choice.reason !== "") {
      parts.push(element(doc, "p", { class: "coll-reason" }, [choice.reason]));
    }
    const bars = candidateBars(choice);
    if (bars.length > 0) {
      parts.push(
        element(doc, "figure", { class: "hist coll-candidates" }, [
          element(doc, "figcaption", {}, [t("collective.candidatesCaption")]),
          ...bars.map((bar) =>
            barRow(
              doc,
              bar.algorithm,
              bar.scale,
              bar.fastest ? t("collective.fastest", { time: duration(bar.timeS) }) : duration(bar.timeS),
              bar.fastest ? "hist-row fastest" : "hist-row",
            ),
          ),
        ]),
      );
    }
    const skipped = skippedAlgorithms(choice);
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
              element(doc, "td", {}, [link.from]),
              element(doc, "td", {}, [link.to]),
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
