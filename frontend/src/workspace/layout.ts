// The fabric workspace's layout, as a user keeps it (on the server, per user:
// GET/PUT /api/preferences/workspace/): the width of the right-hand dock, the
// height of the bottom dock, which panels are collapsed and the order of the
// panels within their dock. Pure: no DOM.

export type DockName = "right" | "bottom";

export interface WorkspaceLayout {
  /** Width of the right-hand dock, CSS pixels. */
  readonly right: number;
  /** Height of the bottom dock, CSS pixels. */
  readonly bottom: number;
  /** Names (data-panel) of the collapsed panels, sorted. */
  readonly collapsed: readonly string[];
  /** Panel names in the order the user put them; panels it does not name keep the page's order, after them. */
  readonly order: readonly string[];
}

/** Below these a dock's panels become unreadable; the map keeps at least MAP_SHARE of the workspace. */
export const MIN_SIZE: Readonly<Record<DockName, number>> = { right: 300, bottom: 140 };
export const MAP_SHARE = 0.3;
/** One arrow-key press on a dock's handle; with Shift, BIG_STEP. */
export const STEP = 16;
export const BIG_STEP = 96;

// The player's panel opens when there is a replay to play: until then the map has the whole height.
export const DEFAULT_LAYOUT: WorkspaceLayout = { right: 460, bottom: 300, collapsed: ["player", "telemetry"], order: [] };

const PANEL_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const MAX_PANELS = 40;

function size(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : fallback;
}

/** A stored layout, or the defaults for whatever is missing or malformed (an old or hand-edited value must not break the page). */
export function parseLayout(value: unknown): WorkspaceLayout {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return DEFAULT_LAYOUT;
  }
  const given = value as Record<string, unknown>;
  const names = (value: unknown): string[] | null =>
    Array.isArray(value) ? [...new Set(value.filter((name): name is string => typeof name === "string" && PANEL_NAME.test(name)).slice(0, MAX_PANELS))] : null;
  return {
    right: Math.max(MIN_SIZE.right, size(given["right"], DEFAULT_LAYOUT.right)),
    bottom: Math.max(MIN_SIZE.bottom, size(given["bottom"], DEFAULT_LAYOUT.bottom)),
    collapsed: (names(given["collapsed"]) ?? [...DEFAULT_LAYOUT.collapsed]).sort(),
    order: names(given["order"]) ?? DEFAULT_LAYOUT.order,
  };
}

/** The largest size `dock` may take in a workspace `available` pixels wide (right) or high (bottom). */
export function maxSize(dock: DockName, available: number): number {
  return Math.max(MIN_SIZE[dock], Math.floor(available - available * MAP_SHARE));
}

export function clampSize(dock: DockName, wanted: number, available: number): number {
  return Math.min(maxSize(dock, available), Math.max(MIN_SIZE[dock], Math.round(wanted)));
}

export function withSize(layout: WorkspaceLayout, dock: DockName, wanted: number, available: number): WorkspaceLayout {
  const next = clampSize(dock, wanted, available);
  return next === layout[dock] ? layout : { ...layout, [dock]: next };
}

export function isCollapsed(layout: WorkspaceLayout, panel: string): boolean {
  return layout.collapsed.includes(panel);
}

export function withCollapsed(layout: WorkspaceLayout, panel: string, collapsed: boolean): WorkspaceLayout {
  if (isCollapsed(layout, panel) === collapsed) {
    return layout;
  }
  const names = collapsed ? [...layout.collapsed, panel] : layout.collapsed.filter((name) => name !== panel);
  return { ...layout, collapsed: names.sort() };
}

/**
 * The new size after a key on a dock's handle, or null for keys it ignores.
 * The right dock grows leftwards (ArrowLeft), the bottom dock upwards (ArrowUp).
 */
export function sizeForKey(dock: DockName, current: number, key: string, shift: boolean, available: number): number | null {
  const step = shift ? BIG_STEP : STEP;
  const grow = dock === "right" ? "ArrowLeft" : "ArrowUp";
  const shrink = dock === "right" ? "ArrowRight" : "ArrowDown";
  switch (key) {
    case grow:
      return clampSize(dock, current + step, available);
    case shrink:
      return clampSize(dock, current - step, available);
    case "Home":
      return MIN_SIZE[dock];
    case "End":
      return maxSize(dock, available);
    default:
      return null;
  }
}

/** The size while dragging a handle from `startPointer` (clientX or clientY) to `pointer`. */
export function sizeForDrag(dock: DockName, startSize: number, startPointer: number, pointer: number, available: number): number {
  // Both docks sit at the far edge: moving the handle towards the map (left, up) makes them bigger.
  return clampSize(dock, startSize + (startPointer - pointer), available);
}

/** `panels` (one dock's, in the page's order) in the user's order. */
export function orderedPanels(panels: readonly string[], order: readonly string[]): string[] {
  const rank = (name: string): number => {
    const at = order.indexOf(name);
    return at === -1 ? order.length + panels.indexOf(name) : at;
  };
  return [...panels].sort((a, b) => rank(a) - rank(b));
}

/**
 * The layout with `panel` moved `by` places (-1: up, 1: down) within its dock; `docks` are each
 * dock's panels in the page's order. Unchanged when it is already first or last.
 */
export function withMoved(layout: WorkspaceLayout, docks: readonly (readonly string[])[], panel: string, by: -1 | 1): WorkspaceLayout {
  const shown = docks.map((panels) => orderedPanels(panels, layout.order));
  const dock = shown.find((panels) => panels.includes(panel));
  if (dock === undefined) {
    return layout;
  }
  const from = dock.indexOf(panel);
  const to = from + by;
  if (to < 0 || to >= dock.length) {
    return layout;
  }
  [dock[from], dock[to]] = [dock[to] as string, panel];
  return { ...layout, order: shown.flat() };
}
