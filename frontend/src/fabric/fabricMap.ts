// DOM wiring for <canvas id="fabric-map">: fetch the graph, then keep the
// drawing sharp and sized to its .map-wrap, with a legend and hover tooltip.

import { element } from "../dom";
import { describeRequestError, type JsonClient } from "../http";
import type { Translate } from "../i18n";
import { drawFabric } from "./draw";
import { nodeDegrees, parseFabricGraph, type FabricGraph, type FabricNode } from "./graph";
import { CATEGORY_LABELS, LINK_STATE_LABELS, ROW_LABELS, tooltipFields } from "./labels";
import { tierLayout } from "./layout";
import { LINK_STATES_BOTTOM_UP, LINK_STYLES, NODE_CATEGORIES, NODE_COLOURS, nodeCategory } from "./palette";
import { SpatialGrid } from "./spatialGrid";

export interface FabricMapContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly http: JsonClient;
}

/** Hover reach in CSS pixels; forgiving because endpoint markers may be under 2 px wide. */
const HOVER_RADIUS = 8;
const TOOLTIP_OFFSET = 12;

export function mountFabricMap(canvas: HTMLCanvasElement, context: FabricMapContext): void {
  const { doc, t } = context;
  const wrap = canvas.closest<HTMLElement>(".map-wrap") ?? canvas.parentElement;
  if (wrap === null) {
    return;
  }
  const notice = (className: string, text: string): void => {
    wrap.querySelector(":scope > .map-notice")?.remove();
    wrap.append(element(doc, "div", { class: `map-notice ${className}` }, [text]));
  };

  notice("muted", t("map.loading"));
  context.http
    .get(canvas.dataset["graphUrl"] ?? "")
    .then(parseFabricGraph)
    .then(
      (graph) => {
        wrap.querySelector(":scope > .map-notice")?.remove();
        if (graph.nodes.length === 0) {
          canvas.hidden = true;
          notice("empty", t("map.empty"));
        } else {
          showGraph(canvas, wrap, graph, context);
        }
      },
      (error: unknown) => {
        canvas.hidden = true;
        notice("error", t("map.loadFailed", { detail: describeRequestError(error, t) }));
      },
    );
}

function legend(graph: FabricGraph, doc: Document, t: Translate): HTMLElement {
  const entry = (colour: string, label: string, shape: "node" | "link"): HTMLElement => {
    const swatch = element(doc, "span", { class: `legend-swatch legend-${shape}` });
    swatch.style.background = colour;
    return element(doc, "li", {}, [swatch, label]);
  };
  const present = new Set(graph.nodes.map(nodeCategory));
  return element(doc, "ul", { class: "legend", "aria-label": t("map.legend") }, [
    ...NODE_CATEGORIES.filter((category) => present.has(category)).map((category) =>
      entry(NODE_COLOURS[category], t(CATEGORY_LABELS[category]), "node"),
    ),
    ...LINK_STATES_BOTTOM_UP.map((state) => entry(LINK_STYLES[state].colour, t(LINK_STATE_LABELS[state]), "link")),
  ]);
}

function showGraph(canvas: HTMLCanvasElement, wrap: HTMLElement, graph: FabricGraph, context: FabricMapContext): void {
  const { doc, t } = context;
  const drawing = canvas.getContext("2d");
  if (drawing === null) {
    return;
  }
  const degrees = nodeDegrees(graph);
  const tooltip = element(doc, "div", { class: "tooltip", role: "tooltip" });
  tooltip.hidden = true;
  wrap.append(tooltip);
  wrap.after(legend(graph, doc, t));

  let hitIndex = new SpatialGrid<FabricNode>([], HOVER_RADIUS * 2);
  let frameRequested = false;

  const redraw = (): void => {
    frameRequested = false;
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    if (width === 0 || height === 0) {
      return;
    }
    // Back the canvas with device pixels so lines stay crisp on HiDPI screens.
    const pixelRatio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * pixelRatio);
    canvas.height = Math.round(height * pixelRatio);
    const layout = tierLayout(graph, width, height);
    drawFabric(drawing, graph, layout, {
      width,
      height,
      pixelRatio,
      rowLabel: (row) => t(ROW_LABELS[row]),
    });
    hitIndex = new SpatialGrid(
      graph.nodes.flatMap((node) => {
        const place = layout.positions.get(node.id);
        return place === undefined ? [] : [{ x: place.x, y: place.y, item: node }];
      }),
      HOVER_RADIUS * 2,
    );
    // How many nodes the last frame drew: for people inspecting the page and for end-to-end tests.
    canvas.dataset.nodes = String(layout.positions.size);
  };
  const scheduleRedraw = (): void => {
    if (!frameRequested) {
      frameRequested = true;
      requestAnimationFrame(redraw);
    }
  };

  let hovered: FabricNode | null = null;
  const showTooltip = (node: FabricNode): void => {
    if (node === hovered) {
      return;
    }
    hovered = node;
    tooltip.replaceChildren(
      element(doc, "strong", {}, [node.name]),
      ...tooltipFields(node, degrees.get(node.id) ?? 0, t).map(([label, value]) =>
        element(doc, "div", {}, [element(doc, "span", { class: "muted" }, [`${label}: `]), value]),
      ),
    );
    tooltip.hidden = false;
  };
  const hideTooltip = (): void => {
    hovered = null;
    tooltip.hidden = true;
  };

  canvas.addEventListener("mousemove", (event) => {
    const hit = hitIndex.nearest(event.offsetX, event.offsetY, HOVER_RADIUS);
    if (hit === null) {
      hideTooltip();
      return;
    }
    showTooltip(hit.item);
    // Keep the tooltip inside the map: flip to the other side of the pointer near the edges.
    const x = canvas.offsetLeft + event.offsetX;
    const y = canvas.offsetTop + event.offsetY;
    const fitsRight = x + TOOLTIP_OFFSET + tooltip.offsetWidth <= wrap.clientWidth;
    const fitsBelow = y + TOOLTIP_OFFSET + tooltip.offsetHeight <= wrap.clientHeight;
    tooltip.style.left = `${fitsRight ? x + TOOLTIP_OFFSET : Math.max(0, x - TOOLTIP_OFFSET - tooltip.offsetWidth)}px`;
    tooltip.style.top = `${fitsBelow ? y + TOOLTIP_OFFSET : Math.max(0, y - TOOLTIP_OFFSET - tooltip.offsetHeight)}px`;
  });
  canvas.addEventListener("mouseleave", hideTooltip);

  new ResizeObserver(scheduleRedraw).observe(wrap);
  // Moving the window to a screen of another density changes no CSS size, so
  // the observer stays silent; a media query on the current ratio notices.
  const watchPixelRatio = (): void => {
    matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`).addEventListener(
      "change",
      () => {
        scheduleRedraw();
        watchPixelRatio();
      },
      { once: true },
    );
  };
  watchPixelRatio();
  scheduleRedraw();
}
