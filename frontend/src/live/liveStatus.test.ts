// @vitest-environment happy-dom
import { describe, expect, it, vi } from "vitest";
import {
  LiveStatusMonitor,
  bannerForHealth,
  connectionReporter,
  fetchHealth,
  liveStatusForPage,
  type BannerMessage,
  type HealthCheckResult,
} from "./liveStatus";
import { translator } from "../core/i18n";
import { FakeTimers } from "../testing/fakes";

describe("bannerForHealth", () => {
  it("stays quiet when Redis is ok", () => {
    expect(bannerForHealth({ reachable: true, report: { database: "ok", redis: "ok" } })).toBeNull();
  });

  it("warns about the broker when Redis is unavailable", () => {
    expect(bannerForHealth({ reachable: true, report: { database: "ok", redis: "unavailable" } })).toBe(
      "banner.brokerDown",
    );
  });

  it("reports an unreachable server when the check fails or answers nonsense", () => {
    expect(bannerForHealth({ reachable: false })).toBe("banner.serverUnreachable");
    expect(bannerForHealth({ reachable: true, report: "<html>502</html>" })).toBe("banner.serverUnreachable");
  });
});

describe("fetchHealth", () => {
  it("reads the report even from a 503", async () => {
    const fetchImpl = () => Promise.resolve(new Response(JSON.stringify({ database: "ok", redis: "unavailable" }), { status: 503 }));
    expect(await fetchHealth(fetchImpl, "/api/health/")).toEqual({
      reachable: true,
      report: { database: "ok", redis: "unavailable" },
    });
  });

  it("reports a network failure as unreachable", async () => {
    expect(await fetchHealth(() => Promise.reject(new TypeError("offline")), "/api/health/")).toEqual({ reachable: false });
  });
});

/** A health endpoint whose answers the test releases one at a time. */
class ScriptedHealth {
  calls = 0;
  private resolvers: ((result: HealthCheckResult) => void)[] = [];

  readonly check = (): Promise<HealthCheckResult> => {
    this.calls += 1;
    return new Promise((resolve) => this.resolvers.push(resolve));
  };

  async answer(redis: "ok" | "unavailable"): Promise<void> {
    this.resolvers.shift()?.({ reachable: true, report: { database: "ok", redis } });
    await Promise.resolve(); // let the monitor's then() run
  }
}

function monitorWith(health: ScriptedHealth) {
  const timers = new FakeTimers();
  const banners: (BannerMessage | null)[] = [];
  const monitor = new LiveStatusMonitor({
    checkHealth: health.check,
    showBanner: (message) => banners.push(message),
    timers,
    random: () => 0,
  });
  return { monitor, timers, banners };
}

describe("LiveStatusMonitor", () => {
  it("shows the banner while Redis is down and hides it on recovery", async () => {
    const health = new ScriptedHealth();
    const { monitor, timers, banners } = monitorWith(health);
    monitor.check();
    await health.answer("unavailable");
    expect(banners).toEqual(["banner.brokerDown"]);
    timers.fireNext();
    await health.answer("unavailable");
    timers.fireNext();
    await health.answer("ok");
    expect(banners).toEqual(["banner.brokerDown", "banner.brokerDown", null]);
    expect(timers.requestedDelays).toEqual([1000, 2000]);
    expect(timers.pending).toHaveLength(0);
  });

  it("coalesces triggers during a check into one follow-up check", async () => {
    const health = new ScriptedHealth();
    const { monitor } = monitorWith(health);
    monitor.check();
    monitor.check();
    monitor.check();
    expect(health.calls).toBe(1);
    await health.answer("ok");
    expect(health.calls).toBe(2);
    await health.answer("ok");
    expect(health.calls).toBe(2);
  });

  it("checks at once when a socket drops, instead of waiting for the retry timer", async () => {
    const health = new ScriptedHealth();
    const { monitor, timers } = monitorWith(health);
    monitor.check();
    await health.answer("unavailable");
    expect(timers.pending).toHaveLength(1);
    monitor.check();
    expect(health.calls).toBe(2);
    expect(timers.pending).toHaveLength(0);
  });
});

describe("connectionReporter", () => {
  it("checks on every drop and once when a dropped socket is back, not on a first connect", () => {
    let checks = 0;
    const reporter = connectionReporter({ check: () => (checks += 1), rejected: () => undefined });
    reporter.onConnected();
    expect(checks).toBe(0);
    reporter.onDisconnected();
    reporter.onDisconnected();
    expect(checks).toBe(2);
    reporter.onConnected();
    reporter.onConnected();
    expect(checks).toBe(3);
  });
});

describe("a socket the server refuses for good", () => {
  it.each([
    [4401, "banner.loggedOut"],
    [4404, "banner.gone"],
  ] as const)("close code %i shows %s, and no later health check hides it", async (code, banner) => {
    const health = new ScriptedHealth();
    const { monitor, banners } = monitorWith(health);
    const reporter = connectionReporter(monitor);
    reporter.onRejected(code);
    expect(banners).toEqual([banner]);
    monitor.check();
    await health.answer("ok");
    expect(banners).toEqual([banner, banner]);
  });

  it("says why in both languages", () => {
    expect(translator("en")("banner.loggedOut")).toMatch(/logged out/);
    expect(translator("zh-hans")("banner.gone")).toBe("此页面显示的内容已不存在，实时更新已停止。");
  });
});

describe("liveStatusForPage", () => {
  /** The page as base.html renders it: data-health-url only for a signed-in user. */
  function page(bodyAttributes: Record<string, string>): Document {
    for (const name of document.body.getAttributeNames()) {
      document.body.removeAttribute(name);
    }
    for (const [name, value] of Object.entries(bodyAttributes)) {
      document.body.setAttribute(name, value);
    }
    document.body.innerHTML = '<div id="live-status" hidden></div>';
    return document;
  }

  it("checks nothing and shows no banner where nobody is signed in (the login page)", async () => {
    const doc = page({ "data-lang": "en" });
    const requested: string[] = [];
    const timers = new FakeTimers();
    const monitor = liveStatusForPage(doc, (url) => (requested.push(url), Promise.reject(new Error("403"))), translator("en"), timers);
    monitor.check();
    connectionReporter(monitor).onDisconnected();
    await Promise.resolve();
    expect(requested).toEqual([]);
    expect(timers.pending).toEqual([]);
    expect(doc.getElementById("live-status")?.hidden).toBe(true);
  });

  it("checks the page's health URL for a signed-in user and shows what it finds", async () => {
    const doc = page({ "data-lang": "en", "data-health-url": "/api/health/", "data-user-role": "viewer" });
    const requested: string[] = [];
    const fetchImpl = (url: string) => {
      requested.push(url);
      return Promise.resolve(new Response(JSON.stringify({ database: "ok", redis: "unavailable" }), { status: 503 }));
    };
    liveStatusForPage(doc, fetchImpl, translator("en"), new FakeTimers()).check();
    await vi.waitFor(() => expect(doc.getElementById("live-status")?.hidden).toBe(false));
    expect(requested).toEqual(["/api/health/"]);
    expect(doc.getElementById("live-status")?.textContent).toContain("Redis");
  });
});
