// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { HttpError } from "../core/http";
import { buildRunWidget, mountRunWidget } from "./runWidget";
import { wireStartButton } from "./startRun";
import { FakeWebSocket, HOP_STATS_RESULT, PLACEMENT_RESULT, runSnapshot, runStateMessage, runWidgetHarness as harness } from "../testing/fakes";

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
    expect(widget.querySelector(".run-result .hop-histogram svg")).not.toBeNull();
    expect(socket.closedByClient).toBe(true);
  });

  it("shows the progress message in the page's language, from the frame that carries every language", () => {
    const { context } = harness();
    document.body.dataset["lang"] = "zh-hans";
    const widget = buildRunWidget(document, "/api/runs/12/", "/ws/runs/12/");
    mountRunWidget(widget, context);
    const messages = { en: "12 of 40 cells done", "zh-hans": "已完成 12/40 个单元" };
    FakeWebSocket.latest().serverSends(runStateMessage(1, { message: "12 of 40 cells done", messages }));
    expect(widget.querySelector(".run-message")?.textContent).toBe("已完成 12/40 个单元");
    document.body.dataset["lang"] = "en";
    const english = buildRunWidget(document, "/api/runs/12/", "/ws/runs/12/");
    mountRunWidget(english, context);
    FakeWebSocket.latest().serverSends(runStateMessage(1, { message: "12 of 40 cells done", messages }));
    expect(english.querySelector(".run-message")?.textContent).toBe("12 of 40 cells done");
    delete document.body.dataset["lang"];
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

  it("renders a placement result with exports off the widget's run URL", () => {
    const { context } = harness();
    const widget = buildRunWidget(document, "/twin/api/runs/31/", "/ws/runs/31/");
    mountRunWidget(widget, context);
    FakeWebSocket.latest().serverSends(runStateMessage(1, { id: 31, kind: "placement", status: "succeeded", progress: 1, result: PLACEMENT_RESULT }));
    expect(widget.querySelector(".run-result table.placement-compare a")?.getAttribute("href")).toBe(
      "/twin/api/runs/31/placement/?strategy=aware&format=csv",
    );
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

describe("run widget cancel button", () => {
  function mounted(canCancel: boolean, runUrl = "/api/runs/12/") {
    const h = harness(canCancel);
    const widget = buildRunWidget(document, runUrl, "/ws/runs/12/");
    document.body.append(widget);
    const heard: [string, string][] = [];
    mountRunWidget(widget, h.context, undefined, (run, url) => heard.push([run.status, url]));
    const socket = FakeWebSocket.latest();
    const button = () => widget.querySelector<HTMLButtonElement>("button.run-cancel");
    return { ...h, widget, socket, heard, button };
  }

  it("is offered to operators while the run is pending or running, then hidden", () => {
    const { socket, button } = mounted(true);
    expect(button()?.hidden).toBe(true); // status not known yet
    socket.serverSends(runStateMessage(1, { status: "pending", progress: 0 }));
    expect(button()?.hidden).toBe(false);
    expect(button()?.textContent).toBe("Cancel");
    socket.serverSends(runStateMessage(2));
    expect(button()?.hidden).toBe(false);
    socket.serverSends(runStateMessage(3, { status: "succeeded", progress: 1, result: HOP_STATS_RESULT }));
    expect(button()?.hidden).toBe(true);
  });

  it("is not there for viewers, nor without a run URL", () => {
    expect(mounted(false).button()).toBeNull();
    expect(mounted(true, "").button()).toBeNull();
  });

  it("is not there on another operator's run", () => {
    const { context } = harness(true);
    const widget = buildRunWidget(document, "/api/runs/12/", "/ws/runs/12/");
    widget.dataset["canCancel"] = "false";
    mountRunWidget(widget, context);
    expect(widget.querySelector("button.run-cancel")).toBeNull();
  });

  it("POSTs to the run's cancel URL and shows the cancelled run it answers", async () => {
    const { api, socket, widget, button } = mounted(true);
    socket.serverSends(runStateMessage(1));
    api.postAnswers.set(
      "/api/runs/12/cancel/",
      Promise.resolve({ ...runSnapshot({ status: "cancelled", error: "Cancelled by a user." }), url: "/api/runs/12/", ws_url: "/ws/runs/12/" }),
    );
    button()?.click();
    expect(button()?.disabled).toBe(true);
    expect(api.posts).toEqual([{ url: "/api/runs/12/cancel/", body: {} }]);
    await settle();
    expect(widget.dataset["status"]).toBe("cancelled");
    expect(widget.querySelector(".run-status")?.textContent).toBe("Cancelled");
    expect(widget.querySelector(".run-status")?.className).toBe("run-status badge badge-cancelled");
    expect(widget.querySelector(".run-result")?.textContent).toBe("Cancelled by a user.");
    expect(button()?.hidden).toBe(true);
    expect(socket.closedByClient).toBe(true);
  });

  it("applies the cancelled state pushed on the websocket", () => {
    const { socket, widget, button } = mounted(true);
    socket.serverSends(runStateMessage(1));
    socket.serverSends(runStateMessage(2, { status: "cancelled", error: null }));
    expect(widget.querySelector(".run-status")?.textContent).toBe("Cancelled");
    expect(widget.querySelector(".run-result")?.textContent).toBe("The run was cancelled.");
    expect(button()?.hidden).toBe(true);
  });

  it("shows the server's reason when it refuses", async () => {
    const { api, socket, widget, button } = mounted(true);
    socket.serverSends(runStateMessage(1));
    api.postAnswer = Promise.reject(new HttpError(400, "Run 12 has already ended (succeeded)."));
    button()?.click();
    await settle();
    const problem = widget.querySelector<HTMLElement>(".run-cancel-error");
    expect(problem?.hidden).toBe(false);
    expect(problem?.textContent).toBe("Could not cancel: Run 12 has already ended (succeeded).");
    expect(button()?.disabled).toBe(false);
    expect(widget.dataset["status"]).toBe("running");
  });

  it("tells the listener about every change, with the run URL", () => {
    const { socket, heard } = mounted(false);
    socket.serverSends(runStateMessage(1));
    socket.serverSends(runStateMessage(2, { status: "succeeded", progress: 1, result: HOP_STATS_RESULT }));
    expect(heard).toEqual([
      ["running", "/api/runs/12/"],
      ["succeeded", "/api/runs/12/"],
    ]);
  });
});

describe("run widget progress for fanned-out runs", () => {
  it("shows the cell count message and the fraction done", () => {
    const { context } = harness();
    const widget = buildRunWidget(document, "", "/ws/runs/12/");
    mountRunWidget(widget, context);
    FakeWebSocket.latest().serverSends(runStateMessage(1, { progress: 12 / 40, message: "12 of 40 cells done (last: stage 4x, allreduce)" }));
    expect(widget.querySelector("progress")?.value).toBeCloseTo(30);
    expect(widget.querySelector(".run-message")?.textContent).toBe("12 of 40 cells done (last: stage 4x, allreduce)");
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
