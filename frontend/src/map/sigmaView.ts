// The WebGL side: one sigma.js renderer whose graphology graph is replaced by
// each level-of-detail scene (a few thousand elements at most), plus a 2D
// canvas under it for the group frames. Layout y grows downwards; sigma's
// grows upwards, so y is negated on the way in and out.

import Graph from "graphology";
import Sigma from "sigma";
import { LABEL_FONT_PX, NAME_COLOUR, TITLE_COLOUR, placeLabels, type PlacedLabel } from "./labelPlacement";
import type { View } from "./lod";
import type { MapModel } from "./model";
import type { StyledScene } from "./style";

export interface SigmaViewEvents {
  readonly clickItem: (item: number) => void;
  /** A click on no marker, at (x, y) CSS px in the container: the map looks for a link there. */
  readonly clickStage: (x: number, y: number) => void;
  readonly enterItem: (item: number, x: number, y: number) => void;
  readonly leaveItem: () => void;
  readonly cameraMoved: () => void;
}

export interface FrameStyle {
  readonly stroke: string;
  readonly fill: string;
}

export class SigmaView {
  readonly sigma: Sigma;
  private readonly framesCanvas: HTMLCanvasElement;
  private frames: ArrayLike<number> = [];
  private nodes: StyledScene["nodes"] = [];
  /** The labels of the last frame drawn, in CSS px of the container. */
  placed: readonly PlacedLabel[] = [];
  private closedBoxes: ArrayLike<number> = [];
  lastRenderMs = 0;

  constructor(
    private readonly container: HTMLElement,
    private readonly model: MapModel,
    events: SigmaViewEvents,
  ) {
    const { bounds } = model;
    this.sigma = new Sigma(new Graph(), container, {
      allowInvalidContainer: true,
      zIndex: true,
      renderEdgeLabels: false,
      enableEdgeEvents: false,
      // Every label (frame titles included) is placed by labelPlacement.ts and drawn in afterRender,
      // so that none overlaps another; sigma's hover box would be a label of its own.
      renderLabels: false,
      defaultDrawNodeHover: () => undefined,
      defaultEdgeColor: "#94a3b8",
      minCameraRatio: 0.0005,
      maxCameraRatio: 4,
      stagePadding: 24,
      itemSizesReference: "screen",
      zoomToSizeRatioFunction: (ratio: number) => Math.max(1, Math.sqrt(ratio)),
    });
    // One fixed frame for every scene: sigma would otherwise re-fit the view
    // to whatever nodes the current level of detail shows.
    this.sigma.setCustomBBox({ x: [bounds.x0, bounds.x1], y: [-bounds.y1, -bounds.y0] });
    // Typed without the layer option, which the implementation passes on to createCanvas.
    const createContext = this.sigma.createCanvasContext as (id: string, options: { beforeLayer: string }) => Sigma;
    createContext.call(this.sigma, "frames", { beforeLayer: "edges" });
    this.framesCanvas = this.sigma.getCanvases()["frames"] as HTMLCanvasElement;
    this.sigma.resize(true);
    this.sigma.on("beforeRender", () => {
      this.renderStarted = performance.now();
    });
    this.sigma.on("afterRender", () => {
      this.drawFrames();
      this.drawLabels();
      this.lastRenderMs = performance.now() - this.renderStarted;
    });
    this.sigma.on("clickNode", ({ node }) => events.clickItem(Number(node)));
    this.sigma.on("clickStage", ({ event }) => events.clickStage(event.x, event.y));
    this.sigma.on("enterNode", ({ node, event }) => events.enterItem(Number(node), event.x, event.y));
    this.sigma.on("leaveNode", () => events.leaveItem());
    this.sigma.getCamera().on("updated", () => events.cameraMoved());
  }

  private renderStarted = 0;
  frameStyle: (group: number, open: boolean) => FrameStyle = () => ({ stroke: "#cbd5e1", fill: "" });

  /** Replace the drawn graph with a styled scene. */
  show(styled: StyledScene, frames: ArrayLike<number>, closedBoxes: ArrayLike<number>): void {
    const graph = new Graph({ type: "undirected", multi: false, allowSelfLoops: false });
    for (const node of styled.nodes) {
      graph.addNode(String(node.item), {
        x: node.x,
        y: -node.y,
        size: node.size,
        color: node.color,
        label: node.label,
        zIndex: node.zIndex,
        highlighted: node.highlighted,
      });
    }
    for (const edge of styled.edges) {
      graph.addEdgeWithKey(`${edge.a}-${edge.b}`, String(edge.a), String(edge.b), {
        size: edge.size,
        color: edge.color,
        zIndex: edge.zIndex,
      });
    }
    this.frames = frames;
    this.nodes = styled.nodes;
    this.closedBoxes = closedBoxes;
    this.sigma.setGraph(graph);
  }

  /** The visible rectangle in layout units. */
  view(): View {
    const { width, height } = this.sigma.getDimensions();
    const a = this.sigma.viewportToGraph({ x: 0, y: 0 });
    const b = this.sigma.viewportToGraph({ x: width, y: height });
    const x0 = Math.min(a.x, b.x);
    const x1 = Math.max(a.x, b.x);
    return { x0, x1, y0: Math.min(-a.y, -b.y), y1: Math.max(-a.y, -b.y), pxPerUnit: width / Math.max(1e-9, x1 - x0) };
  }

  /** Screen position (CSS px in the container) of a layout point. */
  toScreen(x: number, y: number): { x: number; y: number } {
    return this.sigma.graphToViewport({ x, y: -y });
  }

  /** Animate the camera so that a layout rectangle fills the view (with some room). */
  focus(x0: number, y0: number, x1: number, y1: number, durationMs = 400): Promise<void> {
    const camera = this.sigma.getCamera();
    const view = this.view();
    const scale = Math.max((x1 - x0) / Math.max(1e-9, view.x1 - view.x0), (y1 - y0) / Math.max(1e-9, view.y1 - view.y0));
    const ratio = camera.getBoundedRatio(camera.getState().ratio * Math.max(scale * 1.3, 1e-4));
    const centre = this.sigma.viewportToFramedGraph(this.toScreen((x0 + x1) / 2, (y0 + y1) / 2));
    const state = { x: centre.x, y: centre.y, ratio };
    if (durationMs <= 0) {
      camera.setState(state);
      return Promise.resolve();
    }
    return camera.animate(state, { duration: durationMs });
  }

  zoomBy(factor: number): void {
    const camera = this.sigma.getCamera();
    void camera.animate({ ratio: camera.getBoundedRatio(camera.getState().ratio / factor) }, { duration: 200 });
  }

  panBy(dxPx: number, dyPx: number): void {
    const camera = this.sigma.getCamera();
    const { width, height } = this.sigma.getDimensions();
    const target = this.sigma.viewportToFramedGraph({ x: width / 2 + dxPx, y: height / 2 + dyPx });
    void camera.animate({ x: target.x, y: target.y }, { duration: 150 });
  }

  reset(durationMs = 300): void {
    void this.sigma.getCamera().animatedReset({ duration: durationMs });
  }

  /** A synchronous redraw, waiting for the GPU (software WebGL here) to finish; returns its milliseconds. */
  redraw(): number {
    const started = performance.now();
    this.sigma.refresh();
    this.finishGl();
    return performance.now() - started;
  }

  finishGl(): void {
    const pixel = new Uint8Array(4);
    for (const canvas of Object.values(this.sigma.getCanvases())) {
      const gl = (canvas.getContext("webgl2") ?? canvas.getContext("webgl")) as WebGLRenderingContext | null;
      gl?.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
    }
  }

  /** The current picture, all layers composed over a white background. */
  composePng(): HTMLCanvasElement {
    this.sigma.refresh();
    const { width, height } = this.sigma.getDimensions();
    const ratio = window.devicePixelRatio || 1;
    const out = document.createElement("canvas");
    out.width = Math.round(width * ratio);
    out.height = Math.round(height * ratio);
    const context = out.getContext("2d");
    if (context === null) {
      return out;
    }
    context.fillStyle = "#ffffff";
    context.fillRect(0, 0, out.width, out.height);
    // In DOM order, which is the stacking order of sigma's layers.
    for (const canvas of this.container.querySelectorAll("canvas")) {
      context.drawImage(canvas, 0, 0, out.width, out.height);
    }
    return out;
  }

  private drawFrames(): void {
    const context = this.framesCanvas.getContext("2d");
    if (context === null) {
      return;
    }
    const ratio = window.devicePixelRatio || 1;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    const { width, height } = this.sigma.getDimensions();
    context.clearRect(0, 0, width, height);
    context.lineWidth = 1;
    const model = this.model;
    const box = (group: number, open: boolean): void => {
      const x = model.groupX[group] as number;
      const y = model.groupY[group] as number;
      const a = this.toScreen(x, y);
      const b = this.toScreen(x + (model.groupW[group] as number), y + (model.groupH[group] as number));
      const w = b.x - a.x;
      const h = b.y - a.y;
      if (b.x < 0 || b.y < 0 || a.x > width || a.y > height || (w < 3 && h < 3)) {
        return;
      }
      const style = this.frameStyle(group, open);
      if (style.fill !== "") {
        context.fillStyle = style.fill;
        context.fillRect(a.x, a.y, w, h);
      }
      context.strokeStyle = style.stroke;
      context.strokeRect(a.x + 0.5, a.y + 0.5, w, h);
    };
    for (let i = 0; i < this.frames.length; i += 1) {
      box(this.frames[i] as number, true);
    }
    for (let i = 0; i < this.closedBoxes.length; i += 1) {
      box(this.closedBoxes[i] as number, false);
    }
  }

  /** Frame titles and marker names where labelPlacement.ts puts them, over a white halo that keeps them readable over links. */
  private drawLabels(): void {
    const canvas = this.sigma.getCanvases()["labels"];
    const context = canvas?.getContext("2d");
    if (context === null || context === undefined) {
      return;
    }
    const ratio = window.devicePixelRatio || 1;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    const dimensions = this.sigma.getDimensions();
    context.clearRect(0, 0, dimensions.width, dimensions.height);
    context.font = `${String(LABEL_FONT_PX)}px system-ui, sans-serif`;
    context.textBaseline = "top";
    context.lineJoin = "round";
    context.lineWidth = 3;
    context.strokeStyle = "rgba(255, 255, 255, 0.85)";
    this.placed = placeLabels(this.model, this.nodes, this.frames, (x, y) => this.toScreen(x, y), dimensions, (text) => context.measureText(text).width);
    for (const label of this.placed) {
      context.fillStyle = label.kind === "title" ? TITLE_COLOUR : NAME_COLOUR;
      context.strokeText(label.text, label.x, label.y + 1, label.w);
      context.fillText(label.text, label.x, label.y + 1, label.w);
    }
  }

  resize(): void {
    this.sigma.resize();
    this.sigma.refresh();
  }

  kill(): void {
    this.sigma.kill();
  }
}
