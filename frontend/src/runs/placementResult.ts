// Renders a placement run: the strategies compared per parallel dimension
// (best highlighted, with their exports and a "Show on map" each), the
// warnings, the best placement's dimensions and its bottleneck links.

import { chartFigure } from "../charts/figure";
import { barChartOption } from "../charts/options";
import { element } from "../core/dom";
import { resolveLanguage } from "../core/i18n";
import { formatDecimalByteSize, formatDuration, formatGBps } from "../core/format";
import {
  PLACEMENT_FORMATS,
  bestSpeedup,
  placementDimensions,
  placementExportUrl,
  type ArcRecord,
  type Dimension,
  type PlacementResult,
} from "./placement";
import { dataTable, marksStatus, showOnMapButton, type RenderContext } from "./resultDom";

const DIMENSION_LABELS = { tp: "placement.dim.tp", pp: "placement.dim.pp", dp: "placement.dim.dp", ep: "placement.dim.ep" } as const;
const FORMAT_LABELS = { csv: "placement.format.csv", hostlist: "placement.format.hostlist", hostfile: "placement.format.hostfile" } as const;

export function arcTable(doc: Document, className: string, caption: string, links: readonly ArcRecord[], context: RenderContext): HTMLTableElement {
  const { t, numbers } = context;
  return dataTable(
    doc,
    className,
    caption,
    [
      { label: t("collective.from") },
      { label: t("collective.to") },
      { label: t("collective.class") },
      { label: t("collective.bytes"), numeric: true },
      { label: t("collective.utilisation"), numeric: true },
    ],
    links.map((link) => ({
      cells: [
        link.fromName,
        link.toName,
        link.linkClass,
        link.bytes === null ? "—" : formatDecimalByteSize(link.bytes, numbers, t),
        numbers.percent(link.utilization),
      ],
    })),
  );
}

export function renderPlacement(result: PlacementResult, runUrl: string, context: RenderContext): HTMLElement {
  const { doc, t, numbers } = context;
  const duration = (seconds: number) => formatDuration(seconds, numbers, t);
  const dimensions = placementDimensions(result);
  const best = result.best === null ? undefined : result.results.get(result.best);
  const parts: HTMLElement[] = [];
  const status = marksStatus(doc);

  if (best !== undefined) {
    const speedup = bestSpeedup(result);
    parts.push(
      element(doc, "p", { class: "placement-headline" }, [
        speedup === null
          ? t("placement.best", { strategy: best.strategy, time: duration(best.communicationTimeS) })
          : t("placement.bestFaster", {
              strategy: best.strategy,
              time: duration(best.communicationTimeS),
              factor: t("format.factor", { value: numbers.decimal(speedup.factor, 2) }),
              slowest: speedup.slowest,
            }),
      ]),
    );
  }
  if (result.job !== null) {
    const { tp, pp, dp, ep, world } = result.job;
    parts.push(
      element(doc, "p", { class: "placement-job muted" }, [
        t("placement.job", { tp: numbers.integer(tp), pp: numbers.integer(pp), dp: numbers.integer(dp), ep: numbers.integer(ep), ranks: numbers.integer(world) }),
      ]),
    );
  }

  const strategies = [...result.results.values()];
  if (strategies.length > 0 && dimensions.length > 0) {
    const caption = t("placement.chartCaption");
    parts.push(
      chartFigure(
        doc,
        "placement-chart",
        caption,
        barChartOption({
          title: caption,
          categoryName: t("placement.strategy"),
          categories: strategies.map((strategy) => strategy.strategy),
          series: dimensions.map((dimension) => ({
            name: t(DIMENSION_LABELS[dimension]),
            values: strategies.map((strategy) => strategy.dimensions[dimension]?.timeS ?? Number.NaN),
          })),
          value: { name: t("placement.timeAxis"), format: duration },
        }),
        "svg",
        240,
      ).figure,
    );
  }

  const dimensionCell = (time: number | undefined): string => (time === undefined ? "—" : duration(time));
  parts.push(
    dataTable(
      doc,
      "placement-compare",
      t("placement.compareCaption"),
      [
        { label: t("placement.strategy") },
        ...dimensions.map((dimension: Dimension) => ({ label: t(DIMENSION_LABELS[dimension]), numeric: true })),
        { label: t("placement.total"), numeric: true },
        { label: t("placement.export") },
        ...(context.marks === undefined ? [] : [{ label: t("marks.map") }]),
      ],
      [...result.results.values()].map((strategy) => {
        const isBest = strategy === best;
        const exports = element(
          doc,
          "span",
          { class: "placement-exports" },
          PLACEMENT_FORMATS.flatMap((format, index) => [
            index === 0 ? null : " · ",
            element(doc, "a", { href: placementExportUrl(runUrl, strategy.strategy, format), download: "" }, [t(FORMAT_LABELS[format])]),
          ]),
        );
        const marks = context.marks;
        return {
          ...(isBest ? { className: "best" } : {}),
          cells: [
            isBest
              ? element(doc, "span", {}, [element(doc, "strong", {}, [strategy.strategy]), " ", element(doc, "span", { class: "badge badge-best" }, [t("placement.bestBadge")])])
              : strategy.strategy,
            ...dimensions.map((dimension) => dimensionCell(strategy.dimensions[dimension]?.timeS)),
            duration(strategy.communicationTimeS),
            exports,
            ...(marks === undefined
              ? []
              : [
                  showOnMapButton(doc, t("marks.show"), t("placement.showOnMapNamed", { strategy: strategy.strategy }), status, () =>
                    marks.showPlacement(runUrl, strategy.strategy),
                  ),
                ]),
          ],
        };
      }),
    ),
  );
  parts.push(status);

  const language = resolveLanguage(doc.documentElement.lang);
  const warnings = [...result.results.values()].flatMap((strategy) =>
    (strategy.warningsByLanguage?.[language] ?? strategy.warnings).map((warning) => `${strategy.strategy}: ${warning}`),
  );
  if (warnings.length > 0) {
    parts.push(element(doc, "ul", { class: "warnings placement-warnings" }, warnings.map((warning) => element(doc, "li", {}, [warning]))));
  }

  if (best !== undefined) {
    const shown = dimensions.filter((dimension) => best.dimensions[dimension] !== undefined);
    if (shown.length > 0) {
      parts.push(
        dataTable(
          doc,
          "placement-dimensions",
          t("placement.dimensionsCaption", { strategy: best.strategy }),
          [
            { label: t("placement.dimension") },
            { label: t("placement.collective") },
            { label: t("placement.groups"), numeric: true },
            { label: t("placement.time"), numeric: true },
            { label: t("placement.busbw"), numeric: true },
            { label: t("placement.hops"), numeric: true },
            { label: t("placement.scaleOut") },
            { label: t("placement.bottleneck") },
          ],
          shown.map((dimension) => {
            const entry = best.dimensions[dimension]!;
            const bottleneck = entry.bottleneck;
            return {
              cells: [
                t(DIMENSION_LABELS[dimension]),
                entry.algorithm === "" ? entry.collective : `${entry.collective} (${entry.algorithm})`,
                entry.groups === null || entry.groupSize === null
                  ? "—"
                  : t("placement.groupsOf", { groups: numbers.integer(entry.groups), size: numbers.integer(entry.groupSize) }),
                duration(entry.timeS),
                entry.busbwGBps === null ? "—" : formatGBps(entry.busbwGBps, numbers, t),
                entry.meanSwitchHops === null
                  ? "—"
                  : t("placement.hopsValue", { mean: numbers.decimal(entry.meanSwitchHops, 1), max: numbers.integer(entry.maxSwitchHops ?? entry.meanSwitchHops) }),
                entry.crossesScaleOut ? t("placement.yes") : t("placement.no"),
                bottleneck === null
                  ? "—"
                  : t("placement.bottleneckLink", { from: bottleneck.fromName, to: bottleneck.toName, utilisation: numbers.percent(bottleneck.utilization) }),
              ],
            };
          }),
        ),
      );
    }
    if (best.bottleneckLinks.length > 0) {
      parts.push(arcTable(doc, "placement-bottlenecks", t("placement.bottlenecksCaption", { strategy: best.strategy }), best.bottleneckLinks, context));
    }
  }

  return element(doc, "div", { class: "placement" }, parts);
}
