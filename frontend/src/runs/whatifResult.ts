// Renders a staged scale-out what-if: the knee (where scaling breaks, why, and the fix),
// the report's links, busbw against cards per collective (one line per design, the knee
// marked) and the stages in a table. The full report stays on its own page.

import { chartFigure } from "../charts/figure";
import { lineChartOption } from "../charts/options";
import { element } from "../core/dom";
import { formatDecimalByteSize, formatGBps, formatSignificant } from "../core/format";
import { dataTable, keyValueList, type RenderContext } from "./resultDom";
import { isKneeStage, referenceSize, stagesByAlternative, whatIfCollectives, type WhatIfResult } from "./whatif";

/** The report page of run `id` (Django's "whatif-report") and its downloads ("whatif-report-download"). */
export function whatIfReportLinks(id: number): { page: string; download: (format: "pdf" | "csv" | "json") => string } {
  return { page: `/runs/${String(id)}/report/`, download: (format) => `/runs/${String(id)}/report.${format}` };
}

export function renderWhatIf(result: WhatIfResult, runId: number, context: RenderContext): HTMLElement {
  const { doc, t, numbers } = context;
  const GBps = (value: number) => formatGBps(value, numbers, t);
  const parts: HTMLElement[] = [];
  const knee = result.knee;

  parts.push(
    element(doc, "p", { class: knee === null ? "whatif-headline" : "whatif-headline whatif-knee" }, [
      knee === null
        ? t("whatif.noKnee")
        : knee.explanation !== ""
          ? knee.explanation
          : t("whatif.knee", { cards: numbers.integer(knee.cards ?? 0), alternative: knee.alternative, metric: knee.metric }),
    ]),
  );
  if (knee?.remedy != null) {
    parts.push(
      keyValueList(doc, [
        [t("whatif.symptom"), knee.remedy.symptom],
        [t("whatif.cause"), knee.remedy.likelyCause],
        [t("whatif.check"), knee.remedy.check],
        [t("whatif.fix"), knee.remedy.fix],
      ]),
    );
  }

  const links = whatIfReportLinks(runId);
  parts.push(
    element(doc, "p", { class: "whatif-links" }, [
      element(doc, "a", { class: "btn btn-primary", href: links.page }, [t("whatif.openReport")]),
      " ",
      element(doc, "a", { class: "btn", href: links.download("pdf") }, [t("whatif.pdf")]),
      " ",
      element(doc, "a", { class: "btn", href: links.download("csv") }, [t("whatif.csv")]),
      " ",
      element(doc, "a", { class: "btn", href: links.download("json"), download: "" }, [t("whatif.json")]),
    ]),
  );

  const designs = stagesByAlternative(result);
  const collectives = whatIfCollectives(result);
  const charts = collectives.flatMap((collective) => {
    const size = referenceSize(result, collective);
    if (size === null) {
      return [];
    }
    const sizeText = formatDecimalByteSize(size, numbers, t);
    const series = [...designs].map(([alternative, stages]) => ({
      name: alternative,
      points: stages.map((stage) => [stage.cards, stage.busbwGBps.get(collective)?.get(size) ?? Number.NaN] as const),
    }));
    const kneeHere = knee !== null && knee.metric === collective && knee.cards !== null;
    const title = t("whatif.busbwCaption", { collective, size: sizeText });
    return [
      chartFigure(
        doc,
        "whatif-busbw",
        title,
        lineChartOption({
          title,
          x: { name: t("whatif.cardsAxis"), format: (value) => numbers.integer(value), log: true },
          y: { name: t("whatif.busbwAxis"), format: GBps, min: 0 },
          series,
          ...(kneeHere ? { marker: { x: knee.cards ?? 0, label: t("whatif.kneeMarker", { alternative: knee.alternative }) } } : {}),
        }),
        "svg",
        240,
      ).figure,
    ];
  });
  if (charts.length > 0) {
    parts.push(element(doc, "div", { class: "chart-grid" }, charts));
  }

  const shown = collectives.filter((collective) => referenceSize(result, collective) !== null);
  parts.push(
    dataTable(
      doc,
      "whatif-stages",
      t("whatif.stagesCaption"),
      [
        { label: t("whatif.design") },
        { label: t("whatif.factor"), numeric: true },
        { label: t("hopStats.cards"), numeric: true },
        { label: t("whatif.tiers"), numeric: true },
        { label: t("hopStats.switches"), numeric: true },
        { label: t("hopStats.diameter"), numeric: true },
        { label: t("whatif.bisection"), numeric: true },
        { label: t("whatif.power"), numeric: true },
        ...shown.map((collective) => ({
          label: t("whatif.busbwColumn", { collective, size: formatDecimalByteSize(referenceSize(result, collective) ?? 0, numbers, t) }),
          numeric: true,
        })),
      ],
      [...designs.values()].flat().map((stage) => {
        const switches = [...stage.switches.values()].reduce((sum, count) => sum + count, 0);
        const byTier = [...stage.switches].map(([tier, count]) => `${numbers.integer(count)} ${tier}`).join(t("list.separator"));
        const optional = (value: number | null, format: (v: number) => string) => (value === null ? "—" : format(value));
        return {
          ...(isKneeStage(stage, knee) ? { className: "knee" } : {}),
          cells: [
            stage.alternative,
            t("format.factor", { value: Number.isInteger(stage.factor) ? numbers.integer(stage.factor) : numbers.decimal(stage.factor, 2) }),
            numbers.integer(stage.cards),
            optional(stage.tiers, numbers.integer),
            element(doc, "span", { title: byTier }, [numbers.integer(switches)]),
            optional(stage.diameterHops, numbers.integer),
            optional(stage.bisectionGBps, GBps),
            optional(stage.powerKw, (kw) => t("whatif.kw", { value: formatSignificant(kw, numbers) })),
            ...shown.map((collective) => optional(stage.busbwGBps.get(collective)?.get(referenceSize(result, collective) ?? 0) ?? null, GBps)),
          ],
        };
      }),
    ),
  );
  return element(doc, "div", { class: "whatif-result" }, parts);
}
