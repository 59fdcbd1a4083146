import { describe, expect, it } from "vitest";
import {
  BIG_STEP,
  DEFAULT_LAYOUT,
  MIN_SIZE,
  STEP,
  clampSize,
  isCollapsed,
  maxSize,
  orderedPanels,
  parseLayout,
  sizeForDrag,
  sizeForKey,
  withCollapsed,
  withMoved,
  withSize,
} from "./layout";

describe("parseLayout", () => {
  it("reads a stored layout", () => {
    expect(parseLayout({ right: 512, bottom: 280, collapsed: ["snapshots", "details"] })).toEqual({
      right: 512,
      bottom: 280,
      collapsed: ["details", "snapshots"],
      order: [],
    });
    expect(parseLayout({ order: ["snapshots", "fabric", "snapshots", 7] }).order).toEqual(["snapshots", "fabric"]);
  });

  it("falls back to the defaults for what is missing or malformed, and never below the minimum", () => {
    expect(parseLayout(null)).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout([1, 2])).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout({})).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout({ right: "wide", bottom: -4, collapsed: "all" })).toEqual(DEFAULT_LAYOUT);
    expect(parseLayout({ right: 12, bottom: 20 })).toMatchObject({ right: MIN_SIZE.right, bottom: MIN_SIZE.bottom });
    expect(parseLayout({ right: Number.NaN }).right).toBe(DEFAULT_LAYOUT.right);
  });

  it("keeps only panel names, once each", () => {
    expect(parseLayout({ collapsed: ["hops", "hops", 3, "<b>", "", "x".repeat(41), "whatif"] }).collapsed).toEqual(["hops", "whatif"]);
  });
});

describe("sizes", () => {
  it("stay between the minimum and what leaves the map 30 % of the room", () => {
    expect(maxSize("right", 1000)).toBe(700);
    expect(clampSize("right", 900, 1000)).toBe(700);
    expect(clampSize("right", 10, 1000)).toBe(MIN_SIZE.right);
    expect(clampSize("bottom", 250.4, 900)).toBe(250);
    // A window too small for both: the minimum wins, the dock stays readable.
    expect(maxSize("right", 200)).toBe(MIN_SIZE.right);
  });

  it("change only when the clamped size does", () => {
    const layout = parseLayout({ right: 400 });
    expect(withSize(layout, "right", 400.2, 1400)).toBe(layout);
    expect(withSize(layout, "right", 480, 1400).right).toBe(480);
    expect(withSize(layout, "bottom", 5000, 900).bottom).toBe(630);
  });

  it("follow the keyboard on a handle: arrows towards the map grow the dock, Home and End go to the limits", () => {
    expect(sizeForKey("right", 400, "ArrowLeft", false, 1400)).toBe(400 + STEP);
    expect(sizeForKey("right", 400, "ArrowRight", true, 1400)).toBe(400 - BIG_STEP);
    expect(sizeForKey("bottom", 300, "ArrowUp", false, 900)).toBe(300 + STEP);
    expect(sizeForKey("bottom", 300, "ArrowDown", false, 900)).toBe(300 - STEP);
    expect(sizeForKey("right", 400, "Home", false, 1400)).toBe(MIN_SIZE.right);
    expect(sizeForKey("right", 400, "End", false, 1400)).toBe(980);
    expect(sizeForKey("right", MIN_SIZE.right, "ArrowRight", false, 1400)).toBe(MIN_SIZE.right);
    expect(sizeForKey("right", 400, "ArrowUp", false, 1400)).toBeNull();
    expect(sizeForKey("bottom", 300, "ArrowLeft", false, 900)).toBeNull();
    expect(sizeForKey("right", 400, "Enter", false, 1400)).toBeNull();
  });

  it("follow a drag: towards the map grows the dock", () => {
    expect(sizeForDrag("right", 400, 1000, 940, 1400)).toBe(460);
    expect(sizeForDrag("bottom", 300, 600, 650, 900)).toBe(250);
    expect(sizeForDrag("bottom", 300, 600, 900, 900)).toBe(MIN_SIZE.bottom);
  });
});

describe("collapsed panels", () => {
  it("are toggled by name and kept sorted", () => {
    const start = parseLayout({ collapsed: [] });
    const one = withCollapsed(start, "whatif", true);
    const two = withCollapsed(one, "details", true);
    expect(two.collapsed).toEqual(["details", "whatif"]);
    expect(isCollapsed(two, "whatif")).toBe(true);
    expect(withCollapsed(two, "whatif", true)).toBe(two);
    expect(withCollapsed(two, "whatif", false).collapsed).toEqual(["details"]);
  });
});

describe("panel order", () => {
  const docks = [["fabric", "details", "legend", "snapshots"], ["player"]];

  it("puts the panels the user ordered first, the others in the page's order after them", () => {
    expect(orderedPanels(docks[0] ?? [], [])).toEqual(["fabric", "details", "legend", "snapshots"]);
    expect(orderedPanels(docks[0] ?? [], ["snapshots", "player", "details"])).toEqual(["snapshots", "details", "fabric", "legend"]);
  });

  it("moves a panel one place within its dock, never out of it", () => {
    const start = parseLayout({});
    const up = withMoved(start, docks, "legend", -1);
    expect(up.order).toEqual(["fabric", "legend", "details", "snapshots", "player"]);
    const twice = withMoved(up, docks, "legend", -1);
    expect(orderedPanels(docks[0] ?? [], twice.order)).toEqual(["legend", "fabric", "details", "snapshots"]);
    expect(withMoved(twice, docks, "legend", -1)).toBe(twice); // already first
    expect(withMoved(start, docks, "player", 1)).toBe(start); // alone in its dock
    expect(withMoved(start, docks, "nonexistent", 1)).toBe(start);
    // A page with a panel the stored order does not know (a new one): it keeps its place after the ordered ones.
    expect(orderedPanels(["fabric", "details", "legend", "runs", "snapshots"], twice.order)).toEqual(["legend", "fabric", "details", "snapshots", "runs"]);
  });
});
