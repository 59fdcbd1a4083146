// Building blocks shared by the run result views: key/value lists, bar rows
// and data tables. Text always goes through text nodes.

import { element, type Child } from "../core/dom";
import type { NumberFormatters } from "../core/format";
import type { Translate } from "../core/i18n";
import type { RunMapMarks } from "./runMarks";

export function keyValueList(doc: Document, rows: readonly (readonly [string, Node | string])[]): HTMLDListElement {
  return element(
    doc,
    "dl",
    { class: "kv" },
    rows.flatMap(([key, value]) => [element(doc, "dt", {}, [key]), element(doc, "dd", {}, [value])]),
  );
}

export interface Column {
  readonly label: string;
  /** Right-aligned figures. */
  readonly numeric?: boolean;
}

export interface Row {
  readonly cells: readonly Child[];
  readonly className?: string;
}

/** A `table.data` with a caption, a header row and one row per entry; cells of numeric columns are right-aligned. */
export function dataTable(doc: Document, className: string, caption: string, columns: readonly Column[], rows: readonly Row[]): HTMLTableElement {
  return element(doc, "table", { class: `data ${className}` }, [
    element(doc, "caption", {}, [caption]),
    element(doc, "thead", {}, [
      element(doc, "tr", {}, columns.map((column) => element(doc, "th", column.numeric === true ? { class: "num" } : {}, [column.label]))),
    ]),
    element(
      doc,
      "tbody",
      {},
      rows.map((row) =>
        element(
          doc,
          "tr",
          row.className === undefined ? {} : { class: row.className },
          row.cells.map((cell, index) => element(doc, "td", columns[index]?.numeric === true ? { class: "num" } : {}, [cell])),
        ),
      ),
    ),
  ]);
}

export interface RenderContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly numbers: NumberFormatters;
  /** "Show on map" for placement and failure results; without it (no map on the page) there are no such buttons. */
  readonly marks?: RunMapMarks | undefined;
}

/** A status line for "Show on map" answers, announced to screen readers. */
export function marksStatus(doc: Document): HTMLElement {
  const status = element(doc, "p", { class: "marks-status muted", role: "status" });
  status.hidden = true;
  return status;
}

/** A "Show on map" button that runs `show` and puts its sentence in `status`. */
export function showOnMapButton(doc: Document, label: string, accessibleName: string, status: HTMLElement, show: () => Promise<string>): HTMLButtonElement {
  const button = element(doc, "button", { type: "button", class: "btn btn-small show-on-map", "aria-label": accessibleName }, [label]);
  button.addEventListener("click", () => {
    button.disabled = true;
    void show()
      .then((sentence) => {
        status.textContent = sentence;
        status.hidden = false;
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  return button;
}
