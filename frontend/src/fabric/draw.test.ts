import { describe, expect, it } from "vitest";
import { drawFabric, markerSize, type DrawingContext } from "./draw";
import { LAYOUT_MARGIN, tierLayout } from "./layout";
import { LINK_STYLES, NODE_COLOURS } from "./palette";
import { closFabric, link } from "../testing/fabricGraphs";

/** Records the canvas calls that matter for correctness. */
class RecordingContext implements DrawingContext {
  strokeStyle: DrawingContext["strokeStyle"] = "";
  fillStyle: DrawingContext["fillStyle"] = "";
  lineWidth = 1;
  font = "";
  textBaseline: CanvasTextBaseline = "alphabetic";
  readonly strokes: { style: string; segments: number }[] = [];
  readonly squares: { style: string; x: number; y: number; size: number }[] = [];
  readonly labels: string[] = [];
  /** Control-point offset below the row for each same-row link. */
  readonly bows: number[] = [];
  transform: number[] = [];
  private segments = 0;

  setTransform(...args: unknown[]): void {
    this.transform = args as number[];
  }
  clearRect(): void {}
  beginPath(): void {
    this.segments = 0;
  }
  moveTo(): void {
    this.segments += 1;
  }
  lineTo(): void {}
  quadraticCurveTo(_controlX: number, controlY: number, _x: number, y: number): void {
    this.bows.push(controlY - y);
  }
  stroke(): void {
    this.strokes.push({ style: String(this.strokeStyle), segments: this.segments });
  }
  fillRect(x: number, y: number, width: number): void {
    this.squares.push({ style: String(this.fillStyle), x: x + width / 2, y: y + width / 2, size: width });
  }
  fillText(text: string): void {
    this.labels.push(text);
  }
}

describe("drawFabric", () => {
  const graph = closFabric(2, 4, 8, 16);
  const withFaults = {
    nodes: graph.nodes,
    links: [...graph.links, link("card-0000", "leaf-0001", "down"), link("card-0001", "leaf-0002", "degraded")],
  };
  const layout = tierLayout(withFaults, 1200, 520);

  function draw(pixelRatio = 2): RecordingContext {
    const context = new RecordingContext();
    drawFabric(context, withFaults, layout, { width: 1200, height: 520, pixelRatio, rowLabel: (row) => `row:${row}` });
    return context;
  }

  it("scales for the device pixel ratio", () => {
    expect(draw(2).transform).toEqual([2, 0, 0, 2, 0, 0]);
  });

  it("strokes every link once, faults last so they stay visible", () => {
    const { strokes } = draw();
    expect(strokes).toHaveLength(withFaults.links.length);
    expect(strokes.every((stroke) => stroke.segments === 1)).toBe(true);
    expect(strokes.slice(-2).map((stroke) => stroke.style)).toEqual([LINK_STYLES.degraded.colour, LINK_STYLES.down.colour]);
    expect(strokes.slice(0, -2).every((stroke) => stroke.style === LINK_STYLES.up.colour)).toBe(true);
  });

  it("skips links whose ends are not laid out", () => {
    const context = new RecordingContext();
    const dangling = { nodes: graph.nodes, links: [link("card-0000", "ghost")] };
    drawFabric(context, dangling, layout, { width: 1200, height: 520, pixelRatio: 1, rowLabel: String });
    expect(context.strokes).toHaveLength(0);
  });

  it("draws every node once, at its layout position, coloured by tier or kind", () => {
    const { squares } = draw();
    expect(squares).toHaveLength(graph.nodes.length);
    const leaf = squares.find((square) => square.style === NODE_COLOURS.leaf);
    const placed = layout.positions.get("leaf-0000");
    expect(leaf).toMatchObject({ x: placed?.x, y: placed?.y });
    expect(squares.filter((square) => square.style === NODE_COLOURS.card)).toHaveLength(128);
  });

  it("bows links between nodes of one row below it, within the bottom margin", () => {
    const sameRow = { nodes: graph.nodes, links: [link("card-0000", "card-0001"), link("card-0000", "card-0127")] };
    const context = new RecordingContext();
    drawFabric(context, sameRow, layout, { width: 1200, height: 520, pixelRatio: 1, rowLabel: String });
    expect(context.bows).toHaveLength(2);
    const [near, far] = context.bows as [number, number];
    expect(near).toBeGreaterThan(0);
    expect(far).toBeGreaterThan(near);
    expect(far / 2).toBeLessThanOrEqual(LAYOUT_MARGIN.bottom);
  });

  it("labels each row", () => {
    expect(draw().labels).toEqual(["row:core", "row:spine", "row:leaf", "row:endpoint"]);
  });

  it("draws a 1,024-card fabric in a few milliseconds of JavaScript", () => {
    const big = closFabric(8, 8, 32, 32);
    const bigLayout = tierLayout(big, 1600, 520);
    const started = performance.now();
    drawFabric(new RecordingContext(), big, bigLayout, { width: 1600, height: 520, pixelRatio: 1, rowLabel: String });
    expect(performance.now() - started).toBeLessThan(100);
  });
});

describe("markerSize", () => {
  it("shrinks with crowding but stays visible", () => {
    expect(markerSize({ kind: "endpoint", y: 0, count: 1024, pitch: 1.1 })).toBe(1.5);
    expect(markerSize({ kind: "endpoint", y: 0, count: 8, pitch: 100 })).toBe(7);
    expect(markerSize({ kind: "leaf", y: 0, count: 32, pitch: 5 })).toBe(4);
  });
});
