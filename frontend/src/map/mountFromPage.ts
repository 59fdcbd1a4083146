// Finds the map's host on the page. The fabric page renders
// <div id="fabric-map" data-layout-url=…>; an older template's
// <canvas id="fabric-map" data-graph-url=".../graph/"> is replaced by such a
// div, its layout URL derived from the graph URL, so either template works.

import { mountTopologyMap, type TopologyMap, type TopologyMapContext } from "./topologyMap";

export function mountMapFromPage(found: HTMLElement, context: TopologyMapContext): Promise<TopologyMap | null> {
  let host = found;
  if (found instanceof HTMLCanvasElement) {
    host = context.doc.createElement("div");
    host.id = found.id;
    const graphUrl = found.dataset["graphUrl"] ?? "";
    host.dataset["layoutUrl"] = found.dataset["layoutUrl"] ?? graphUrl.replace(/graph\/?$/, "layout/");
    const wrap = found.closest(".map-wrap");
    (wrap ?? found).replaceWith(host);
  }
  return mountTopologyMap(host, context);
}
