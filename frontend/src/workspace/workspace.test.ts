// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { translator } from "../core/i18n";
import type { RunMapMarks } from "../runs/runMarks";
import type { RunOverlay } from "../runs/runOverlay";
import { parseRun, type Run } from "../runs/runState";
import { COLLECTIVE_RESULT, FAILURES_RESULT, FakeTimers, PLACEMENT_RESULT, ScriptedApi, runSnapshot, settle } from "../testing/fakes";
import { SAVE_DELAY_MS } from "./dock";
import { FRAME_WRITE_MS, mountWorkspace } from "./workspace";

function page(search: string, layout = '{"right": 480, "bottom": 260, "collapsed": ["placement", "player", "details"]}') {
  document.body.innerHTML = `
    <div class="workspace" id="workspace" data-snapshot="7" data-layout-url="/api/preferences/workspace/">
      <section class="panel workspace-map" id="map-panel"><h2>Map</h2><div id="fabric-map"></div></section>
      <section class="panel" data-dock="right" data-panel="details"><h2>Details</h2><div id="map-details"></div></section>
      <section class="panel" data-dock="right" data-panel="placement"><h2>Place a job</h2><div id="placement-slot"></div></section>
      <section class="panel" data-dock="bottom" data-panel="player"><h2>Replay player</h2><p id="player-empty">nothing</p></section>
    </div>`;
  const root = document.getElementById("workspace") as HTMLElement;
  root.dataset["layout"] = layout;
  const http = new ScriptedApi();
  const timers = new FakeTimers();
  const urls: string[] = [];
  const offered: number[] = [];
  const marked: string[] = [];
  const replays: { ws: string; startFrame: number | null }[] = [];
  const overlay: RunOverlay = { offer: (run) => offered.push(run.id), clear: () => undefined };
  const marks: RunMapMarks = {
    showPlacement: (runUrl, strategy) => {
      marked.push(`${runUrl} ${strategy}`);
      return Promise.resolve(`${strategy}: marked`);
    },
    showFailure: (elements) => {
      marked.push(elements.join(","));
      return Promise.resolve("failed marked");
    },
    clear: () => undefined,
  };
  const workspace = mountWorkspace(
    root,
    { doc: document, t: translator("en"), http, timers, location: { pathname: "/fabrics/3/", search, hash: "" }, replaceUrl: (url) => urls.push(url) },
    {
      overlay,
      marks,
      showReplay: (host, startFrame) => replays.push({ ws: host.dataset["ws"] ?? "", startFrame }),
      showHops: () => {
        marked.push("hops");
        return Promise.resolve("hops shown");
      },
    },
  );
  const expanded = (panel: string) => root.querySelector(`[data-panel=${panel}] .dock-toggle`)?.getAttribute("aria-expanded");
  return { root, http, timers, urls, offered, marked, replays, workspace, expanded };
}

const run = (overrides: Record<string, unknown>): Run => parseRun(runSnapshot(overrides)) as Run;

beforeEach(() => {
  document.body.innerHTML = "";
});

describe("mountWorkspace", () => {
  it("docks the panels as the user left them and saves changes to their preferences", () => {
    const { http, timers, expanded, workspace } = page("");
    expect(workspace.dock.layout).toEqual({ right: 480, bottom: 260, collapsed: ["details", "placement", "player"], order: [] });
    expect(expanded("placement")).toBe("false");
    workspace.dock.setCollapsed("placement", false);
    timers.fireNext();
    expect(timers.requestedDelays).toContain(SAVE_DELAY_MS);
    expect(http.puts).toEqual([{ url: "/api/preferences/workspace/", body: { value: { right: 480, bottom: 260, collapsed: ["details", "player"], order: [] } } }]);
  });

  it("takes the defaults for a broken stored layout", () => {
    const { workspace } = page("", "{not json");
    expect(workspace.dock.layout.collapsed).toEqual(["player", "telemetry"]);
  });

  it("writes the snapshot into the URL at once, and the selected node as it changes", () => {
    const { urls, workspace, expanded } = page("?compare=2");
    expect(urls).toEqual(["/fabrics/3/?compare=2&snapshot=7"]);
    workspace.onSelect("leaf-07");
    expect(urls.at(-1)).toBe("/fabrics/3/?compare=2&snapshot=7&node=leaf-07");
    expect(expanded("details")).toBe("true"); // a selected node's details are shown
    workspace.onSelect(null);
    expect(urls.at(-1)).toBe("/fabrics/3/?compare=2&snapshot=7");
    workspace.onSelectLink(12);
    expect(urls.at(-1)).toBe("/fabrics/3/?compare=2&snapshot=7&link=12");
    workspace.onSelectLink(null);
    expect(urls.at(-1)).toBe("/fabrics/3/?compare=2&snapshot=7");
  });

  it("names a started run in the URL and draws a finished one on the map, once", async () => {
    const view = page("?snapshot=7&run=12&node=leaf-07");
    const slot = document.getElementById("placement-slot") as HTMLElement;
    view.workspace.onRun(run({ id: 40, kind: "placement", status: "running" }), "/api/runs/40/");
    expect(view.urls.at(-1)).toBe("/fabrics/3/?snapshot=7&run=40&node=leaf-07");
    expect(view.marked).toEqual([]);
    slot.innerHTML = '<section class="run-widget" data-run-url="/api/runs/40/"><p class="marks-status" hidden></p></section>';
    const done = run({ id: 40, kind: "placement", status: "succeeded", result: PLACEMENT_RESULT });
    view.workspace.onRun(done, "/api/runs/40/");
    view.workspace.onRun(done, "/api/runs/40/"); // drawn once, however often the widget repeats it
    await settle();
    expect(view.marked).toEqual(["/api/runs/40/ aware"]);
    expect(slot.querySelector<HTMLElement>(".marks-status")?.hidden).toBe(false);
    expect(slot.querySelector(".marks-status")?.textContent).toBe("aware: marked");

    view.workspace.onRun(run({ id: 41, kind: "failures", status: "succeeded", result: FAILURES_RESULT }), "/api/runs/41/");
    view.workspace.onRun(run({ id: 42, kind: "collective", status: "succeeded", result: COLLECTIVE_RESULT }), "/api/runs/42/");
    expect(view.marked.at(-1)).toBe("leaf-03");
    expect(view.offered).toEqual([42]);
    expect(view.urls.at(-1)).toBe("/fabrics/3/?snapshot=7&run=42&node=leaf-07");
  });

  it("colours the map by hops when a hop statistics run has succeeded, and says so in its result", async () => {
    const view = page("");
    const slot = document.getElementById("placement-slot") as HTMLElement;
    slot.innerHTML = '<section class="run-widget" data-run-url="/api/runs/60/"><p class="marks-status" hidden></p></section>';
    view.workspace.onRun(run({ id: 60, kind: "hop_stats", status: "running" }), "/api/runs/60/");
    expect(view.marked).toEqual([]);
    view.workspace.onRun(run({ id: 60, kind: "hop_stats", status: "succeeded", result: {} }), "/api/runs/60/");
    await settle();
    expect(view.marked).toEqual(["hops"]);
    expect(slot.querySelector(".marks-status")?.textContent).toBe("hops shown");
  });

  it("reveals the panel a server-rendered run widget sits in", () => {
    document.body.innerHTML = "";
    const html = `<div class="workspace" id="workspace" data-layout='{"collapsed": ["placement"]}'>
      <section class="panel workspace-map"><div id="fabric-map"></div></section>
      <section class="panel" data-dock="right" data-panel="placement"><h2>Place</h2><div id="placement-slot"><section class="run-widget" data-run-url="/api/runs/12/"></section></div></section>
      <section class="panel" data-dock="bottom" data-panel="player"><h2>Player</h2><div id="replay-player" data-ws="/ws/replays/12/"></div></section></div>`;
    document.body.innerHTML = html;
    const root = document.getElementById("workspace") as HTMLElement;
    const workspace = mountWorkspace(
      root,
      { doc: document, t: translator("en"), http: new ScriptedApi(), timers: new FakeTimers(), location: { pathname: "/fabrics/3/", search: "?run=12&frame=30", hash: "" }, replaceUrl: () => undefined },
      {},
    );
    expect(workspace.dock.layout.collapsed).toEqual([]);
    // The deep link's frame goes to the player of its run, once.
    expect(workspace.startFrameFor(11)).toBeNull();
    expect(workspace.startFrameFor(12)).toBe(30);
    expect(workspace.startFrameFor(12)).toBeNull();
  });

  it("puts a finished replay's player in the bottom dock and opens it", () => {
    const { replays, expanded, workspace } = page("");
    workspace.onRun(run({ id: 50, kind: "replay", status: "succeeded", result: {} }), "/api/runs/50/");
    expect(replays).toEqual([{ ws: "/ws/replays/50/", startFrame: null }]);
    const host = document.getElementById("replay-player") as HTMLElement;
    expect(host.dataset["frameUrl"]).toBe("/api/runs/50/frames/");
    expect(document.getElementById("player-empty")).toBeNull();
    expect(expanded("player")).toBe("true");
  });

  it("writes the replay frame shown into the URL, a few times a second at most, the last one always", () => {
    const { urls, timers, workspace } = page("?snapshot=7&run=50");
    for (const index of [1, 2, 3]) {
      workspace.onFrame(index);
    }
    expect(timers.pending.filter((timer) => timer.delayMs === FRAME_WRITE_MS)).toHaveLength(1);
    timers.fireNext();
    expect(urls.at(-1)).toBe("/fabrics/3/?snapshot=7&run=50&frame=3");
    workspace.onFrame(4);
    timers.fireNext();
    expect(urls.at(-1)).toBe("/fabrics/3/?snapshot=7&run=50&frame=4");
  });
});
