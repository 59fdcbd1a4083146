// Builds the upload page's dynamic parts: the chosen files, a stored upload's
// summary and a rejection's problem lists. Text only ever goes in as text.

import { element } from "../core/dom";
import { kindLabel } from "../map/labels";
import { formatByteSize } from "../core/format";
import type { MessageKey, Translate } from "../core/i18n";
import type { RenderContext } from "../runs/resultDom";
import type { Count, FileProblems, StoredUpload } from "./uploadResponse";

/** One entry per chosen file: its name and size; `data-file-name` lets problems find it. */
export function fileListItems(files: Iterable<File>, { doc, t, numbers }: RenderContext): HTMLLIElement[] {
  return Array.from(files, (file) =>
    element(doc, "li", { "data-file-name": file.name }, [
      element(doc, "span", { class: "file-name" }, [file.name]),
      " ",
      element(doc, "span", { class: "file-size muted" }, [formatByteSize(file.size, numbers, t)]),
    ]),
  );
}

/** One file's problems, like the server-rendered page lists them. */
export function problemList(doc: Document, file: FileProblems, t: Translate): HTMLUListElement {
  const items = file.problems.map((problem) => element(doc, "li", {}, [problem]));
  if (file.truncated) {
    items.push(element(doc, "li", {}, [t("upload.truncated")]));
  }
  return element(doc, "ul", { class: "errorlist" }, items);
}

/** Problems no listed file owns, each under its source's name. */
export function unmatchedProblems(doc: Document, files: readonly FileProblems[], t: Translate): HTMLElement {
  return element(
    doc,
    "div",
    { class: "upload-problems" },
    files.flatMap((file) => [
      element(doc, "h3", {}, [file.source ?? t("upload.unnamedSource")]),
      problemList(doc, file, t),
    ]),
  );
}

export function fieldErrorList(doc: Document, messages: readonly string[]): HTMLUListElement {
  return element(
    doc,
    "ul",
    { class: "errorlist field-error" },
    messages.map((message) => element(doc, "li", {}, [message])),
  );
}

const LINK_STATE_LABELS: Readonly<Record<string, MessageKey>> = {
  up: "upload.linkState.up",
  degraded: "upload.linkState.degraded",
  down: "upload.linkState.down",
};

/** Counts joined into one line, each as `describe` words it with the count formatted. */
function countList(
  counts: readonly Count[],
  describe: (name: string, count: string) => string,
  { t, numbers }: RenderContext,
): string {
  return counts.map(([name, count]) => describe(name, numbers.integer(count))).join(t("list.separator"));
}

/** A total with its breakdown: "11 (Card: 8, Switch: 3)". */
function totalWithBreakdown(
  total: number,
  counts: readonly Count[],
  label: (name: string) => string,
  context: RenderContext,
): string {
  const { t, numbers } = context;
  if (counts.length === 0) {
    return numbers.integer(total);
  }
  const list = countList(counts, (name, count) => t("upload.count", { label: label(name), count }), context);
  return t("upload.withBreakdown", { total: numbers.integer(total), list });
}

export function renderStored(stored: StoredUpload, context: RenderContext): HTMLElement {
  const { doc, t } = context;
  const { summary } = stored;
  const rows: [string, string][] = [
    [t("upload.nodes"), totalWithBreakdown(summary.nodes, summary.nodesByKind, (kind) => kindLabel(kind, t), context)],
    [
      t("upload.links"),
      totalWithBreakdown(
        summary.links,
        summary.linksByState,
        (state) => {
          const key = LINK_STATE_LABELS[state];
          return key === undefined ? state : t(key);
        },
        context,
      ),
    ],
  ];
  if (summary.linksBySpeed.length > 0) {
    // "10 × 400 Gb/s", as the fabric page writes speeds.
    const speeds = countList(summary.linksBySpeed, (speed, count) => t("upload.atSpeed", { count, speed }), context);
    rows.push([t("upload.speeds"), speeds]);
  }
  return element(doc, "div", { class: "upload-stored" }, [
    element(doc, "p", {}, [t("upload.stored", { version: stored.version, format: stored.format })]),
    element(
      doc,
      "dl",
      { class: "kv" },
      rows.flatMap(([key, value]) => [element(doc, "dt", {}, [key]), element(doc, "dd", {}, [value])]),
    ),
    summary.warnings.length === 0
      ? null
      : element(
          doc,
          "ul",
          { class: "warnings" },
          summary.warnings.map((warning) => element(doc, "li", {}, [warning])),
        ),
    element(doc, "p", {}, [
      element(doc, "a", { id: "upload-open", class: "btn btn-primary", href: stored.url }, [t("upload.open")]),
    ]),
  ]);
}
