// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { announcementText, mountFabricLive, parseFabricMessage, snapshotPageUrl, type FabricLiveContext } from "./fabricLive";
import { translator, type Language } from "../core/i18n";
import { LiveStatusMonitor } from "./liveStatus";
import { FakeTimers, FakeWebSocket } from "../testing/fakes";

function snapshotMessage(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: "fabric.snapshot",
    snapshot: {
      id: 9,
      fabric: 3,
      version: 2,
      role: "discovered",
      source_name: "fabric.ibnd",
      source_format: "ibnetdiscover",
      created_by: "alice",
      created_at: "2026-11-30T08:00:00+00:00",
      summary: { nodes: 11, links: 11 },
      ...overrides,
    },
  };
}

function mount(language: Language = "en") {
  document.body.innerHTML = `<div id="fabric-live" class="banner banner-info" hidden data-fabric-ws="/ws/fabrics/3/" data-fabric-url="/fabrics/3/"></div>`;
  const banner = document.getElementById("fabric-live") as HTMLElement;
  const timers = new FakeTimers();
  let healthChecks = 0;
  const liveStatus = new LiveStatusMonitor({
    checkHealth: () => {
      healthChecks += 1;
      return new Promise(() => undefined);
    },
    showBanner: () => undefined,
    timers,
  });
  const context: FabricLiveContext = {
    doc: document,
    t: translator(language),
    liveStatus,
    pageLocation: { protocol: "https:", host: "twin.example" },
    openSocket: FakeWebSocket.open,
    timers,
    random: () => 0,
  };
  const socket = mountFabricLive(banner, context);
  return { banner, timers, socket, healthChecks: () => healthChecks };
}

beforeEach(() => FakeWebSocket.reset());

describe("parseFabricMessage", () => {
  it("reads a fabric.snapshot message", () => {
    expect(parseFabricMessage(JSON.stringify(snapshotMessage()))).toEqual({
      id: 9,
      version: 2,
      role: "discovered",
      sourceFormat: "ibnetdiscover",
      createdBy: "alice",
    });
  });

  it("ignores unknown types and malformed messages", () => {
    expect(parseFabricMessage(JSON.stringify({ type: "fabric.deleted", snapshot: { id: 1, version: 1, role: "plan" } }))).toBeNull();
    expect(parseFabricMessage("{oops")).toBeNull();
    expect(parseFabricMessage("[]")).toBeNull();
    expect(parseFabricMessage(JSON.stringify({ type: "fabric.snapshot" }))).toBeNull();
    expect(parseFabricMessage(JSON.stringify(snapshotMessage({ id: "9" })))).toBeNull();
  });
});

describe("announcementText", () => {
  const announcement = { id: 9, version: 2, role: "discovered", sourceFormat: "ibnetdiscover", createdBy: "alice" };

  it("names version, role, format and uploader in English", () => {
    expect(announcementText(announcement, translator("en"))).toBe(
      "New snapshot v2 (discovered) from ibnetdiscover uploaded by alice.",
    );
    expect(announcementText({ ...announcement, role: "plan", createdBy: null }, translator("en"))).toBe(
      "New snapshot v2 (cabling plan) from ibnetdiscover.",
    );
  });

  it("speaks Simplified Chinese", () => {
    expect(announcementText(announcement, translator("zh-hans"))).toBe("alice 上传了新快照 v2（已发现），格式为 ibnetdiscover。");
    expect(announcementText({ ...announcement, role: "plan", createdBy: null }, translator("zh-hans"))).toBe(
      "新快照 v2（布线规划），格式为 ibnetdiscover。",
    );
  });

  it("shows a role it does not know as sent", () => {
    expect(announcementText({ ...announcement, role: "simulated" }, translator("en"))).toContain("(simulated)");
  });
});

describe("snapshotPageUrl", () => {
  it("adds the snapshot to the fabric URL", () => {
    expect(snapshotPageUrl("/fabrics/3/", 9)).toBe("/fabrics/3/?snapshot=9");
    expect(snapshotPageUrl("/fabrics/3/?tab=map", 9)).toBe("/fabrics/3/?tab=map&snapshot=9");
  });
});

describe("mountFabricLive", () => {
  it("connects to the fabric's socket on the page's host", () => {
    mount();
    expect(FakeWebSocket.latest().url).toBe("wss://twin.example/ws/fabrics/3/");
  });

  it("shows the banner with a link to each new snapshot", () => {
    const { banner } = mount();
    const socket = FakeWebSocket.latest();
    socket.serverOpens();
    expect(banner.hidden).toBe(true);
    socket.serverSends(snapshotMessage());
    expect(banner.hidden).toBe(false);
    expect(banner.textContent).toBe("New snapshot v2 (discovered) from ibnetdiscover uploaded by alice. Show it");
    expect(banner.querySelector("a")?.getAttribute("href")).toBe("/fabrics/3/?snapshot=9");

    socket.serverSends(snapshotMessage({ id: 10, version: 3, created_by: null }));
    expect(banner.textContent).toBe("New snapshot v3 (discovered) from ibnetdiscover. Show it");
    expect(banner.querySelectorAll("a")).toHaveLength(1);
    expect(banner.querySelector("a")?.getAttribute("href")).toBe("/fabrics/3/?snapshot=10");
  });

  it("writes the banner in Simplified Chinese", () => {
    const { banner } = mount("zh-hans");
    FakeWebSocket.latest().serverSends(snapshotMessage({ role: "plan" }));
    expect(banner.textContent).toBe("alice 上传了新快照 v2（布线规划），格式为 ibnetdiscover。 查看");
  });

  it("ignores unknown message types", () => {
    const { banner } = mount();
    FakeWebSocket.latest().serverSends({ type: "fabric.renamed", name: "x" });
    FakeWebSocket.latest().serverSends("not json");
    expect(banner.hidden).toBe(true);
    expect(banner.textContent).toBe("");
  });

  it("reconnects with backoff and asks the live-status monitor to check", () => {
    const { timers, healthChecks } = mount();
    FakeWebSocket.latest().serverDrops();
    expect(healthChecks()).toBe(1);
    timers.fireNext();
    FakeWebSocket.latest().serverDrops(4503);
    timers.fireNext();
    expect(FakeWebSocket.instances).toHaveLength(3);
    expect(timers.requestedDelays).toEqual([1000, 2000]);
    expect(FakeWebSocket.latest().url).toBe("wss://twin.example/ws/fabrics/3/");
  });

  it("keeps working after a reconnect", () => {
    const { banner, timers } = mount();
    FakeWebSocket.latest().serverDrops();
    timers.fireNext();
    FakeWebSocket.latest().serverOpens();
    FakeWebSocket.latest().serverSends(snapshotMessage());
    expect(banner.hidden).toBe(false);
  });

  it.each([4401, 4404])("does not retry after close code %i", (code) => {
    const { timers, banner } = mount();
    FakeWebSocket.latest().serverDrops(code);
    expect(timers.pending).toHaveLength(0);
    expect(FakeWebSocket.instances).toHaveLength(1);
    expect(banner.hidden).toBe(true);
  });

  it("does nothing without a socket path", () => {
    document.body.innerHTML = `<div id="fabric-live" hidden data-fabric-url="/fabrics/3/"></div>`;
    const timers = new FakeTimers();
    const socket = mountFabricLive(document.getElementById("fabric-live") as HTMLElement, {
      doc: document,
      t: translator("en"),
      liveStatus: new LiveStatusMonitor({ checkHealth: () => new Promise(() => undefined), showBanner: () => undefined, timers }),
      pageLocation: { protocol: "http:", host: "a" },
      openSocket: FakeWebSocket.open,
      timers,
    });
    expect(socket).toBeNull();
    expect(FakeWebSocket.instances).toHaveLength(0);
  });
});
