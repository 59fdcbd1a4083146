// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { translator } from "../core/i18n";
import { FakeTimers } from "../testing/fakes";
import { SAVE_DELAY_MS, mountDock } from "./dock";
import { MIN_SIZE, parseLayout, type WorkspaceLayout } from "./layout";

/** The fabric page's workspace as the server renders it (panels in reading order). */
function renderWorkspace(width = 1400, height = 850): HTMLElement {
  document.body.innerHTML = `
    <main class="page"><div class="workspace" id="workspace">
      <section class="panel" data-dock="right" data-panel="fabric"><h2>demo <span class="muted">v2</span></h2><dl id="snapshot-summary"><dt>Cards</dt><dd>1,024</dd></dl></section>
      <section class="panel workspace-map" id="map-panel"><h2>Map</h2><div id="fabric-map"></div></section>
      <section class="panel" data-dock="right" data-panel="details"><h2>Details</h2><div id="map-details"></div></section>
      <section class="panel" data-dock="right" data-panel="snapshots"><h2>Snapshots</h2><table id="snapshot-table"></table><p>more</p></section>
      <section class="panel" data-dock="bottom" data-panel="player"><h2>Replay player</h2><p id="player-empty">nothing yet</p></section>
    </div></main>`;
  const root = document.getElementById("workspace") as HTMLElement;
  Object.defineProperty(root, "clientWidth", { value: width });
  Object.defineProperty(root, "clientHeight", { value: height });
  return root;
}

function mount(layout: WorkspaceLayout = parseLayout({ right: 460, bottom: 300, collapsed: [] })) {
  const root = renderWorkspace();
  const timers = new FakeTimers();
  const saved: WorkspaceLayout[] = [];
  const dock = mountDock(root, { doc: document, t: translator("en"), timers, layout, save: (value) => saved.push(value) });
  const toggle = (panel: string) => root.querySelector<HTMLButtonElement>(`[data-panel=${panel}] .dock-toggle`) as HTMLButtonElement;
  const handle = (name: "right" | "bottom") => root.querySelector<HTMLElement>(`.dock-handle-${name}`) as HTMLElement;
  const key = (name: "right" | "bottom", pressed: string, shiftKey = false) =>
    handle(name).dispatchEvent(new KeyboardEvent("keydown", { key: pressed, shiftKey, bubbles: true, cancelable: true }));
  const runSave = () => {
    const pending = timers.pending.filter((timer) => timer.delayMs === SAVE_DELAY_MS);
    timers.pending = timers.pending.filter((timer) => timer.delayMs !== SAVE_DELAY_MS);
    for (const timer of pending) {
      timer.callback();
    }
  };
  return { root, dock, timers, saved, toggle, handle, key, runSave };
}

beforeEach(() => {
  document.body.innerHTML = "";
  document.body.className = "";
});

describe("mountDock", () => {
  it("puts the map first and the panels in their docks, keeping their content and order", () => {
    const { root } = mount();
    expect([...root.children].map((child) => child.id || child.className)).toEqual([
      "map-panel",
      "dock-handle dock-handle-right",
      "dock-right",
      "dock-handle dock-handle-bottom",
      "dock-bottom",
    ]);
    expect([...root.querySelectorAll("#dock-right > .dock-panel")].map((panel) => (panel as HTMLElement).dataset["panel"])).toEqual(["fabric", "details", "snapshots"]);
    expect(root.querySelector("#dock-bottom > [data-panel=player] #player-empty")).not.toBeNull();
    // The panel's own heading, content and ids are kept; the map's heading goes (the map fills the view).
    expect(root.querySelector("[data-panel=fabric] h2 .dock-toggle")?.textContent).toBe("demo v2");
    expect(root.querySelector("[data-panel=fabric] h2 .dock-move-up")?.getAttribute("aria-label")).toBe("Move demo v2 up");
    expect(root.querySelector("[data-panel=fabric] .dock-panel-body #snapshot-summary")?.textContent).toBe("Cards1,024");
    expect(root.querySelector("#map-panel > h2")).toBeNull();
    expect(root.classList.contains("is-docked") && document.body.classList.contains("has-workspace")).toBe(true);
    expect(root.style.getPropertyValue("--dock-right")).toBe("min(460px, 70%)");
  });

  it("collapses and expands a panel from its heading, and saves once the clicks settle", () => {
    const { root, toggle, saved, runSave } = mount();
    const body = root.querySelector("[data-panel=snapshots] .dock-panel-body") as HTMLElement;
    expect(toggle("snapshots").getAttribute("aria-expanded")).toBe("true");
    expect(toggle("snapshots").getAttribute("aria-controls")).toBe(body.id);
    toggle("snapshots").click();
    expect(body.hidden).toBe(true);
    expect(toggle("snapshots").getAttribute("aria-expanded")).toBe("false");
    expect(root.querySelector<HTMLElement>("[data-panel=snapshots]")?.dataset["collapsed"]).toBe("true");
    toggle("details").click();
    toggle("details").click();
    expect(saved).toEqual([]);
    runSave();
    expect(saved.map((layout) => layout.collapsed)).toEqual([["snapshots"]]);
  });

  it("folds a dock whose panels are all collapsed, giving its room to the map", () => {
    const { root, toggle, handle } = mount();
    toggle("player").click();
    expect(root.querySelector<HTMLElement>("#dock-bottom")?.dataset["folded"]).toBe("true");
    expect(root.style.getPropertyValue("--dock-bottom")).toBe("auto");
    expect(handle("bottom").hidden).toBe(true);
    toggle("player").click();
    expect(root.style.getPropertyValue("--dock-bottom")).toBe("min(300px, 70%)");
    expect(handle("bottom").hidden).toBe(false);
  });

  it("resizes a dock from the keyboard on its handle, within its limits", () => {
    const { dock, handle, key, saved, runSave } = mount();
    expect(handle("right").getAttribute("role")).toBe("separator");
    expect(handle("right").getAttribute("aria-orientation")).toBe("vertical");
    expect(handle("right").tabIndex).toBe(0);
    key("right", "ArrowLeft");
    key("right", "ArrowLeft", true);
    expect(dock.layout.right).toBe(460 + 16 + 96);
    expect(handle("right").getAttribute("aria-valuenow")).toBe("572");
    expect(handle("right").getAttribute("aria-valuemax")).toBe("980");
    key("right", "Home");
    expect(dock.layout.right).toBe(MIN_SIZE.right);
    key("right", "ArrowRight");
    expect(dock.layout.right).toBe(MIN_SIZE.right); // not below the minimum
    key("bottom", "ArrowUp");
    key("bottom", "End");
    expect(dock.layout.bottom).toBe(595);
    runSave();
    expect(saved).toEqual([{ right: MIN_SIZE.right, bottom: 595, collapsed: [], order: [] }]);
  });

  it("resizes a dock by dragging its handle", () => {
    const { dock, handle } = mount();
    const pointer = (type: string, clientX: number, clientY: number) =>
      handle("right").dispatchEvent(new PointerEvent(type, { clientX, clientY, pointerId: 1, bubbles: true, cancelable: true }));
    pointer("pointerdown", 900, 400);
    pointer("pointermove", 850, 400);
    expect(dock.layout.right).toBe(510);
    expect(handle("right").classList.contains("is-dragging")).toBe(true);
    pointer("pointermove", 1300, 400);
    expect(dock.layout.right).toBe(MIN_SIZE.right);
    pointer("pointerup", 1300, 400);
    pointer("pointermove", 100, 400); // the drag has ended
    expect(dock.layout.right).toBe(MIN_SIZE.right);
    expect(handle("right").classList.contains("is-dragging")).toBe(false);
  });

  it("moves a panel up and down its dock, from its buttons or Alt+arrows on its heading, keeping the focus", () => {
    const { root, toggle, dock } = mount();
    const order = () => [...root.querySelectorAll<HTMLElement>("#dock-right > .dock-panel")].map((panel) => panel.dataset["panel"]);
    const down = root.querySelector<HTMLButtonElement>("[data-panel=fabric] .dock-move-down") as HTMLButtonElement;
    down.focus();
    down.click();
    expect(order()).toEqual(["details", "fabric", "snapshots"]);
    expect(document.activeElement).toBe(down);
    toggle("snapshots").focus();
    toggle("snapshots").dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp", altKey: true, bubbles: true, cancelable: true }));
    expect(order()).toEqual(["details", "snapshots", "fabric"]);
    expect(document.activeElement).toBe(toggle("snapshots"));
    root.querySelector<HTMLButtonElement>("[data-panel=player] .dock-move-up")?.click(); // alone in its dock: stays
    expect(dock.layout.order).toEqual(["details", "snapshots", "fabric", "player"]);
  });

  it("restores a saved layout: the same panels collapsed, the same sizes, the same order", () => {
    const first = mount();
    first.root.querySelector<HTMLButtonElement>("[data-panel=snapshots] .dock-move-up")?.click();
    first.toggle("snapshots").click();
    first.key("right", "ArrowLeft");
    first.key("bottom", "ArrowDown");
    first.runSave();
    const kept = first.saved.at(-1) as WorkspaceLayout;
    // What the server hands back on the next visit goes through parseLayout like any stored value.
    const second = mount(parseLayout(JSON.parse(JSON.stringify(kept))));
    expect(second.dock.layout).toEqual(kept);
    expect(second.toggle("snapshots").getAttribute("aria-expanded")).toBe("false");
    expect(second.handle("right").getAttribute("aria-valuenow")).toBe("476");
    expect(second.root.style.getPropertyValue("--dock-bottom")).toBe("min(284px, 70%)");
    expect([...second.root.querySelectorAll<HTMLElement>("#dock-right > .dock-panel")].map((panel) => panel.dataset["panel"])).toEqual(["fabric", "snapshots", "details"]);
  });

  it("reveals a collapsed panel when asked (a deep link's run, a selected node) and flushes a pending save", () => {
    const { dock, toggle, saved } = mount(parseLayout({ collapsed: ["details", "player"] }));
    dock.reveal("details");
    dock.reveal("nonexistent");
    expect(toggle("details").getAttribute("aria-expanded")).toBe("true");
    dock.flush();
    expect(saved.map((layout) => layout.collapsed)).toEqual([["player"]]);
    dock.flush();
    expect(saved).toHaveLength(1);
  });
});
