// The fabric workspace's docks: <div class="workspace" data-layout=…> holds
// the map panel (.workspace-map) and panels marked data-dock="right|bottom"
// data-panel="<name>". Without scripts they read top to bottom; mounted, the
// map fills the view and the panels move into a right-hand dock and a bottom
// dock. Each panel's heading becomes a button that collapses it, with two
// buttons that move the panel up and down its dock (Alt+arrows on the heading
// do the same); each dock has a handle (a separator: drag it, or arrow keys, Home and End) that
// resizes it between MIN_SIZE and what leaves the map MAP_SHARE of the view.
// Every change is handed to `save` (debounced): the layout is the user's.

import { element } from "../core/dom";
import type { Translate } from "../core/i18n";
import type { Timers } from "../core/timers";
import {
  MAP_SHARE,
  MIN_SIZE,
  isCollapsed,
  maxSize,
  orderedPanels,
  sizeForDrag,
  sizeForKey,
  withCollapsed,
  withMoved,
  withSize,
  type DockName,
  type WorkspaceLayout,
} from "./layout";

/** How long the layout must stay unchanged before it is saved: a drag or a run of key presses is one save. */
export const SAVE_DELAY_MS = 500;

export interface DockOptions {
  readonly doc: Document;
  readonly t: Translate;
  readonly layout: WorkspaceLayout;
  readonly save: (layout: WorkspaceLayout) => void;
  readonly timers: Timers;
}

export interface Dock {
  readonly layout: WorkspaceLayout;
  /** Expands the panel (if collapsed) and scrolls it into its dock's view. */
  reveal(panel: string): void;
  setCollapsed(panel: string, collapsed: boolean): void;
  resize(dock: DockName, size: number): void;
  /** Saves a change still waiting for its delay now (e.g. before the page goes away). */
  flush(): void;
}

const DOCK_LABELS = {
  right: { region: "workspace.rightDock", handle: "workspace.resizeRight" },
  bottom: { region: "workspace.bottomDock", handle: "workspace.resizeBottom" },
} as const;

export function mountDock(root: HTMLElement, options: DockOptions): Dock {
  const { doc, t, timers } = options;
  let layout = options.layout;
  let saveTimer: number | null = null;

  const docks: Record<DockName, HTMLElement> = {
    right: element(doc, "div", { class: "dock dock-right", id: "dock-right", role: "region", "aria-label": t(DOCK_LABELS.right.region) }),
    bottom: element(doc, "div", { class: "dock dock-bottom", id: "dock-bottom", role: "region", "aria-label": t(DOCK_LABELS.bottom.region) }),
  };
  const panels = new Map<string, { panel: HTMLElement; body: HTMLElement; toggle: HTMLButtonElement; dock: DockName }>();
  /** Each dock's panels in the page's order, as the user's order is applied to. */
  const pageOrder = (): string[][] =>
    (["right", "bottom"] as const).map((dock) => [...panels].filter(([, entry]) => entry.dock === dock).map(([name]) => name));

  const available = (dock: DockName): number => (dock === "right" ? root.clientWidth : root.clientHeight);

  const scheduleSave = (): void => {
    if (saveTimer !== null) {
      timers.clearTimeout(saveTimer);
    }
    saveTimer = timers.setTimeout(() => {
      saveTimer = null;
      options.save(layout);
    }, SAVE_DELAY_MS);
  };

  const change = (next: WorkspaceLayout): void => {
    if (next !== layout) {
      layout = next;
      apply();
      scheduleSave();
    }
  };

  // ---- panels -----------------------------------------------------------
  const enhancePanel = (panel: HTMLElement, name: string, dock: DockName): void => {
    const heading = panel.querySelector<HTMLElement>(":scope > h2") ?? element(doc, "h2", {}, [name]);
    const body = element(doc, "div", { class: "dock-panel-body", id: `panel-${name}-body` });
    body.append(...[...panel.childNodes].filter((node) => node !== heading));
    const toggle = element(doc, "button", { type: "button", class: "dock-toggle", "aria-controls": body.id, "aria-keyshortcuts": "Alt+ArrowUp Alt+ArrowDown" });
    toggle.append(...heading.childNodes);
    const title = toggle.textContent?.trim() ?? name;
    toggle.addEventListener("click", () => change(withCollapsed(layout, name, !isCollapsed(layout, name))));
    const move = (by: -1 | 1, focus: HTMLElement): void => {
      change(withMoved(layout, pageOrder(), name, by));
      focus.focus(); // moving the panel in the page must not lose the keyboard's place
    };
    toggle.addEventListener("keydown", (event) => {
      if (event.altKey && (event.key === "ArrowUp" || event.key === "ArrowDown")) {
        event.preventDefault();
        move(event.key === "ArrowUp" ? -1 : 1, toggle);
      }
    });
    const moveButton = (by: -1 | 1): HTMLButtonElement => {
      const label = t(by === -1 ? "workspace.moveUp" : "workspace.moveDown", { panel: title });
      const button = element(doc, "button", { type: "button", class: `dock-move dock-move-${by === -1 ? "up" : "down"}`, "aria-label": label, title: label }, [by === -1 ? "↑" : "↓"]);
      button.addEventListener("click", () => move(by, button));
      return button;
    };
    heading.replaceChildren(toggle, moveButton(-1), moveButton(1));
    panel.replaceChildren(heading, body);
    panel.classList.add("dock-panel");
    panels.set(name, { panel, body, toggle, dock });
    docks[dock].append(panel);
  };

  for (const panel of root.querySelectorAll<HTMLElement>("[data-dock][data-panel]")) {
    const dock: DockName = panel.dataset["dock"] === "bottom" ? "bottom" : "right";
    enhancePanel(panel, panel.dataset["panel"] ?? "", dock);
  }

  // ---- handles ----------------------------------------------------------
  const handle = (dock: DockName): HTMLElement => {
    const separator = element(doc, "div", {
      class: `dock-handle dock-handle-${dock}`,
      role: "separator",
      tabindex: "0",
      "aria-orientation": dock === "right" ? "vertical" : "horizontal",
      "aria-controls": docks[dock].id,
      "aria-label": t(DOCK_LABELS[dock].handle),
      "aria-valuemin": String(MIN_SIZE[dock]),
    });
    separator.addEventListener("keydown", (event) => {
      const next = sizeForKey(dock, layout[dock], event.key, event.shiftKey, available(dock));
      if (next !== null) {
        event.preventDefault();
        change(withSize(layout, dock, next, available(dock)));
      }
    });
    separator.addEventListener("pointerdown", (event) => {
      event.preventDefault();
      const startPointer = dock === "right" ? event.clientX : event.clientY;
      const startSize = layout[dock];
      separator.setPointerCapture?.(event.pointerId);
      separator.classList.add("is-dragging");
      const move = (moved: PointerEvent): void => {
        const pointer = dock === "right" ? moved.clientX : moved.clientY;
        change(withSize(layout, dock, sizeForDrag(dock, startSize, startPointer, pointer, available(dock)), available(dock)));
      };
      const end = (): void => {
        separator.classList.remove("is-dragging");
        separator.removeEventListener("pointermove", move);
        separator.removeEventListener("pointerup", end);
        separator.removeEventListener("pointercancel", end);
      };
      separator.addEventListener("pointermove", move);
      separator.addEventListener("pointerup", end);
      separator.addEventListener("pointercancel", end);
    });
    return separator;
  };
  const handles: Record<DockName, HTMLElement> = { right: handle("right"), bottom: handle("bottom") };

  // ---- layout -----------------------------------------------------------
  const apply = (): void => {
    for (const [name, { panel, body, toggle }] of panels) {
      const collapsed = isCollapsed(layout, name);
      body.hidden = collapsed;
      toggle.setAttribute("aria-expanded", String(!collapsed));
      panel.dataset["collapsed"] = String(collapsed);
    }
    for (const [index, dock] of (["right", "bottom"] as const).entries()) {
      const members = [...panels.values()].filter((entry) => entry.dock === dock);
      // Only a changed order moves panels in the page (a moved element would lose focus, its charts a frame).
      const wanted = orderedPanels(pageOrder()[index] ?? [], layout.order);
      const current = [...docks[dock].children].map((child) => (child as HTMLElement).dataset["panel"] ?? "");
      if (wanted.join(" ") !== current.join(" ")) {
        docks[dock].append(...wanted.map((name) => panels.get(name)?.panel).filter((panel): panel is HTMLElement => panel !== undefined));
      }
      // A dock whose panels are all collapsed shrinks to their headings and gives the map the room.
      const folded = members.length === 0 || members.every((entry) => entry.body.hidden);
      docks[dock].dataset["folded"] = String(folded);
      root.style.setProperty(`--dock-${dock}`, folded ? "auto" : `min(${String(layout[dock])}px, ${String(100 - MAP_SHARE * 100)}%)`);
      handles[dock].hidden = folded;
      handles[dock].setAttribute("aria-valuenow", String(layout[dock]));
      handles[dock].setAttribute("aria-valuemax", String(maxSize(dock, available(dock))));
    }
  };

  // The map first (keyboard users reach its search at once), then the docks; the grid places them.
  const map = root.querySelector<HTMLElement>(":scope > .workspace-map");
  // The map fills the view: its heading would only take room (the page is the fabric's).
  map?.querySelector(":scope > h2")?.remove();
  root.replaceChildren(...(map === null ? [] : [map]), handles.right, docks.right, handles.bottom, docks.bottom);
  root.classList.add("is-docked");
  doc.body.classList.add("has-workspace");
  apply();

  return {
    get layout() {
      return layout;
    },
    reveal(panel) {
      const entry = panels.get(panel);
      if (entry === undefined) {
        return;
      }
      change(withCollapsed(layout, panel, false));
      entry.panel.scrollIntoView?.({ block: "nearest" });
    },
    setCollapsed(panel, collapsed) {
      change(withCollapsed(layout, panel, collapsed));
    },
    resize(dock, size) {
      change(withSize(layout, dock, size, available(dock)));
    },
    flush() {
      if (saveTimer !== null) {
        timers.clearTimeout(saveTimer);
        saveTimer = null;
        options.save(layout);
      }
    },
  };
}
