// Renders a failure what-if: what was evaluated, the worst failure in a
// sentence (with the cards each failed switch serves), the ranking with
// "Show on map" per row, and the links whose failure would hurt most.

import { chartFigure } from "../charts/figure";
import { barChartOption } from "../charts/options";
import { element } from "../core/dom";
import type { FailureOutcome, FailuresResult } from "./failures";
import { formatDecimalByteSize } from "../core/format";
import type { MessageKey } from "../core/i18n";
import { dataTable, marksStatus, showOnMapButton, type RenderContext } from "./resultDom";

/** Bars in the ranking's chart; the table below lists every candidate. */
const MAX_CHARTED_FAILURES = 20;

const KIND_LABELS: Readonly<Record<string, MessageKey>> = {
  switch: "failures.kind.switch",
  leaf: "failures.kind.leaf",
  link: "failures.kind.link",
};

/** "1.52×"; "cannot run" when the workload has no time after the failure. */
function factorText(value: number | null, cannotRun: boolean, { t, numbers }: RenderContext): string {
  if (value === null) {
    return cannotRun ? t("failures.cannotRun") : "—";
  }
  return t("format.factor", { value: numbers.decimal(value, 2) });
}

/** What the worst failure does, as one sentence. */
export function worstSentence(outcome: FailureOutcome, collective: string, context: RenderContext): string {
  const { t, numbers } = context;
  const effects: string[] = [];
  if (outcome.cardsCutOffCount > 0) {
    effects.push(t("failures.effect.cutOff", { count: numbers.integer(outcome.cardsCutOffCount) }));
  }
  if (outcome.degradedPairs > 0) {
    effects.push(t("failures.effect.degraded", { count: numbers.integer(outcome.degradedPairs) }));
  }
  const workload = outcome.workload;
  if (workload.afterTimeS === null && workload.timeChange === null) {
    effects.push(t("failures.effect.cannotRun", { collective }));
  } else if (workload.timeChange !== null && Math.abs(workload.timeChange - 1) > 1e-9) {
    effects.push(
      t("failures.effect.time", {
        collective,
        factor: factorText(workload.timeChange, false, context),
        busbw: factorText(workload.busbwChange, false, context),
      }),
    );
  }
  if (workload.ranksLost > 0) {
    effects.push(t("failures.effect.ranksLost", { count: numbers.integer(workload.ranksLost) }));
  }
  if (effects.length === 0) {
    effects.push(t("failures.effect.none"));
  }
  return t("failures.worst", { elements: outcome.elements.join(t("list.separator")), effects: effects.join(t("list.separator")) });
}

export function renderFailures(result: FailuresResult, context: RenderContext): HTMLElement {
  const { doc, t, numbers } = context;
  const bytes = (count: number) => formatDecimalByteSize(count, numbers, t);
  const parts: HTMLElement[] = [];
  const workload = result.workload;
  const collective = workload?.collective ?? "";
  const status = marksStatus(doc);

  if (workload !== null) {
    const against = t("failures.workload", {
      collective: workload.collective,
      size: workload.sizeBytes === null ? "—" : bytes(workload.sizeBytes),
      algorithm: workload.algorithm,
      ranks: workload.ranks === null ? t("failures.allCards") : t("failures.ranks", { count: numbers.integer(workload.ranks) }),
    });
    const kindKey = KIND_LABELS[result.kind];
    parts.push(
      element(doc, "p", { class: "failures-subject muted" }, [
        kindKey === undefined
          ? t("failures.subjectChosen", { workload: against })
          : t("failures.subject", { count: numbers.integer(result.evaluated), kind: t(kindKey), workload: against }),
      ]),
    );
  }

  parts.push(
    element(doc, "p", { class: "failures-worst" }, [result.worst === null ? t("failures.noWorst") : worstSentence(result.worst, collective, context)]),
  );
  const blast = [
    ...(result.worst?.blastRadius ?? []).map((entry) => ({ entry, key: "failures.blast" as const })),
    ...(result.worst?.blastByBlock ?? []).map((entry) => ({ entry, key: "failures.blastBlock" as const })),
  ];
  if (blast.length > 0) {
    parts.push(
      element(
        doc,
        "ul",
        { class: "failures-blast" },
        blast.map(({ entry, key }) =>
          element(doc, "li", {}, [
            t(key, { element: entry.element, cards: numbers.integer(entry.cardsAttached), cut: numbers.integer(entry.cardsCutOff) }),
          ]),
        ),
      ),
    );
  }

  // A search ranks many candidates: the worst ones by how much slower the workload gets.
  const charted = result.ranking.slice(0, MAX_CHARTED_FAILURES);
  if (charted.length > 1) {
    const caption = t("failures.chartCaption", { count: numbers.integer(charted.length) });
    parts.push(
      chartFigure(
        doc,
        "failures-chart",
        caption,
        barChartOption({
          title: caption,
          categoryName: t("failures.elements"),
          categories: charted.map((outcome) => outcome.elements.join(t("list.separator"))),
          series: [{ name: t("failures.timeChange"), values: charted.map((outcome) => outcome.workload.timeChange ?? Number.NaN) }],
          value: { name: t("failures.timeChangeAxis"), format: (value) => t("format.factor", { value: numbers.decimal(value, 2) }), log: false },
          horizontal: true,
          highlighted: [0],
        }),
        "svg",
        Math.max(160, 48 + charted.length * 24),
      ).figure,
    );
  }

  if (result.ranking.length > 0) {
    const marks = context.marks;
    parts.push(
      dataTable(
        doc,
        "failures-ranking",
        t("failures.rankingCaption"),
        [
          { label: "#", numeric: true },
          { label: t("failures.elements") },
          { label: t("failures.linksDown"), numeric: true },
          { label: t("failures.cardsCutOff"), numeric: true },
          { label: t("failures.degradedPairs"), numeric: true },
          { label: t("failures.timeChange"), numeric: true },
          { label: t("failures.busbwChange"), numeric: true },
          ...(marks === undefined ? [] : [{ label: t("marks.map") }]),
        ],
        result.ranking.map((outcome, index) => {
          const cannotRun = outcome.workload.afterTimeS === null && outcome.workload.timeChange === null;
          const names = outcome.elements.join(t("list.separator"));
          return {
            ...(index === 0 ? { className: "worst" } : {}),
            cells: [
              numbers.integer(index + 1),
              names,
              numbers.integer(outcome.linksDown),
              numbers.integer(outcome.cardsCutOffCount),
              numbers.integer(outcome.degradedPairs),
              factorText(outcome.workload.timeChange, cannotRun, context),
              factorText(outcome.workload.busbwChange, cannotRun, context),
              ...(marks === undefined
                ? []
                : [showOnMapButton(doc, t("marks.show"), t("failures.showOnMapNamed", { elements: names }), status, () => marks.showFailure(outcome.elements))]),
            ],
          };
        }),
      ),
      status,
    );
  }

  if (result.linkImpact.length > 0) {
    // link_impact names the ends only; a class column only when the entries carry one.
    const withClass = result.linkImpact.some((link) => link.linkClass !== "");
    parts.push(
      dataTable(
        doc,
        "failures-impact",
        t("failures.impactCaption"),
        [
          { label: t("collective.from") },
          { label: t("collective.to") },
          ...(withClass ? [{ label: t("collective.class") }] : []),
          { label: t("collective.bytes"), numeric: true },
          { label: t("failures.cardsAffected"), numeric: true },
        ],
        result.linkImpact.map((link) => ({
          cells: [
            link.fromName,
            link.toName,
            ...(withClass ? [link.linkClass] : []),
            bytes(link.bytes),
            link.cardsAffected === null ? "—" : numbers.integer(link.cardsAffected),
          ],
        })),
      ),
    );
  }

  return element(doc, "div", { class: "failures" }, parts);
}
