// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { HttpError, type JsonClient } from "../http";
import { translator } from "../i18n";
import { mountFabricMap } from "./fabricMap";

function mapPage(): HTMLCanvasElement {
  document.body.innerHTML = `<div class="map-wrap"><canvas id="fabric-map" data-graph-url="/api/snapshots/7/graph/"></canvas></div>`;
  return document.getElementById("fabric-map") as HTMLCanvasElement;
}

function api(answer: Promise<unknown>): JsonClient & { gets: string[] } {
  const gets: string[] = [];
  return {
    gets,
    get: (url) => {
      gets.push(url);
      return answer;
    },
    post: () => Promise.reject(new Error("unexpected POST")),
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(() => {
  document.body.innerHTML = "";
});

describe("mountFabricMap", () => {
  it("says so while loading, then shows the empty state for a graph without nodes", async () => {
    const canvas = mapPage();
    const client = api(Promise.resolve({ snapshot: 7, nodes: [], links: [] }));
    mountFabricMap(canvas, { doc: document, t: translator("en"), http: client });
    expect(document.querySelector(".map-notice")?.textContent).toBe("Loading fabric…");
    await settle();
    expect(client.gets).toEqual(["/api/snapshots/7/graph/"]);
    expect(document.querySelectorAll(".map-notice")).toHaveLength(1);
    expect(document.querySelector(".map-notice.empty")?.textContent).toBe("No nodes in this snapshot.");
    expect(canvas.hidden).toBe(true);
  });

  it("explains a failed fetch in the page language", async () => {
    const canvas = mapPage();
    const client = api(Promise.reject(new HttpError(404, "Snapshot not found.")));
    mountFabricMap(canvas, { doc: document, t: translator("zh-hans"), http: client });
    await settle();
    expect(document.querySelector(".map-notice.error")?.textContent).toBe("无法加载网络拓扑：Snapshot not found.");
  });

  it("reports a malformed graph as an unexpected response", async () => {
    const canvas = mapPage();
    mountFabricMap(canvas, { doc: document, t: translator("en"), http: api(Promise.resolve({ nodes: "?" })) });
    await settle();
    expect(document.querySelector(".map-notice.error")?.textContent).toBe(
      "Could not load the fabric graph: The server sent an unexpected response.",
    );
  });
});
