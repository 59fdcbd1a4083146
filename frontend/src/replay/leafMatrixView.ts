// The leaf-to-leaf traffic heatmap under the replay player: a G x G canvas
// (one pixel per pair, one ImageData write per frame, stretched by CSS to
// about 360 px), axis labels up to 32 groups a side, a scale to the frame's
// busiest pair and a hover tooltip. Hidden while frames carry no
// `leaf_matrix`. Thin DOM wiring over leafMatrix.ts.

import { element } from "../core/dom";
import { formatDecimalByteSize, type NumberFormatters } from "../core/format";
import type { LeafMatrixData } from "./frames";
import type { Translate } from "../core/i18n";
import { axisLabels, decodeLeafMatrix, leafCellAt, MAX_LABELLED_GROUPS, paintLeafMatrix, RAMP_HIGH, RAMP_LOW, shareOfMax, type LeafMatrix } from "./leafMatrix";

/** CSS pixels a side of the drawn matrix. */
export const LEAF_MATRIX_PIXELS = 360;

export interface LeafMatrixViewContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly numbers: NumberFormatters;
  showTooltip(event: MouseEvent, text: string): void;
  hideTooltip(): void;
}

export interface LeafMatrixView {
  readonly element: HTMLElement;
  /** One frame's matrix; null (or undecodable bytes) hides the view. */
  show(data: LeafMatrixData | null): void;
}

/** Label font size: smaller as the cells get thinner. */
function labelPixels(groups: number): number {
  return Math.max(7, Math.min(11, Math.floor(LEAF_MATRIX_PIXELS / groups) - 1));
}

export function mountLeafMatrixView(context: LeafMatrixViewContext): LeafMatrixView {
  const { doc, t, numbers } = context;
  const canvas = element(doc, "canvas", { class: "util-leaf-matrix", role: "img", "aria-label": t("views.leafCaption") });
  const colLabels = element(doc, "div", { class: "util-leaf-cols", "aria-hidden": "true" });
  const rowLabels = element(doc, "div", { class: "util-leaf-rows", "aria-hidden": "true" });
  const corner = element(doc, "div", { class: "util-leaf-corner muted" }, [
    element(doc, "span", {}, [t("views.leafTo")]),
    element(doc, "span", {}, [t("views.leafFrom")]),
  ]);
  const grid = element(doc, "div", { class: "util-leaf-grid" }, [corner, colLabels, rowLabels, canvas]);
  const note = element(doc, "p", { class: "muted util-leaf-note" });
  const ramp = element(doc, "span", { class: "util-leaf-ramp" });
  ramp.style.background = `linear-gradient(to right, rgb(${RAMP_LOW.join(",")}), rgb(${RAMP_HIGH.join(",")}))`;
  const maxLabel = element(doc, "span", { class: "util-leaf-max" });
  const scale = element(doc, "div", { class: "util-leaf-scale" }, [
    element(doc, "span", {}, [formatDecimalByteSize(0, numbers, t)]),
    ramp,
    maxLabel,
  ]);
  const figure = element(doc, "figure", { class: "util-figure util-leaf-figure" }, [
    element(doc, "figcaption", { class: "muted" }, [t("views.leafCaption")]),
    note,
    grid,
    scale,
  ]);
  figure.hidden = true;
  canvas.style.width = `${LEAF_MATRIX_PIXELS}px`;
  canvas.style.height = `${LEAF_MATRIX_PIXELS}px`;

  let matrix: LeafMatrix | null = null;
  let image: ImageData | null = null;
  /** The groups the canvas and labels were built for. */
  let groupsKey: string | null = null;

  const layOut = (groups: readonly string[]): void => {
    const key = groups.join("\n");
    if (key === groupsKey) {
      return;
    }
    groupsKey = key;
    const g = groups.length;
    canvas.width = g;
    canvas.height = g;
    image = canvas.getContext("2d")?.createImageData(g, g) ?? null;
    const labelled = g <= MAX_LABELLED_GROUPS;
    grid.classList.toggle("util-leaf-unlabelled", !labelled);
    grid.style.fontSize = `${labelPixels(g)}px`;
    note.hidden = labelled;
    note.textContent = labelled ? "" : t("views.leafGroups", { count: numbers.integer(g) });
    const labels = labelled ? axisLabels(groups) : [];
    const label = (text: string, name: string): HTMLElement => element(doc, "span", { title: name }, [text]);
    colLabels.replaceChildren(...labels.map((text, i) => label(text, groups[i] ?? "")));
    rowLabels.replaceChildren(...labels.map((text, i) => label(text, groups[i] ?? "")));
  };

  canvas.addEventListener("mousemove", (event) => {
    if (matrix === null) {
      return;
    }
    const box = canvas.getBoundingClientRect();
    const cell = leafCellAt(event.clientX - box.left, event.clientY - box.top, box.width, box.height, matrix.groups.length);
    const bytes = cell === null ? Number.NaN : (matrix.bytes[cell.index] ?? Number.NaN);
    if (cell === null || Number.isNaN(bytes)) {
      context.hideTooltip();
      return;
    }
    context.showTooltip(
      event,
      t("views.leafTooltip", {
        from: matrix.groups[cell.row] ?? "",
        to: matrix.groups[cell.col] ?? "",
        bytes: formatDecimalByteSize(bytes, numbers, t),
        share: numbers.percent(shareOfMax(bytes, matrix.max)),
      }),
    );
  });
  canvas.addEventListener("mouseleave", () => {
    context.hideTooltip();
  });

  return {
    element: figure,
    show(data) {
      matrix = decodeLeafMatrix(data);
      figure.hidden = matrix === null;
      if (matrix === null) {
        return;
      }
      layOut(matrix.groups);
      maxLabel.textContent = t("views.leafMax", { bytes: formatDecimalByteSize(matrix.max, numbers, t) });
      if (image !== null) {
        paintLeafMatrix(matrix, image.data);
        canvas.getContext("2d")?.putImageData(image, 0, 0);
      }
    },
  };
}
