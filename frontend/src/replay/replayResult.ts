// Renders a replay run's summary (twin/replay/summary.py): duration, events,
// the cost cache, the peak congestion with its time and link, time per
// operation, the busiest links and the utilisation per link class.

import { chartFigure } from "../charts/figure";
import { barChartOption } from "../charts/options";
import { element } from "../core/dom";
import { formatDecimalByteSize, formatDuration } from "../core/format";
import type { ReplaySummary } from "./replay";
import { dataTable, keyValueList } from "../runs/resultDom";
import type { RenderContext } from "../runs/resultDom";

export function renderReplaySummary(summary: ReplaySummary, { doc, t, numbers }: RenderContext): HTMLElement {
  const duration = (seconds: number) => formatDuration(seconds, numbers, t);
  const bytes = (count: number) => formatDecimalByteSize(count, numbers, t);
  const factor = (value: number) => t("format.factor", { value: numbers.decimal(value, 2) });
  const { events } = summary;

  const parts: HTMLElement[] = [
    element(doc, "p", { class: "replay-headline" }, [
      summary.trace !== null && summary.fabric !== null
        ? t("replay.headline", { trace: summary.trace, fabric: summary.fabric, events: numbers.integer(events.total), duration: duration(summary.durationS) })
        : t("replay.headlinePlain", { events: numbers.integer(events.total), duration: duration(summary.durationS) }),
    ]),
  ];

  const rows: [string, string][] = [[t("replay.duration"), duration(summary.durationS)]];
  rows.push([
    t("replay.events"),
    events.collectives !== null && events.flows !== null
      ? t("replay.eventsSplit", { total: numbers.integer(events.total), collectives: numbers.integer(events.collectives), flows: numbers.integer(events.flows) })
      : numbers.integer(events.total),
  ]);
  if (events.stretched !== null) {
    const share = events.total > 0 ? events.stretched / events.total : 0;
    rows.push([t("replay.stretched"), `${numbers.integer(events.stretched)} (${numbers.percent(share)})`]);
  }
  if (events.distinctOperations !== null) {
    rows.push([t("replay.distinct"), numbers.integer(events.distinctOperations)]);
  }
  if (events.cacheHitRate !== null) {
    rows.push([t("replay.cacheHitRate"), numbers.percent(events.cacheHitRate)]);
  }
  parts.push(keyValueList(doc, rows));

  const peak = summary.peak;
  if (peak !== null) {
    parts.push(
      element(doc, "p", { class: "replay-peak" }, [
        peak.from === null || peak.to === null || peak.congestion <= 0
          ? t("replay.noPeak")
          : t("replay.peak", {
              congestion: numbers.percent(peak.congestion),
              time: duration(peak.tS ?? 0),
              from: peak.from,
              to: peak.to,
              linkClass: peak.linkClass ?? "",
            }),
      ]),
    );
  }

  if (summary.operations.length > 0) {
    const caption = t("replay.operationsChartCaption");
    parts.push(
      chartFigure(
        doc,
        "replay-operations-chart",
        caption,
        barChartOption({
          title: caption,
          categoryName: t("replay.operation"),
          categories: summary.operations.map((operation) => operation.name),
          series: [
            { name: t("replay.seriesRun"), values: summary.operations.map((operation) => operation.timeS) },
            { name: t("replay.seriesAlone"), values: summary.operations.map((operation) => operation.soloS) },
          ],
          value: { name: t("replay.timeAxis"), format: duration },
          horizontal: true,
        }),
        "svg",
        Math.max(180, 64 + summary.operations.length * 36),
      ).figure,
    );
  }

  if (summary.operations.length > 0) {
    parts.push(
      dataTable(
        doc,
        "replay-operations",
        t("replay.operationsCaption"),
        [
          { label: t("replay.operation") },
          { label: t("replay.count"), numeric: true },
          { label: t("collective.bytes"), numeric: true },
          { label: t("replay.timeRun"), numeric: true },
          { label: t("replay.timeAlone"), numeric: true },
          { label: t("replay.stretch"), numeric: true },
          { label: t("replay.algorithms") },
        ],
        summary.operations.map((operation) => ({
          cells: [
            operation.name,
            numbers.integer(operation.count),
            bytes(operation.bytes),
            duration(operation.timeS),
            duration(operation.soloS),
            factor(operation.stretch),
            operation.algorithms.map(([name, count]) => `${name} × ${numbers.integer(count)}`).join(t("list.separator")),
          ],
        })),
      ),
    );
  }

  if (summary.busiestLinks.length > 0) {
    parts.push(
      dataTable(
        doc,
        "replay-busiest",
        t("replay.busiestCaption"),
        [
          { label: t("collective.from") },
          { label: t("collective.to") },
          { label: t("collective.class") },
          { label: t("collective.bytes"), numeric: true },
          { label: t("collective.utilisation"), numeric: true },
        ],
        summary.busiestLinks.map((link) => ({
          cells: [link.from, link.to, link.linkClass, bytes(link.bytes), numbers.percent(link.utilization)],
        })),
      ),
    );
  }

  if (summary.linkClasses.length > 0) {
    parts.push(
      dataTable(
        doc,
        "replay-classes",
        t("replay.classesCaption"),
        [
          { label: t("collective.class") },
          { label: t("hopStats.links"), numeric: true },
          { label: t("collective.bytes"), numeric: true },
          { label: t("replay.meanUtilisation"), numeric: true },
          { label: t("replay.maxUtilisation"), numeric: true },
        ],
        summary.linkClasses.map((load) => ({
          cells: [load.name, numbers.integer(load.links), bytes(load.bytes), numbers.percent(load.meanUtilization), numbers.percent(load.maxUtilization)],
        })),
      ),
    );
  }

  return element(doc, "div", { class: "replay-summary" }, parts);
}
