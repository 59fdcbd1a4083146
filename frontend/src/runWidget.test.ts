// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { numberFormatters } from "./format";
import { HttpError, type JsonClient } from "./http";
import { translator } from "./i18n";
import { LiveStatusMonitor } from "./liveStatus";
import { buildRunWidget, mountRunWidget, type RunWidgetContext } from "./runWidget";
import { wireStartButton } from "./startRun";
import { FakeTimers, FakeWebSocket, HOP_STATS_RESULT, runSnapshot, runStateMessage } from "./testing/fakes";

/** A JsonClient whose answers the test scripts per URL. */
class ScriptedApi implements JsonClient {
  readonly posts: { url: string; body: unknown }[] = [];
  readonly gets: string[] = [];
  getAnswer: Promise<unknown> = new Promise(() => undefined);
  postAnswer: Promise<unknown> = new Promise(() => undefined);

  get(url: string): Promise<unknown> {
    this.gets.push(url);
    return this.getAnswer;
  }

  post(url: string, body: unknown): Promise<unknown> {
    this.posts.push({ url, body });
    return this.postAnswer;
  }
}

function harness() {
  const api = new ScriptedApi();
  const timers = new FakeTimers();
  let healthChecks = 0;
  const liveStatus = new LiveStatusMonitor({
    checkHealth: () => {
      healthChecks += 1;
      return Promise.resolve({ reachable: true, report: { redis: "ok" } });
    },
    showBanner: () => undefined,
    timers,
  });
  const context: RunWidgetContext = {
    doc: document,
    t: translator("en"),
    numbers: numberFormatters("en"),
    http: api,
    liveStatus,
    pageLocation: { protocol: "https:", host: "twin.example" },
    openSocket: FakeWebSocket.open,
    timers,
  };
  return { api, timers, context, healthChecks: () => healthChecks };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

beforeEach(() => {
  FakeWebSocket.reset();
  document.body.innerHTML = "";
});

describe("mountRunWidget", () => {
  it("connects to the run's websocket and mirrors frames into the widget", () => {
    const { context } = harness();
    const widget = buildRunWidget(document, "/api/runs/12/", "/ws/runs/12/");
    document.body.append(widget);
    mountRunWidget(widget, context);
    expect(widget.dataset["frames"]).toBe("0");

    const socket = FakeWebSocket.latest();
    expect(socket.url).toBe("wss://twin.example/ws/runs/12/");
    socket.serverSends(runStateMessage(1, { progress: 0.42, message: "BFS from card 430" }));
    expect(widget.dataset["status"]).toBe("running");
    expect(widget.dataset["frames"]).toBe("1");
    expect(widget.querySelector("progress")?.value).toBeCloseTo(42);
    expect(widget.querySelector(".run-status")?.textContent).toBe("Running");
    expect(widget.querySelector(".run-status")?.className).toBe("run-status badge badge-running");
    expect(widget.querySelector(".run-message")?.textContent).toBe("BFS from card 430");

    socket.serverSends(runStateMessage(2, { status: "succeeded", progress: 1, result: HOP_STATS_RESULT }));
    expect(widget.dataset["status"]).toBe("succeeded");
    expect(widget.dataset["frames"]).toBe("2");
    expect(widget.querySelectorAll(".run-result .hist-row")).toHaveLength(3);
    expect(socket.closedByClient).toBe(true);
  });

  it("shows a finished run from the run URL even when websockets are down", async () => {
    const { api, context, timers } = harness();
    api.getAnswer = Promise.resolve(runSnapshot({ status: "failed", error: "Worker lost", progress: 0.5 }));
    const widget = buildRunWidget(document, "/api/runs/12/", "/ws/runs/12/");
    mountRunWidget(widget, context);
    FakeWebSocket.latest().serverDrops();
    await settle();
    expect(api.gets).toEqual(["/api/runs/12/"]);
    expect(widget.dataset["status"]).toBe("failed");
    expect(widget.querySelector(".run-result .error")?.textContent).toBe("Worker lost");
    expect(timers.pending).toHaveLength(0); // the reconnect was cancelled
  });

  it("checks health when its socket drops and again once it is back", async () => {
    const { context, timers, healthChecks } = harness();
    mountRunWidget(buildRunWidget(document, "", "/ws/runs/12/"), context);
    FakeWebSocket.latest().serverOpens();
    expect(healthChecks()).toBe(0);
    FakeWebSocket.latest().serverDrops();
    expect(healthChecks()).toBe(1);
    await settle();
    timers.fireNext(); // the reconnect
    FakeWebSocket.latest().serverOpens();
    expect(healthChecks()).toBe(2);
  });
});

describe("wireStartButton", () => {
  function page() {
    document.body.innerHTML = `
      <button id="start-hop-stats" data-runs-url="/api/runs/" data-snapshot="7">Compute hop statistics</button>
      <div id="run-slot"></div>`;
    return {
      button: document.getElementById("start-hop-stats") as HTMLButtonElement,
      slot: document.getElementById("run-slot") as HTMLElement,
    };
  }

  it("POSTs the run, disables the button meanwhile, then shows a live widget", async () => {
    const { api, context } = harness();
    const { button, slot } = page();
    api.postAnswer = Promise.resolve({
      ...runSnapshot({ status: "pending", progress: 0 }),
      url: "/api/runs/13/",
      ws_url: "/ws/runs/13/",
    });
    wireStartButton(button, slot, context);
    button.click();
    expect(button.disabled).toBe(true);
    expect(api.posts).toEqual([{ url: "/api/runs/", body: { kind: "hop_stats", snapshot: 7 } }]);
    await settle();

    expect(button.disabled).toBe(false);
    const widget = slot.querySelector<HTMLElement>("section.run-widget");
    expect(widget?.dataset["runUrl"]).toBe("/api/runs/13/");
    expect(widget?.dataset["runWs"]).toBe("/ws/runs/13/");
    expect(widget?.dataset["status"]).toBe("pending");
    expect(FakeWebSocket.latest().url).toBe("wss://twin.example/ws/runs/13/");
  });

  it("shows the server's detail when the run cannot start", async () => {
    const { api, context } = harness();
    const { button, slot } = page();
    api.postAnswer = Promise.reject(new HttpError(503, "The message broker (Redis) is unavailable."));
    wireStartButton(button, slot, context);
    button.click();
    await settle();
    expect(slot.innerHTML).toBe('<div class="error">The message broker (Redis) is unavailable.</div>');
    expect(button.disabled).toBe(false);
  });

  it("stops the previous run's socket when a new run replaces it", async () => {
    const { api, context } = harness();
    const { button, slot } = page();
    const created = (id: number) =>
      Promise.resolve({ ...runSnapshot({ id }), url: `/api/runs/${id}/`, ws_url: `/ws/runs/${id}/` });
    wireStartButton(button, slot, context);
    api.postAnswer = created(13);
    button.click();
    await settle();
    const first = FakeWebSocket.latest();
    api.postAnswer = created(14);
    button.click();
    await settle();
    expect(first.closedByClient).toBe(true);
    expect(FakeWebSocket.latest().url).toBe("wss://twin.example/ws/runs/14/");
  });
});
