// The search combobox: debounced queries, a listbox of results, and the
// keyboard model of searchModel.ts (arrows, Home/End, Enter, Escape).

import { element } from "../core/dom";
import type { MessageKey, Translate } from "../core/i18n";
import { kindLabel } from "./labels";
import { CLOSED, searchKey, withResults, type SearchResult, type SearchState } from "./searchModel";

export interface SearchBoxOptions {
  readonly doc: Document;
  readonly t: Translate;
  readonly search: (query: string) => Promise<SearchResult[]>;
  readonly choose: (result: SearchResult) => void;
  readonly describeError: (error: unknown) => string;
  readonly debounceMs?: number;
}

const MATCH_LABELS: Readonly<Record<string, MessageKey>> = {
  name: "map.search.match.name",
  guid: "map.search.match.guid",
  host: "map.search.match.host",
  bus_id: "map.search.match.bus_id",
};

let uniqueId = 0;

export function searchBox(options: SearchBoxOptions): HTMLElement {
  const { doc, t } = options;
  uniqueId += 1;
  const listId = `tmap-results-${uniqueId}`;
  const input = element(doc, "input", {
    type: "search",
    class: "tmap-search-input",
    role: "combobox",
    "aria-autocomplete": "list",
    "aria-expanded": "false",
    "aria-controls": listId,
    "aria-label": t("map.search.label"),
    placeholder: t("map.search.placeholder"),
    autocomplete: "off",
    spellcheck: "false",
  });
  const list = element(doc, "ul", { id: listId, class: "tmap-results", role: "listbox", "aria-label": t("map.search.label") });
  list.hidden = true;
  let state: SearchState = CLOSED;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let sequence = 0;

  const render = (message: string | null = null): void => {
    list.replaceChildren();
    input.setAttribute("aria-expanded", String(state.open));
    input.removeAttribute("aria-activedescendant");
    list.hidden = !state.open;
    if (!state.open) {
      return;
    }
    if (message !== null || state.results.length === 0) {
      list.append(element(doc, "li", { class: "tmap-results-empty", role: "option", "aria-disabled": "true" }, [message ?? t("map.search.none")]));
      return;
    }
    state.results.forEach((result, index) => {
      const id = `${listId}-${index}`;
      const matchKey = MATCH_LABELS[result.match];
      const row = element(doc, "li", { id, role: "option", "aria-selected": String(index === state.active) }, [
        element(doc, "strong", {}, [result.name]),
        " ",
        element(doc, "span", { class: "muted" }, [
          [kindLabel(result.kind, t), result.host ?? "", matchKey === undefined ? "" : `(${t(matchKey)})`].filter(Boolean).join(" · "),
        ]),
      ]);
      row.addEventListener("mousedown", (event) => {
        event.preventDefault(); // keep focus in the input
        pick(result);
      });
      list.append(row);
      if (index === state.active) {
        input.setAttribute("aria-activedescendant", id);
        row.scrollIntoView?.({ block: "nearest" });
      }
    });
  };
  const pick = (result: SearchResult): void => {
    state = { ...state, open: false };
    render();
    options.choose(result);
  };
  const run = (query: string): void => {
    sequence += 1;
    const mine = sequence;
    if (query.trim() === "") {
      state = CLOSED;
      render();
      return;
    }
    options.search(query).then(
      (results) => {
        if (mine === sequence) {
          state = withResults(results);
          render();
        }
      },
      (error: unknown) => {
        if (mine === sequence) {
          state = { results: [], active: -1, open: true };
          render(t("map.search.failed", { detail: options.describeError(error) }));
        }
      },
    );
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => run(input.value), options.debounceMs ?? 250);
  });
  input.addEventListener("keydown", (event) => {
    const outcome = searchKey(state, event.key);
    if (outcome.kind === "ignore") {
      return;
    }
    event.preventDefault();
    state = outcome.state;
    render();
    if (outcome.kind === "choose") {
      options.choose(outcome.result);
    }
  });
  input.addEventListener("blur", () => {
    state = { ...state, open: false };
    render();
  });
  return element(doc, "div", { class: "tmap-search" }, [input, list]);
}
