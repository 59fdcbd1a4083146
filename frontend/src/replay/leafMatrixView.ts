// The leaf-to-leaf traffic heatmap under the replay player: an ECharts heatmap
// like the other views (utilisationCharts.ts leafMatrixOption: labelled axes,
// a viridis scale of bytes, a tooltip with both groups' names and the bytes),
// redrawn per frame; mounted again only when the frame's groups change. Hidden
// while frames carry no `leaf_matrix`.

import { mountChart, type Chart } from "../charts/chart";
import { element } from "../core/dom";
import type { NumberFormatters } from "../core/format";
import type { Translate } from "../core/i18n";
import type { LeafMatrixData } from "./frames";
import { decodeLeafMatrix } from "./leafMatrix";
import { CANVAS_CELLS, heatmapHeight, leafMatrixOption } from "./utilisationCharts";

export interface LeafMatrixViewContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly numbers: NumberFormatters;
}

export interface LeafMatrixView {
  readonly element: HTMLElement;
  /** One frame's matrix; null (or undecodable bytes) hides the view. */
  show(data: LeafMatrixData | null): void;
}

export function mountLeafMatrixView(context: LeafMatrixViewContext): LeafMatrixView {
  const { doc, t, numbers } = context;
  const host = element(doc, "div", { class: "util-leaf-chart", role: "img", "aria-label": t("views.leafCaption") });
  const figure = element(doc, "figure", { class: "util-figure util-leaf-figure" }, [element(doc, "figcaption", { class: "muted" }, [t("views.leafCaption")]), host]);
  figure.hidden = true;
  let chart: Chart | null = null;
  /** The groups the chart was mounted for. */
  let groupsKey: string | null = null;

  return {
    element: figure,
    show(data) {
      const matrix = decodeLeafMatrix(data);
      figure.hidden = matrix === null;
      if (matrix === null) {
        return;
      }
      const option = leafMatrixOption(matrix, { t, numbers });
      const key = matrix.groups.join("\n");
      if (chart !== null && key === groupsKey) {
        chart.update(option);
        return;
      }
      chart?.dispose();
      groupsKey = key;
      const g = matrix.groups.length;
      chart = mountChart(host, option, g * g > CANVAS_CELLS ? "canvas" : "svg", heatmapHeight(g));
    },
  };
}
