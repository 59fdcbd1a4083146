// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { mountFabricLive } from "./fabricLive";
import { parseFrame, type Frame } from "../replay/frames";
import { translator } from "../core/i18n";
import { mountLiveTelemetry, telemetryNote } from "./liveTelemetry";
import { LiveStatusMonitor } from "./liveStatus";
import type { LinkValues } from "../map/overlay";
import { overlaySlot } from "../map/overlaySlot";
import type { FrameMap } from "../map/overlaySlot";
import { runOverlay } from "../runs/runOverlay";
import { parseRun, type Run } from "../runs/runState";
import { FakeTimers, FakeWebSocket, ScriptedApi, base64Bytes, replayFrame, runSnapshot, settle } from "../testing/fakes";

/** Records what telemetry and the run overlay ask of the map. */
class FakeMap implements FrameMap {
  readonly calls: (["set", number[]] | ["clear", string])[] = [];
  constructor(readonly model: { readonly linkCount: number; readonly snapshot?: unknown } = { linkCount: 4 }) {}

  setLinkUtilisation(input: LinkValues): { unmatched: number } {
    this.calls.push(["set", Array.from(input.values ?? [], (value) => Number(Number(value).toFixed(3)))]);
    return { unmatched: 0 };
  }

  clearOverlay(name: "utilisation" | "marks" | "diff"): void {
    this.calls.push(["clear", name]);
  }
}

// 2026-11-30T08:00:01Z
const SAMPLED_AT = 1796025601;

function telemetryMessage(seq: number, bytes: number[] = [255, 0, 0, 51], report: Record<string, unknown> = { samples: 8, unknown_ports: 2 }) {
  return {
    type: "fabric.telemetry",
    seq,
    frame: replayFrame({ source: "telemetry", t_s: SAMPLED_AT - 1, t_end_s: SAMPLED_AT, utilization: base64Bytes(bytes), telemetry: report }),
  };
}

function page(map: FakeMap | null = new FakeMap()) {
  document.body.innerHTML = `<div id="fabric-live" hidden data-fabric-ws="/ws/fabrics/3/" data-fabric-url="/fabrics/3/"></div><section><div id="fabric-map"></div></section>`;
  const t = translator("en");
  const slot = overlaySlot();
  const timers = new FakeTimers();
  const telemetry = mountLiveTelemetry(document.getElementById("fabric-map") as HTMLElement, {
    doc: document,
    t,
    map: () => Promise.resolve(map),
    slot,
    timeZone: "UTC",
  });
  mountFabricLive(document.getElementById("fabric-live") as HTMLElement, {
    doc: document,
    t,
    liveStatus: new LiveStatusMonitor({ checkHealth: () => new Promise(() => undefined), showBanner: () => undefined, timers }),
    pageLocation: { protocol: "https:", host: "twin.example" },
    openSocket: FakeWebSocket.open,
    timers,
    telemetry,
  });
  const note = () => document.getElementById("telemetry-note") as HTMLElement;
  return { telemetry, map, slot, note, socket: FakeWebSocket.latest(), button: telemetry.button, timers };
}

beforeEach(() => FakeWebSocket.reset());

describe("telemetryNote", () => {
  it("gives the last sample's local time and the unknown ports", () => {
    const t = translator("en");
    const frame = parseFrame(telemetryMessage(1).frame) as Frame;
    expect(telemetryNote(frame, t, "UTC")).toBe("Live: last sample at 2026-11-30 08:00:01, 2 unknown ports.");
    expect(telemetryNote(frame, t, "Asia/Shanghai")).toBe("Live: last sample at 2026-11-30 16:00:01, 2 unknown ports.");
    const one = parseFrame(telemetryMessage(1, [0], { unknown_ports: ["leaf-1:7"] }).frame) as Frame;
    expect(telemetryNote(one, t, "UTC")).toBe("Live: last sample at 2026-11-30 08:00:01, 1 unknown port.");
    const none = parseFrame(telemetryMessage(1, [0], { samples: 3, unknown_ports: 0 }).frame) as Frame;
    expect(telemetryNote(none, translator("zh-hans"), "UTC")).toBe("实时：最后采样时间 2026-11-30 08:00:01。");
  });
});

describe("live telemetry toggle", () => {
  it("puts an off toggle next to the map", async () => {
    const { button, note, map } = page();
    await settle();
    expect(button.id).toBe("telemetry-toggle");
    expect(button.textContent).toBe("Live telemetry");
    expect(button.getAttribute("aria-pressed")).toBe("false");
    expect(button.closest(".map-live-bar")?.nextElementSibling?.id).toBe("fabric-map");
    expect(note().hidden).toBe(true);
    expect(map?.calls).toEqual([]);
  });

  it("draws nothing while off, then the newest frame once on, and each newer one", async () => {
    const { button, note, map, socket } = page();
    await settle();
    socket.serverSends(telemetryMessage(1, [255, 255, 255, 255]));
    socket.serverSends(telemetryMessage(2));
    expect(map?.calls).toEqual([]);
    button.click();
    expect(button.getAttribute("aria-pressed")).toBe("true");
    expect(map?.calls).toEqual([["set", [1, 0, 0, 0.2]]]);
    expect(note().hidden).toBe(false);
    expect(note().textContent).toBe("Live: last sample at 2026-11-30 08:00:01, 2 unknown ports.");
    socket.serverSends(telemetryMessage(2, [0, 0, 0, 0])); // not newer
    socket.serverSends(telemetryMessage(1, [0, 0, 0, 0]));
    socket.serverSends(telemetryMessage(5, [51, 51, 51, 51]));
    expect(map?.calls).toEqual([
      ["set", [1, 0, 0, 0.2]],
      ["set", [0.2, 0.2, 0.2, 0.2]],
    ]);
  });

  it("waits for a sample when switched on early, and clears the map when switched off", async () => {
    const { button, note, map, socket } = page();
    await settle();
    button.click();
    expect(note().textContent).toBe("Live: waiting for the next sample…");
    socket.serverSends(telemetryMessage(1));
    button.click();
    expect(button.getAttribute("aria-pressed")).toBe("false");
    expect(map?.calls.at(-1)).toEqual(["clear", "utilisation"]);
    expect(note().hidden).toBe(true);
    socket.serverSends(telemetryMessage(2));
    expect(map?.calls.filter(([call]) => call === "set")).toHaveLength(1);
  });

  it("accepts the server's numbering afresh after a reconnect", async () => {
    const { button, map, socket, timers } = page();
    await settle();
    button.click();
    socket.serverOpens();
    socket.serverSends(telemetryMessage(9));
    socket.serverDrops();
    timers.fireNext();
    const again = FakeWebSocket.latest();
    again.serverOpens();
    again.serverSends(telemetryMessage(1, [0, 0, 0, 0]));
    expect(map?.calls.at(-1)).toEqual(["set", [0, 0, 0, 0]]);
  });

  it("keeps the snapshot banner working on the same socket", async () => {
    const { socket } = page();
    socket.serverSends({ type: "fabric.snapshot", snapshot: { id: 9, version: 2, role: "discovered", source_format: "ibnetdiscover" } });
    expect(document.getElementById("fabric-live")?.hidden).toBe(false);
  });

  it("does not draw telemetry of another snapshot's links", async () => {
    const { button, map, note, socket } = page(new FakeMap({ linkCount: 6 }));
    await settle();
    button.click();
    socket.serverSends(telemetryMessage(1));
    expect(map?.calls).toEqual([["clear", "utilisation"]]);
    expect(note().textContent).toBe("These frames describe 4 links but the map shows 6: not drawn (another snapshot?).");
  });
});

describe("telemetry of another snapshot", () => {
  it("is not drawn when the frame names a snapshot the map does not show", async () => {
    const map = new FakeMap({ linkCount: 4, snapshot: 7 });
    const { button, note, socket } = page(map);
    await settle();
    button.click();
    const message = telemetryMessage(1);
    socket.serverSends({ ...message, frame: { ...message.frame, snapshot: 9 } });
    expect(map.calls).toEqual([["clear", "utilisation"]]);
    expect(note().textContent).toBe("These frames follow snapshot #9 but the map shows snapshot #7: not drawn.");
    socket.serverSends({ ...telemetryMessage(2), frame: { ...message.frame, snapshot: 7 } });
    expect(map.calls.at(-1)).toEqual(["set", [1, 0, 0, 0.2]]);
  });
});

describe("telemetry and a collective run share the map", () => {
  const collectiveRun = (id: number): Run => parseRun(runSnapshot({ id, kind: "collective", status: "succeeded", progress: 1 })) as Run;

  it("a run's overlay switches telemetry off, and telemetry hides the run's note", async () => {
    const { button, map, slot, socket, note } = page();
    const api = new ScriptedApi();
    api.getAnswer = Promise.resolve({ link_utilization: [0.5, 0.5, 0.5, 0.5] });
    const overlay = runOverlay({ doc: document, t: translator("en"), http: api, map: () => Promise.resolve(map), slot });
    await settle();
    button.click();
    socket.serverSends(telemetryMessage(1));

    overlay.offer(collectiveRun(21), "/api/runs/21/");
    expect(button.getAttribute("aria-pressed")).toBe("false");
    expect(note().hidden).toBe(true);
    await settle();
    expect(map?.calls.at(-1)).toEqual(["set", [0.5, 0.5, 0.5, 0.5]]);
    socket.serverSends(telemetryMessage(2));
    expect(map?.calls.at(-1)).toEqual(["set", [0.5, 0.5, 0.5, 0.5]]); // telemetry is off now

    button.click();
    expect(map?.calls.at(-1)).toEqual(["set", [1, 0, 0, 0.2]]);
    expect(document.getElementById("map-overlay-note")?.hidden).toBe(true);
    // Clearing the old run must not wipe telemetry's overlay.
    const before = map?.calls.length;
    overlay.clear();
    expect(map?.calls.length).toBe(before);
  });

  it("a run that brings no data leaves the map clear rather than showing stale telemetry", async () => {
    const { button, map, slot, socket } = page();
    const api = new ScriptedApi();
    api.getAnswer = Promise.resolve({});
    const overlay = runOverlay({ doc: document, t: translator("en"), http: api, map: () => Promise.resolve(map), slot });
    await settle();
    button.click();
    socket.serverSends(telemetryMessage(1));
    overlay.offer(collectiveRun(22), "/api/runs/22/");
    await settle();
    await settle();
    expect(map?.calls.at(-1)).toEqual(["clear", "utilisation"]);
    expect(document.getElementById("map-overlay-note")?.textContent).toBe("Run #22 has no per-link data to show.");
  });
});
