// The fabric map: <div id="fabric-map" data-layout-url=… data-search-url=…
// data-node-url=… data-path-url=… data-diff-url=…>. Fetches the layout once,
// then keeps at most ~3,000 elements drawn by sigma.js whatever the zoom
// (level of detail, lod.ts), with search, details, hop paths, overlays and
// PNG/SVG export. Other modules drive the overlays through the TopologyMap
// handle (getTopologyMap) with plain arrays.

import { addElement } from "./failurePick";
import { element } from "../core/dom";
import type { NumberFormatters } from "../core/format";
import { describeRequestError, type JsonClient } from "../core/http";
import type { Translate } from "../core/i18n";
import { cablesTo, detailsFromModel, parseNodeDetails, renderDetails, renderLinkDetails, type NodeDetails } from "./details";
import { CATEGORY_LABELS, LINK_STATE_LABELS, groupKindLabel, kindLabel, tierLabel } from "./labels";
import { UNREACHABLE, hopCounts, hopsFrom, type HopCount } from "./hops";
import type { PlacedLabel } from "./labelPlacement";
import { linkMask, linksOfEdge, nearestEdge, parallelLinks, summariseLinks } from "./linkSelection";
import { linkTooltip, type TooltipContent } from "./linkTooltip";
import { DEFAULT_LOD, fullScene, pinsForGroup, pinsForNode, selectScene, type LodOptions, type Scene, type SceneEdge, type View } from "./lod";
import { parseLayout, type MapModel } from "./model";
import {
  DIFF_CLASSES,
  DIFF_COLOURS,
  DIFF_LABELS,
  FAILED_LINK_COLOUR,
  FIRST_GROUP_MARK,
  GROUP_MARK_COLOURS,
  NODE_MARK_COLOURS,
  NODE_MARK_LABELS,
  NODE_MARKS,
  BAND_COLOURS,
  UTILISATION_STOPS,
  diffArrays,
  emptyOverlays,
  linkMarkArray,
  linksByPair,
  nodeMarkArray,
  parseFindings,
  utilisationArray,
  type DiffClass,
  type LinkValues,
  type Overlays,
  type UtilisationThresholds,
} from "./overlay";
import { parsePath, pathHighlight, shortestPath, type PathHighlight } from "./path";
import { searchBox } from "./searchBox";
import { parseSearchResults, searchLocally, type SearchResult } from "./searchModel";
import { SigmaView } from "./sigmaView";
import { GROUP_COLOURS, LINK_COLOURS, NODE_COLOURS, PATH_COLOUR, groupLabel, nodeCategory, styleScene, type HopShading, type MapState } from "./style";
import { sceneToSvg } from "./svgExport";

export interface TopologyMapContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly numbers: NumberFormatters;
  readonly http: JsonClient;
  /** Hears the selected node's id each time the selection changes (null: nothing selected). */
  readonly onSelect?: ((id: string | null) => void) | undefined;
  /** Hears the picked link (a layout link index) each time it changes; null: none, or an aggregate of links. */
  readonly onSelectLink?: ((link: number | null) => void) | undefined;
}

export interface DrawnCounts {
  readonly nodes: number;
  readonly edges: number;
  readonly frames: number;
  readonly total: number;
}

/** What other modules (and the benchmark / browser tests, via window.__twinMap) can call. */
export interface TopologyMap {
  readonly model: MapModel;
  /** Per-link utilisation 0..1: `values` in layout link order, or `a`/`b` node ids with `value`. */
  setLinkUtilisation(input: LinkValues): { unmatched: number };
  /** The utilisation overlay shown (0..1 per layout link, NaN where unknown), or null. */
  linkUtilisation(): Float32Array | null;
  /**
   * Banded utilisation colours: green below `warning`, amber from it, red from `critical`
   * (fractions 0..1); null goes back to the green-to-red gradient. Kept across overlays.
   */
  setUtilisationThresholds(thresholds: UtilisationThresholds | null): void;
  /**
   * Per-node marks: "placed" for a job's ranks, "placed:<k>" for ranks of group k (one colour
   * per group, cycled), "failed" for what-if failures. Replaces the previous node marks.
   */
  setNodeMarks(ids: readonly string[], marks: readonly string[]): void;
  /** Links (layout link indices) drawn as failed; replaces the previous ones. Cleared with the marks. */
  setLinkMarks(links: readonly number[]): { unmatched: number };
  /**
   * Cards coloured by their hops from the card `id` (null: the selected card, else the first one), until
   * cleared; a card picked meanwhile becomes the source. Null when the map has no such card.
   */
  showHopsFrom(id: string | null): { readonly source: string; readonly counts: readonly HopCount[] } | null;
  clearOverlay(name: "utilisation" | "marks" | "diff" | "hops"): void;
  focusNode(id: string): Promise<boolean>;
  /** Centres the node and selects it as a click would (its details shown); false when the map has no such node. */
  selectNode(id: string): Promise<boolean>;
  /** Centres a layout link and picks it as a click would (its cables shown); false when there is no such link. */
  selectLink(link: number): Promise<boolean>;
  /** Where the drawn edge carrying a layout link crosses the middle, in viewport (client) px; null when not drawn. */
  linkOnScreen(link: number): { x: number; y: number } | null;
  showPath(ids: readonly string[], hops?: number): void;
  clearPath(): void;
  /** Elements in the current scene. */
  drawn(): DrawnCounts;
  /** The labels of the last frame: text and box in CSS px of the map's canvas; no two overlap. */
  labels(): readonly PlacedLabel[];
  /** Synchronous full redraw, waiting for the GPU; milliseconds. */
  redraw(): number;
  /** Recompute the level of detail for the current camera now; milliseconds. */
  updateLod(): number;
  /** Camera: ratio 1 shows the whole fabric, smaller zooms in; x, y in layout units (centre). */
  setCamera(ratio: number, x?: number, y?: number): void;
  view(): View;
  exportPng(): Promise<Blob | null>;
  exportSvg(): string;
  /** performance.now() when the first frame was drawn. */
  readonly firstDrawAt: number;
  readonly lod: boolean;
}

declare global {
  interface Window {
    __twinMap?: TopologyMap;
  }
}

// How high an end sits, for naming a link from its lower end up; a tier group is a row of spines or cores.
const SWITCH_RANK: Readonly<Record<string, number>> = { leaf: 1, spine: 2, core: 3 };
const GROUP_RANK: Readonly<Record<string, number>> = { unattached: 0, leaf: 1, tier: 2, pod: 3 };

const maps = new WeakMap<HTMLElement, TopologyMap>();
const ready = new WeakMap<HTMLElement, Promise<TopologyMap>>();

/** "80" or "92.5": a threshold as a percentage for the legend. */
function thresholdPercent(fraction: number): string {
  return String(Math.round(fraction * 1000) / 10);
}

export function getTopologyMap(host: HTMLElement): TopologyMap | undefined {
  return maps.get(host);
}

export function whenTopologyMap(host: HTMLElement): Promise<TopologyMap> | undefined {
  return ready.get(host);
}

function withQuery(url: string, params: Record<string, string>): string {
  const query = new URLSearchParams(params).toString();
  return `${url}${url.includes("?") ? "&" : "?"}${query}`;
}

function download(doc: Document, name: string, blob: Blob): void {
  const link = doc.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = name;
  doc.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

/** Mounts the map in `host`; resolves once the first frame is drawn. */
export function mountTopologyMap(host: HTMLElement, context: TopologyMapContext): Promise<TopologyMap | null> {
  const { doc, t } = context;
  host.classList.add("tmap");
  host.replaceChildren();
  const stage = element(doc, "div", { class: "map-wrap tmap-stage", tabindex: "0", role: "application", "aria-label": t("map.stage") });
  const notice = (className: string, message: string): void => {
    stage.querySelector(":scope > .map-notice")?.remove();
    stage.append(element(doc, "div", { class: `map-notice ${className}` }, [message]));
  };
  host.append(stage);
  notice("muted", t("map.loading"));
  const promise = context.http
    .get(host.dataset["layoutUrl"] ?? "")
    .then(parseLayout)
    .then(
      (model) => {
        stage.querySelector(":scope > .map-notice")?.remove();
        if (model.nodeCount === 0) {
          notice("empty", t("map.empty"));
          return null;
        }
        const map = showMap(host, stage, model, context);
        maps.set(host, map);
        window.__twinMap = map;
        return map;
      },
      (error: unknown) => {
        notice("error", t("map.loadFailed", { detail: describeRequestError(error, t) }));
        return null;
      },
    );
  ready.set(host, promise.then((map) => map ?? Promise.reject(new Error("no map"))));
  ready.get(host)?.catch(() => undefined);
  return promise;
}

function showMap(host: HTMLElement, stage: HTMLElement, model: MapModel, context: TopologyMapContext): TopologyMap {
  const { doc, t, numbers, http } = context;
  const urls = {
    search: host.dataset["searchUrl"] ?? "",
    node: host.dataset["nodeUrl"] ?? "",
    path: host.dataset["pathUrl"] ?? "",
    diff: host.dataset["diffUrl"] ?? "",
  };
  const lodEnabled = host.dataset["lod"] !== "off";
  const budget = Number(host.dataset["budget"] ?? DEFAULT_LOD.budget) || DEFAULT_LOD.budget;
  const pinned = new Set<number>();
  const lodOptions: LodOptions = { ...DEFAULT_LOD, budget, pinned };
  const overlays: Overlays = emptyOverlays();
  let linkOverlay: MapState["linkOverlay"] = "none";
  let path: PathHighlight | null = null;
  let selected: number | null = null;
  // The picked link: the layout links its edge carried, highlighted in whatever edge carries them now.
  let picked: { links: number[]; mask: Uint8Array } | null = null;
  let pathMode = false;
  let pathStart: number | null = null;
  let scene: Scene;
  // Layout position of each drawn item, for picking the link under a click.
  let drawnAt = new Map<number, { x: number; y: number }>();
  let pairsCache: Map<string, number[]> | null = null;
  const pairs = (): Map<string, number[]> => (pairsCache ??= linksByPair(model));
  let diffPresent = new Set<DiffClass>();
  let thresholds: UtilisationThresholds | null = null;
  let hopShading: (HopShading & { counts: HopCount[] }) | null = null;

  // ---- DOM -------------------------------------------------------------
  const tooltip = element(doc, "div", { class: "tooltip", role: "tooltip" });
  tooltip.hidden = true;
  const sigmaHost = element(doc, "div", { class: "tmap-sigma" });
  stage.append(sigmaHost, tooltip);
  const status = element(doc, "span", { class: "tmap-status", "aria-live": "polite" });
  const drawnInfo = element(doc, "span", { class: "tmap-drawn muted" });
  const button = (label: string, onClick: () => void, extra: Record<string, string> = {}): HTMLButtonElement => {
    const b = element(doc, "button", { type: "button", class: "btn btn-small", ...extra }, [label]);
    b.addEventListener("click", onClick);
    return b;
  };
  const pathButton = button(t("map.pathMode"), () => setPathMode(!pathMode), { "aria-pressed": "false", class: "btn btn-small tmap-path" });
  const overlaySelect = element(doc, "select", { class: "tmap-overlay", "aria-label": t("map.overlay.label") });
  overlaySelect.hidden = true;
  overlaySelect.addEventListener("change", () => {
    linkOverlay = overlaySelect.value as MapState["linkOverlay"];
    refreshScene();
    renderLegend();
  });
  const search = searchBox({
    doc,
    t,
    describeError: (error) => describeRequestError(error, t),
    search: (query) =>
      urls.search === ""
        ? Promise.resolve(searchLocally(model.nodeId, model.nodeName, model.nodeKind, model.nodeTier, query))
        : http.get(withQuery(urls.search, { q: query })).then(parseSearchResults),
    choose: (result: SearchResult) => {
      void api.focusNode(result.id).then((found) => {
        const node = model.indexOfId.get(result.id);
        if (found && node !== undefined) {
          onNodeChosen(node);
        }
      });
    },
  });
  const toolbar = element(doc, "div", { class: "tmap-toolbar", role: "toolbar", "aria-label": t("map.legend") }, [
    search,
    button("+", () => view.zoomBy(1.6), { "aria-label": t("map.zoomIn"), title: t("map.zoomIn") }),
    button("−", () => view.zoomBy(1 / 1.6), { "aria-label": t("map.zoomOut"), title: t("map.zoomOut") }),
    button(t("map.zoomReset"), () => view.reset()),
    pathButton,
    overlaySelect,
    button(t("map.export.png"), () => void api.exportPng().then((blob) => blob && download(doc, `${fileStem()}.png`, blob))),
    button(t("map.export.svg"), () => download(doc, `${fileStem()}.svg`, new Blob([api.exportSvg()], { type: "image/svg+xml" }))),
    status,
    drawnInfo,
  ]);
  const details = element(doc, "aside", { class: "tmap-details", "aria-label": t("map.details.title") });
  details.hidden = true;
  const legend = element(doc, "ul", { class: "legend", "aria-label": t("map.legend") });
  const body = element(doc, "div", { class: "tmap-body" });
  stage.replaceWith(body);
  // A page may give the details and the legend places of their own (the workspace's docked panels).
  const placeOf = (name: "detailsHost" | "legendHost"): HTMLElement | null => {
    const id = host.dataset[name];
    return id === undefined || id === "" ? null : doc.getElementById(id);
  };
  body.append(stage);
  (placeOf("detailsHost") ?? body).append(details);
  host.prepend(toolbar);
  (placeOf("legendHost") ?? host).append(legend);

  const fileStem = (): string => `fabric-map${model.snapshot === null ? "" : `-${String(model.snapshot)}`}`;

  // ---- rendering -------------------------------------------------------
  const view = new SigmaView(sigmaHost, model, {
    clickItem: (item) => onItemClick(item),
    clickStage: (x, y) => onStageClick(x, y),
    enterItem: (item, x, y) => showNodeTooltip(item, x, y),
    leaveItem: () => {
      overNode = false;
      tooltip.hidden = true;
    },
    cameraMoved: () => {
      hideLinkTooltip();
      scheduleLod();
    },
  });
  view.frameStyle = (group, open) => ({
    stroke: open ? "#cbd5e1" : "#94a3b8",
    fill: open ? "" : (scene?.innerSeverity[group] ?? 0) > 0 ? "rgba(165, 15, 21, 0.06)" : "rgba(100, 116, 139, 0.07)",
  });

  const state = (): MapState => ({
    overlays,
    pathNodes: path?.nodes ?? new Set(),
    selected,
    pathStart,
    linkOverlay,
    thresholds,
    hops: hopShading,
  });
  const folds = () => ({
    utilisation: overlays.utilisation,
    mark: linkOverlay === "diff" ? overlays.linkDiff : null,
    path: path?.links ?? null,
    failed: overlays.linkMark,
    selected: picked?.mask ?? null,
  });
  const computeScene = (): Scene => (lodEnabled ? selectScene(model, view.view(), lodOptions, folds()) : fullScene(model, folds()));
  const refreshScene = (): void => {
    scene = computeScene();
    const styled = styleScene(model, scene, state());
    const closed: number[] = [];
    for (const item of scene.items) {
      if (item >= model.nodeCount) {
        closed.push(item - model.nodeCount);
      }
    }
    view.show(styled, scene.frames, closed);
    drawnAt = new Map(styled.nodes.map((node) => [node.item, node]));
    drawnInfo.textContent = t("map.status.drawn", { nodes: numbers.integer(scene.counts.nodes), links: numbers.integer(scene.counts.edges) });
    host.dataset["drawn"] = String(scene.counts.total);
    // A hovered link's tooltip follows its data (a replay frame's utilisation, a new level of detail).
    if (hovered !== null) {
      hovered.stale = true;
      scheduleHoverCheck();
    }
  };
  let lodTimer: ReturnType<typeof setTimeout> | undefined;
  let lastViewKey = "";
  const scheduleLod = (): void => {
    if (!lodEnabled) {
      return;
    }
    clearTimeout(lodTimer);
    lodTimer = setTimeout(() => {
      const v = view.view();
      const key = [v.x0, v.y0, v.x1, v.y1].map((value) => Math.round(value)).join(",");
      if (key !== lastViewKey) {
        lastViewKey = key;
        refreshScene();
      }
    }, 90);
  };

  // ---- interaction -----------------------------------------------------
  const nodeTooltip = (item: number): TooltipContent => {
    const lines: [string, string][] = [];
    let title: string;
    if (item >= model.nodeCount) {
      const g = item - model.nodeCount;
      title = model.groupLabel[g] ?? "";
      lines.push([t("map.tooltip.kind"), groupKindLabel(model.groupKind[g] ?? "", t)]);
      lines.push([t("map.tooltip.cards"), String(model.groupCards[g])]);
      lines.push([t("map.tooltip.nodes"), String(model.groupNodes[g])]);
      lines.push(["", t("map.tooltip.expand")]);
    } else {
      title = model.nodeName[item] ?? "";
      lines.push([t("map.tooltip.kind"), kindLabel(model.nodeKind[item] ?? "", t)]);
      lines.push([t("map.tooltip.tier"), tierLabel(model.nodeTier[item] ?? null, t)]);
      lines.push([t("map.tooltip.degree"), String(model.linksOfNode(item).length)]);
    }
    return { title, lines };
  };

  const fillTooltip = ({ title, lines }: TooltipContent): void => {
    tooltip.replaceChildren(
      element(doc, "strong", {}, [title]),
      ...lines.map(([label, value]) =>
        element(doc, "div", {}, label === "" ? [element(doc, "span", { class: "muted" }, [value])] : [element(doc, "span", { class: "muted" }, [`${label}: `]), value]),
      ),
    );
  };

  /** Shows the tooltip beside (x, y), CSS px in the stage, on whichever side it fits. */
  const placeTooltip = (x: number, y: number): void => {
    tooltip.hidden = false;
    const fitsRight = x + 12 + tooltip.offsetWidth <= stage.clientWidth;
    const fitsBelow = y + 12 + tooltip.offsetHeight <= stage.clientHeight;
    tooltip.style.left = `${fitsRight ? x + 12 : Math.max(0, x - 12 - tooltip.offsetWidth)}px`;
    tooltip.style.top = `${fitsBelow ? y + 12 : Math.max(0, y - 12 - tooltip.offsetHeight)}px`;
  };

  const showNodeTooltip = (item: number, x: number, y: number): void => {
    overNode = true;
    hovered = null;
    fillTooltip(nodeTooltip(item));
    placeTooltip(x, y);
  };

  // ---- link hover ------------------------------------------------------
  // Sigma's edge events stay off (their picking slows every redraw at 16k cards): while the pointer
  // moves, one nearestEdge check per animation frame, as a click would pick, finds the link under it.
  let overNode = false;
  let pointer: { clientX: number; clientY: number } | null = null;
  let hoverFrame = 0;
  // The edge whose tooltip is up and the links it stands for; stale until its lines show the current data.
  let hovered: { a: number; b: number; links: number[]; stale: boolean } | null = null;
  // End a's ports, for the cables' port names and widths: fetched once per node while hovering.
  const hoverDetails = new Map<number, NodeDetails>();
  const hoverFetches = new Set<number>();

  const hideLinkTooltip = (): void => {
    if (hovered !== null) {
      hovered = null;
      tooltip.hidden = true;
    }
  };
  const scheduleHoverCheck = (): void => {
    hoverFrame ||= requestAnimationFrame(checkHover);
  };

  const fillLinkTooltip = (shown: { a: number; b: number; links: number[] }): void => {
    const [a, b] = endsInOrder(shown.a, shown.b);
    const aggregated = a >= model.nodeCount || b >= model.nodeCount;
    const details = aggregated ? undefined : urls.node === "" ? detailsFromModel(model, a) : hoverDetails.get(a);
    fillTooltip(
      linkTooltip(
        {
          a: itemName(a),
          b: itemName(b),
          aggregated,
          summary: summariseLinks(model, shown.links, overlays.utilisation),
          gbps: shown.links.map((link) => model.linkGbps[link] as number),
          cables: details === undefined ? null : cablesTo(details, model.nodeId[b] ?? ""),
        },
        t,
        numbers,
      ),
    );
    if (!aggregated && details === undefined) {
      fetchHoverDetails(a);
    }
  };

  const fetchHoverDetails = (node: number): void => {
    if (hoverFetches.has(node)) {
      return;
    }
    hoverFetches.add(node);
    http.get(withQuery(urls.node, { id: model.nodeId[node] ?? "" })).then(
      (answer) => {
        hoverDetails.set(node, parseNodeDetails(answer));
        if (hovered !== null) {
          hovered.stale = true;
          scheduleHoverCheck();
        }
      },
      // Without its ports the tooltip still says what the layout knows; the next hover asks again.
      () => hoverFetches.delete(node),
    );
  };

  const checkHover = (): void => {
    hoverFrame = 0;
    if (pointer === null || overNode) {
      return;
    }
    const box = sigmaHost.getBoundingClientRect();
    const at = { x: pointer.clientX - box.left, y: pointer.clientY - box.top };
    const edge = scene.edges[nearestEdge(scene.edges, screenOfItem, at)];
    if (edge === undefined) {
      hideLinkTooltip();
      return;
    }
    if (hovered === null || hovered.a !== edge.a || hovered.b !== edge.b) {
      hovered = { a: edge.a, b: edge.b, links: linksOfEdge(model, scene.rep, edge.a, edge.b), stale: true };
    }
    if (hovered.stale) {
      hovered.stale = false;
      fillLinkTooltip(hovered);
    }
    placeTooltip(at.x, at.y);
  };

  sigmaHost.addEventListener("mousemove", (event) => {
    // A pressed button is a drag panning the map.
    if (event.buttons !== 0) {
      pointer = null;
      hideLinkTooltip();
      return;
    }
    pointer = { clientX: event.clientX, clientY: event.clientY };
    scheduleHoverCheck();
  });
  sigmaHost.addEventListener("mouseleave", () => {
    pointer = null;
    hideLinkTooltip();
  });

  const expandGroup = (group: number): void => {
    for (const g of pinsForGroup(model, group)) {
      pinned.add(g);
    }
    const x = model.groupX[group] as number;
    const y = model.groupY[group] as number;
    void view.focus(x, y, x + (model.groupW[group] as number), y + (model.groupH[group] as number)).then(() => refreshScene());
  };

  const onItemClick = (item: number): void => {
    tooltip.hidden = true;
    if (item >= model.nodeCount) {
      expandGroup(item - model.nodeCount);
      return;
    }
    onNodeChosen(item);
  };

  const onNodeChosen = (node: number): void => {
    if (pathMode) {
      pickForPath(node);
      return;
    }
    unpick();
    selected = node;
    if (hopShading !== null && model.nodeKind[node] === "card") {
      shadeHops(node);
    }
    refreshScene();
    context.onSelect?.(model.nodeId[node] ?? null);
    void showDetails(node);
  };

  const screenOfItem = (item: number): { x: number; y: number } | undefined => {
    const at = drawnAt.get(item);
    return at === undefined ? undefined : view.toScreen(at.x, at.y);
  };

  const onStageClick = (x: number, y: number): void => {
    const index = nearestEdge(scene.edges, screenOfItem, { x, y });
    const edge = scene.edges[index];
    if (edge !== undefined && !pathMode) {
      pickEdge(edge);
    }
  };

  /** Lower tiers first, so that a link reads from the card or NIC up: "node01/mlx5_0 → leaf01", "leaf-01 (33) → spine (16)". */
  const itemRank = (item: number): number => {
    if (item >= model.nodeCount) {
      return GROUP_RANK[model.groupKind[item - model.nodeCount] ?? ""] ?? 4;
    }
    return model.nodeKind[item] === "switch" ? (SWITCH_RANK[model.nodeTier[item] ?? "leaf"] ?? 1) : 0;
  };
  const itemName = (item: number): string =>
    item >= model.nodeCount ? groupLabel(model, item - model.nodeCount) : (model.nodeName[item] ?? "");

  const pickEdge = (edge: SceneEdge): void => {
    pickLinks(linksOfEdge(model, scene.rep, edge.a, edge.b), edge.a, edge.b);
  };

  const endsInOrder = (first: number, second: number): [number, number] =>
    itemRank(second) < itemRank(first) ? [second, first] : [first, second];

  const pickLinks = (links: number[], first: number, second: number): void => {
    const [a, b] = endsInOrder(first, second);
    const aggregated = a >= model.nodeCount || b >= model.nodeCount;
    hideLinkTooltip();
    if (selected !== null) {
      context.onSelect?.(null);
    }
    selected = null;
    picked = { links, mask: linkMask(model, links) };
    host.dataset["pickedLinks"] = String(links.length);
    refreshScene();
    context.onSelectLink?.(aggregated ? null : (links[0] ?? null));
    void showLinkDetails(links, a, b, aggregated);
  };

  const unpick = (): void => {
    if (picked !== null) {
      picked = null;
      delete host.dataset["pickedLinks"];
      context.onSelectLink?.(null);
    }
  };

  const showLinkDetails = async (links: number[], a: number, b: number, aggregated: boolean): Promise<void> => {
    const shown = picked;
    details.hidden = false;
    const close = button(t("map.details.close"), () => {
      details.hidden = true;
      unpick();
      refreshScene();
    });
    const header = element(doc, "div", { class: "tmap-details-head" }, [element(doc, "h3", {}, [`${itemName(a)} → ${itemName(b)}`]), close]);
    const summary = summariseLinks(model, links, overlays.utilisation);
    const end = (item: number) => ({ id: item >= model.nodeCount ? null : (model.nodeId[item] ?? null), name: itemName(item) });
    const render = (cables: ReturnType<typeof cablesTo>): void => {
      if (picked === shown) {
        const info = { a: end(a), b: end(b), aggregated, summary, cables };
        details.replaceChildren(header, ...renderLinkDetails(doc, info, t, numbers, onPeerChosen));
      }
    };
    if (aggregated) {
      render([]);
      return;
    }
    details.replaceChildren(header, element(doc, "p", { class: "muted" }, [t("map.details.loading")]));
    const peerId = model.nodeId[b] ?? "";
    try {
      const info = urls.node === "" ? detailsFromModel(model, a) : parseNodeDetails(await http.get(withQuery(urls.node, { id: model.nodeId[a] ?? "" })));
      render(cablesTo(info, peerId));
    } catch (error) {
      if (picked === shown) {
        details.replaceChildren(header, element(doc, "p", { class: "error" }, [t("map.details.failed", { detail: describeRequestError(error, t) })]));
      }
    }
  };

  const onPeerChosen = (id: string): void => {
    void api.focusNode(id).then((found) => {
      const peer = model.indexOfId.get(id);
      if (found && peer !== undefined) {
        onNodeChosen(peer);
      }
    });
  };

  const shadeHops = (source: number): void => {
    const values = hopsFrom(model, source);
    const counts = hopCounts(model, values, source);
    hopShading = { source, values, counts, colours: new Map(counts.map((row) => [row.hops, row.colour])) };
    host.dataset["hopSource"] = model.nodeId[source] ?? "";
    host.dataset["hopCounts"] = counts.map((row) => `${String(row.hops)}:${String(row.cards)}`).join(",");
    renderLegend();
  };

  const showDetails = async (node: number): Promise<void> => {
    details.hidden = false;
    const close = button(t("map.details.close"), () => {
      details.hidden = true;
      selected = null;
      context.onSelect?.(null);
      refreshScene();
    });
    const fromHere = button(t("map.details.pathFrom"), () => {
      setPathMode(true);
      pickForPath(node);
    });
    const header = element(doc, "div", { class: "tmap-details-head" }, [element(doc, "h3", {}, [model.nodeName[node] ?? ""]), close]);
    details.replaceChildren(header, element(doc, "p", { class: "muted" }, [t("map.details.loading")]));
    try {
      const info =
        urls.node === ""
          ? detailsFromModel(model, node)
          : parseNodeDetails(await http.get(withQuery(urls.node, { id: model.nodeId[node] ?? "" })));
      if (selected === node) {
        details.replaceChildren(header, ...renderDetails(doc, info, t, onPeerChosen), fromHere, ...failureButton(node));
      }
    } catch (error) {
      details.replaceChildren(header, element(doc, "p", { class: "error" }, [t("map.details.failed", { detail: describeRequestError(error, t) })]));
    }
  };

  // On a page with the failure what-if form, a switch picked on the map can be added to it.
  const failureButton = (node: number): HTMLElement[] => {
    const field = doc.querySelector<HTMLInputElement>("#failure-form input[name=elements]");
    const id = model.nodeId[node];
    if (field === null || id === undefined || model.nodeKind[node] !== "switch") {
      return [];
    }
    return [
      button(t("map.details.addFailure"), () => {
        const elements = addElement(field.value, id);
        field.value = elements;
        status.textContent = t("map.details.addedFailure", { elements });
      }),
    ];
  };

  const setPathMode = (on: boolean): void => {
    pathMode = on;
    pathButton.setAttribute("aria-pressed", String(on));
    pathStart = null;
    if (on) {
      path = null;
      status.textContent = t("map.path.pickFirst");
    } else {
      status.textContent = "";
    }
    refreshScene();
  };

  const pickForPath = (node: number): void => {
    if (pathStart === null || pathStart === node) {
      pathStart = node;
      path = null;
      status.textContent = t("map.path.pickSecond", { name: model.nodeName[node] ?? "" });
      refreshScene();
      return;
    }
    const from = pathStart;
    const names = { a: model.nodeName[from] ?? "", b: model.nodeName[node] ?? "" };
    const local = (): void => {
      const found = shortestPath(model, from, node);
      if (found === null) {
        status.textContent = t("map.path.none", names);
      } else {
        api.showPath(found.map((index) => model.nodeId[index] ?? ""));
      }
    };
    pathStart = null;
    pathMode = false;
    pathButton.setAttribute("aria-pressed", "false");
    if (urls.path === "") {
      local();
      return;
    }
    http.get(withQuery(urls.path, { a: model.nodeId[from] ?? "", b: model.nodeId[node] ?? "" })).then(
      (answer) => {
        const parsed = parsePath(answer);
        if (parsed === null || parsed.nodes.length === 0) {
          status.textContent = t("map.path.none", names);
        } else {
          api.showPath(parsed.nodes, parsed.hops);
        }
      },
      (error: unknown) => {
        status.textContent =
          (error as { status?: number }).status === 404 ? t("map.path.none", names) : t("map.path.failed", { detail: describeRequestError(error, t) });
        refreshScene();
      },
    );
  };

  stage.addEventListener("keydown", (event) => {
    const step = 80;
    const actions: Record<string, () => void> = {
      ArrowLeft: () => view.panBy(-step, 0),
      ArrowRight: () => view.panBy(step, 0),
      ArrowUp: () => view.panBy(0, -step),
      ArrowDown: () => view.panBy(0, step),
      "+": () => view.zoomBy(1.6),
      "=": () => view.zoomBy(1.6),
      "-": () => view.zoomBy(1 / 1.6),
      "0": () => view.reset(),
      Escape: () => {
        if (selected !== null) {
          context.onSelect?.(null);
        }
        selected = null;
        unpick();
        path = null;
        setPathMode(false);
      },
    };
    const action = actions[event.key];
    if (action !== undefined && event.target === stage) {
      event.preventDefault();
      action();
    }
  });

  // ---- legend ----------------------------------------------------------
  const renderLegend = (): void => {
    const entry = (colour: string, label: string, shape: "node" | "link" | "box"): HTMLElement => {
      const swatch = element(doc, "span", { class: `legend-swatch legend-${shape}` });
      swatch.style.background = colour;
      return element(doc, "li", {}, [swatch, label]);
    };
    const categories = new Set<string>();
    for (let node = 0; node < model.nodeCount; node += 1) {
      categories.add(nodeCategory(model, node));
    }
    const entries: HTMLElement[] = Object.keys(CATEGORY_LABELS)
      .filter((category) => categories.has(category))
      .map((category) => entry(NODE_COLOURS[category] ?? "#94a3b8", t(CATEGORY_LABELS[category]!), "node"));
    if (model.groupCount > 0) {
      entries.push(entry(GROUP_COLOURS["pod"]!, t("map.legend.group"), "node"));
      entries.push(entry(LINK_COLOURS.down, t("map.legend.faultInside"), "node"));
    }
    if (linkOverlay === "diff") {
      for (const diffClass of DIFF_CLASSES.filter((c) => diffPresent.has(c))) {
        entries.push(entry(DIFF_COLOURS[diffClass], t(DIFF_LABELS[diffClass]), "link"));
      }
    } else if (linkOverlay === "utilisation" && thresholds !== null) {
      const warning = thresholdPercent(thresholds.warning);
      const critical = thresholdPercent(thresholds.critical);
      entries.push(entry(BAND_COLOURS.ok, t("map.legend.bandOk", { warning }), "link"));
      entries.push(entry(BAND_COLOURS.warning, t("map.legend.bandWarning", { warning, critical }), "link"));
      entries.push(entry(BAND_COLOURS.critical, t("map.legend.bandCritical", { critical }), "link"));
    } else if (linkOverlay === "utilisation") {
      const gradient = element(doc, "span", { class: "legend-swatch legend-gradient" });
      gradient.style.background = `linear-gradient(to right, ${UTILISATION_STOPS.map(([stop, colour]) => `${colour} ${stop * 100}%`).join(", ")})`;
      entries.push(element(doc, "li", {}, [gradient, t("map.legend.utilisation")]));
    } else {
      for (const state of ["up", "degraded", "down"] as const) {
        entries.push(entry(LINK_COLOURS[state], t(LINK_STATE_LABELS[state]), "link"));
      }
    }
    if (overlays.nodeMark) {
      const present = new Set(overlays.nodeMark);
      NODE_MARKS.forEach((mark, index) => {
        if (present.has(index)) {
          entries.push(entry(NODE_MARK_COLOURS[mark], t(NODE_MARK_LABELS[mark]), "node"));
        }
      });
      if ([...present].some((code) => code >= FIRST_GROUP_MARK)) {
        const swatch = element(doc, "span", { class: "legend-swatch legend-node legend-groups" });
        swatch.style.background = `conic-gradient(${GROUP_MARK_COLOURS.slice(0, 4).join(", ")})`;
        entries.push(element(doc, "li", {}, [swatch, t("map.mark.placedGroups")]));
      }
    }
    if (overlays.linkMark?.includes(1)) {
      entries.push(entry(FAILED_LINK_COLOUR, t("map.mark.failedLink"), "link"));
    }
    if (path !== null) {
      entries.push(entry(PATH_COLOUR, t("map.legend.path"), "link"));
    }
    if (hopShading !== null) {
      entries.push(element(doc, "li", { class: "legend-heading" }, [t("map.legend.hopsFrom", { name: model.nodeName[hopShading.source] ?? "" })]));
      for (const row of hopShading.counts) {
        const cards = numbers.integer(row.cards);
        const label =
          row.hops === UNREACHABLE
            ? t("map.legend.hopsUnreachable", { cards })
            : row.hops === 1
              ? t("map.legend.hopsOne", { cards })
              : t("map.legend.hops", { hops: numbers.integer(row.hops), cards });
        entries.push(entry(row.colour, label, "node"));
      }
      entries.push(element(doc, "li", {}, [button(t("map.legend.hopsClear"), () => api.clearOverlay("hops"), { class: "btn btn-small tmap-hops-clear" })]));
    }
    legend.replaceChildren(...entries);
  };
  const renderOverlayChoices = (): void => {
    const choices: [MapState["linkOverlay"], string][] = [["none", t("map.overlay.none")]];
    if (overlays.utilisation) {
      choices.push(["utilisation", t("map.overlay.utilisation")]);
    }
    if (overlays.linkDiff) {
      choices.push(["diff", t("map.overlay.diff")]);
    }
    overlaySelect.replaceChildren(
      ...choices.map(([value, label]) => {
        const option = element(doc, "option", { value }, [label]);
        option.selected = value === linkOverlay;
        return option;
      }),
    );
    overlaySelect.hidden = choices.length <= 1;
  };

  // ---- public handle ---------------------------------------------------
  const api: TopologyMap = {
    model,
    lod: lodEnabled,
    firstDrawAt: 0,
    setLinkUtilisation(input) {
      const { values, unmatched } = utilisationArray(model, input, pairs);
      overlays.utilisation = values;
      linkOverlay = "utilisation";
      renderOverlayChoices();
      renderLegend();
      refreshScene();
      return { unmatched };
    },
    linkUtilisation: () => overlays.utilisation,
    setUtilisationThresholds(wanted) {
      thresholds = wanted === null ? null : { warning: wanted.warning, critical: wanted.critical };
      renderLegend();
      refreshScene();
    },
    setNodeMarks(ids, marks) {
      overlays.nodeMark = nodeMarkArray(model, ids, marks);
      renderLegend();
      refreshScene();
    },
    setLinkMarks(links) {
      const { marks, unmatched } = linkMarkArray(model, links);
      overlays.linkMark = marks.includes(1) ? marks : null;
      // A few failed links are opened up to, like a path; many would open everything.
      if (links.length <= 50) {
        for (const link of links) {
          for (const end of [model.linkA[link], model.linkB[link]]) {
            for (const g of end === undefined ? [] : pinsForNode(model, end)) {
              pinned.add(g);
            }
          }
        }
      }
      renderLegend();
      refreshScene();
      return { unmatched };
    },
    showHopsFrom(id) {
      const chosen = id === null ? (selected !== null && model.nodeKind[selected] === "card" ? selected : model.nodeKind.indexOf("card")) : model.indexOfId.get(id);
      if (chosen === undefined || chosen < 0 || model.nodeKind[chosen] !== "card") {
        return null;
      }
      shadeHops(chosen);
      refreshScene();
      return { source: model.nodeId[chosen] ?? "", counts: hopShading?.counts ?? [] };
    },
    clearOverlay(name) {
      if (name === "hops") {
        hopShading = null;
        delete host.dataset["hopSource"];
        delete host.dataset["hopCounts"];
      } else if (name === "utilisation") {
        overlays.utilisation = null;
      } else if (name === "marks") {
        overlays.nodeMark = null;
        overlays.linkMark = null;
      } else {
        overlays.linkDiff = null;
        overlays.nodeDiff = null;
      }
      if ((linkOverlay === "utilisation" && !overlays.utilisation) || (linkOverlay === "diff" && !overlays.linkDiff)) {
        linkOverlay = overlays.linkDiff ? "diff" : overlays.utilisation ? "utilisation" : "none";
      }
      renderOverlayChoices();
      renderLegend();
      refreshScene();
    },
    async focusNode(id) {
      const node = model.indexOfId.get(id);
      if (node === undefined) {
        return false;
      }
      for (const g of pinsForNode(model, node)) {
        pinned.add(g);
      }
      const x = model.nodeX[node] as number;
      const y = model.nodeY[node] as number;
      const reach = 60;
      await view.focus(x - reach, y - reach, x + reach, y + reach);
      selected = node;
      refreshScene();
      return true;
    },
    async selectNode(id) {
      const node = model.indexOfId.get(id);
      // A deep link selects as soon as the map is mounted: a focus asked before sigma's first
      // frames have been drawn lands off the node, so wait for them.
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      if (node === undefined || !(await api.focusNode(id))) {
        return false;
      }
      onNodeChosen(node);
      return true;
    },
    async selectLink(link) {
      const a = model.linkA[link];
      const b = model.linkB[link];
      // As for a node: wait for sigma's first frames, or the focus lands off the link.
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      if (!Number.isInteger(link) || a === undefined || b === undefined) {
        return false;
      }
      for (const end of [a, b]) {
        for (const g of pinsForNode(model, end)) {
          pinned.add(g);
        }
      }
      const [ax, ay, bx, by] = [model.nodeX[a], model.nodeY[a], model.nodeX[b], model.nodeY[b]] as number[];
      const reach = 30;
      await view.focus(Math.min(ax!, bx!) - reach, Math.min(ay!, by!) - reach, Math.max(ax!, bx!) + reach, Math.max(ay!, by!) + reach);
      pickLinks(parallelLinks(model, link), a, b);
      return true;
    },
    linkOnScreen(link) {
      const a = model.linkA[link];
      const b = model.linkB[link];
      if (a === undefined || b === undefined) {
        return null;
      }
      const [repA, repB] = [scene.rep[a], scene.rep[b]];
      const from = repA === undefined ? undefined : screenOfItem(repA);
      const to = repB === undefined ? undefined : screenOfItem(repB);
      // Both ends inside one closed group: no edge is drawn for the link.
      if (from === undefined || to === undefined || repA === repB) {
        return null;
      }
      const box = sigmaHost.getBoundingClientRect();
      return { x: box.left + (from.x + to.x) / 2, y: box.top + (from.y + to.y) / 2 };
    },
    showPath(ids, hops) {
      path = pathHighlight(model, ids, hops);
      for (const node of path.nodes) {
        for (const g of pinsForNode(model, node)) {
          pinned.add(g);
        }
      }
      const names = { a: model.nodeName[model.indexOfId.get(ids[0] ?? "") ?? -1] ?? ids[0] ?? "", b: model.nodeName[model.indexOfId.get(ids[ids.length - 1] ?? "") ?? -1] ?? "" };
      status.textContent = path.hops === 1 ? t("map.path.oneHop", names) : t("map.path.result", { ...names, hops: path.hops });
      host.dataset["pathHops"] = String(path.hops);
      renderLegend();
      refreshScene();
    },
    clearPath() {
      path = null;
      delete host.dataset["pathHops"];
      status.textContent = "";
      renderLegend();
      refreshScene();
    },
    drawn: () => scene.counts,
    labels: () => view.placed,
    redraw: () => view.redraw(),
    updateLod() {
      const started = performance.now();
      refreshScene();
      view.redraw();
      return performance.now() - started;
    },
    setCamera(ratio, x, y) {
      const camera = view.sigma.getCamera();
      const centre =
        x === undefined || y === undefined ? { x: 0.5, y: 0.5 } : view.sigma.viewportToFramedGraph(view.toScreen(x, y));
      camera.setState({ ratio, x: centre.x, y: centre.y });
    },
    view: () => view.view(),
    exportPng: () => new Promise((resolve) => view.composePng().toBlob(resolve, "image/png")),
    exportSvg: () => {
      const { width, height } = view.sigma.getDimensions();
      return sceneToSvg(model, styleScene(model, scene, state()), view.view(), {
        width,
        height,
        title: fileStem(),
        frames: scene.frames,
      });
    },
  };

  new ResizeObserver(() => {
    view.resize();
    scheduleLod();
  }).observe(stage);

  refreshScene();
  view.redraw();
  (api as { firstDrawAt: number }).firstDrawAt = performance.now();
  host.dataset["nodes"] = String(model.nodeCount);
  renderOverlayChoices();
  renderLegend();

  if (urls.diff !== "") {
    http.get(urls.diff).then(
      (answer) => {
        const findings = parseFindings(answer);
        const arrays = diffArrays(model, findings, pairs);
        overlays.linkDiff = arrays.linkDiff;
        overlays.nodeDiff = arrays.nodeDiff;
        diffPresent = arrays.present;
        linkOverlay = "diff";
        status.textContent = findings.length === 1 ? t("map.overlay.diffCountOne") : t("map.overlay.diffCount", { count: numbers.integer(findings.length) });
        host.dataset["diffFindings"] = String(findings.length);
        renderOverlayChoices();
        renderLegend();
        refreshScene();
      },
      (error: unknown) => {
        status.textContent = t("map.overlay.diffFailed", { detail: describeRequestError(error, t) });
      },
    );
  }
  return api;
}

