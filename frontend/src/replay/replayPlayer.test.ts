// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LinkValues } from "../map/overlay";
import { overlaySlot } from "../map/overlaySlot";
import { CONNECT_GRACE_MS, LIVE_FETCH_GRACE_MS, mountReplayPlayer, type ReplayPlayerContext } from "./replayPlayer";
import type { FrameMap } from "../map/overlaySlot";
import { base64Bytes, binaryFrameMessage, chartTexts, chartsDrawn, FakeTimers, FakeWebSocket, replayFrame, runWidgetHarness, settle } from "../testing/fakes";
import { thresholdStore } from "./thresholds";

/** Records what the player asks of the map. */
class FakeMap implements FrameMap {
  readonly drawn: number[][] = [];
  readonly cleared: string[] = [];
  constructor(readonly model: { readonly linkCount: number } = { linkCount: 4 }) {}

  setLinkUtilisation(input: LinkValues): { unmatched: number } {
    this.drawn.push(Array.from(input.values ?? [], (value) => Number(value.toFixed(3))));
    return { unmatched: 0 };
  }

  clearOverlay(name: "utilisation" | "marks" | "diff"): void {
    this.cleared.push(name);
  }
}

/** Runs the pending timer of that delay (the player's, not the socket's backoff). */
function fire(timers: FakeTimers, delayMs: number): void {
  const timer = timers.pending.find((pending) => pending.delayMs === delayMs);
  if (timer === undefined) {
    throw new Error(`no ${delayMs} ms timer pending`);
  }
  timers.pending = timers.pending.filter((pending) => pending !== timer);
  timer.callback();
}

const state = (overrides: Record<string, unknown> = {}) => ({
  type: "replay.state",
  state: { playing: false, speed: 1, loop: false, index: 0, frames: 600, ...overrides },
});
const frameMessage = (seq: number, index: number, overrides: Record<string, unknown> = {}) => ({
  type: "replay.frame",
  seq,
  index,
  frame: replayFrame(overrides),
});

// Every player a test mounts is stopped after it: a chart's pending draw (a real timer) would
// otherwise fire after the test file's DOM is gone.
const mountedPlayers: { stop(): void }[] = [];
afterEach(() => mountedPlayers.splice(0).forEach((player) => player.stop()));

async function mount(
  canControl = true,
  attributes = 'data-ws="/ws/replays/12/" data-frame-url="/api/runs/12/frames/" data-frames="600"',
  map = new FakeMap(),
  answer?: Promise<unknown>,
  extra: Partial<Pick<ReplayPlayerContext, "startFrame" | "onFrame">> = {},
) {
  document.body.innerHTML = `<div id="replay-player" ${attributes} data-can-control="${String(canControl)}"></div><div id="fabric-map"></div>`;
  const host = document.getElementById("replay-player") as HTMLElement;
  const { api, timers, context } = runWidgetHarness();
  if (answer !== undefined) {
    api.getAnswer = answer;
  }
  const slot = overlaySlot();
  const player = mountReplayPlayer(host, { ...context, map: () => Promise.resolve(map), slot, ...extra });
  mountedPlayers.push(player);
  await settle();
  const q = <T extends Element>(selector: string) => host.querySelector<T>(selector) as T;
  return {
    host,
    api,
    timers,
    map,
    slot,
    player,
    play: q<HTMLButtonElement>(".replay-play"),
    timeline: q<HTMLInputElement>(".replay-timeline"),
    speed: q<HTMLSelectElement>(".replay-speed"),
    loop: q<HTMLInputElement>(".replay-loop"),
    text: (selector: string) => host.querySelector(selector)?.textContent ?? null,
  };
}

beforeEach(() => FakeWebSocket.reset());

describe("replay player, live", () => {
  it("connects to the replay's socket and waits for its state with the controls off", async () => {
    const { play, timeline, api } = await mount();
    expect(FakeWebSocket.latest().url).toBe("wss://twin.example/ws/replays/12/");
    expect(play.disabled).toBe(true);
    expect(timeline.disabled).toBe(true);
    expect(api.gets).toEqual([]);
  });

  it("shows the state and each frame: map, hottest links, events, position and sparkline", async () => {
    const { play, timeline, speed, loop, map, text, host } = await mount();
    const socket = FakeWebSocket.latest();
    socket.serverOpens();
    socket.serverSends(state({ index: 0 }));
    socket.serverSends(frameMessage(0, 0));
    expect(play.disabled).toBe(false);
    expect(play.textContent).toBe("Play");
    expect(timeline.max).toBe("599");
    expect(speed.value).toBe("1");
    expect([...speed.options].map((option) => option.textContent)).toEqual(["0.25×", "0.5×", "1×", "2×", "4×", "8×", "16×", "32×", "64×", "max"]);
    expect(loop.checked).toBe(false);
    expect(map.drawn).toEqual([[0, 0.2, 1, 0.502]]);
    expect(text(".replay-position")).toBe("Frame 1 of 600");
    expect(text(".replay-time")).toBe("t = 410 ms");
    expect(timeline.getAttribute("aria-valuetext")).toBe("Frame 1 of 600, t = 410 ms");
    expect(text(".replay-events")).toBe("24,576 of 24,592 events done, 2 running, busiest link 100.0%");
    const rows = [...host.querySelectorAll(".replay-top tbody tr")].map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent));
    expect(rows[0]).toEqual(["spine-04", "leaf-29", "leaf-spine (scale-up)", "100.0%", "155.5%"]);
    await chartsDrawn();
    const busiest = chartTexts(host.querySelector(".replay-spark"));
    expect(busiest).toEqual(expect.arrayContaining(["Frame", "Busiest link", "Frame 1 of 600", "100.0%"]));
    expect(host.querySelector(".replay-viewer-note")?.hasAttribute("hidden")).toBe(true);
  });

  it("draws each frame's leaf-to-leaf matrix in the utilisation views, and nothing for frames without one", async () => {
    document.body.innerHTML = `<div id="replay-player" data-ws="/ws/replays/12/" data-frame-url="/api/runs/12/frames/" data-frames="600" data-can-control="true"></div>`;
    const host = document.getElementById("replay-player") as HTMLElement;
    const { context } = runWidgetHarness();
    mountReplayPlayer(host, { ...context, map: () => Promise.resolve(new FakeMap()), slot: overlaySlot(), thresholds: thresholdStore(null) });
    await settle();
    const socket = FakeWebSocket.latest();
    socket.serverOpens();
    socket.serverSends(state());
    const figure = host.querySelector(".util-leaf-figure") as HTMLElement;
    socket.serverSends(frameMessage(0, 0));
    expect(figure.hidden).toBe(true);
    socket.serverSends(frameMessage(1, 1, { leaf_matrix: { groups: ["leaf-01", "leaf-02"], scale_bytes: 1000, values: base64Bytes([0, 255, 0, 0]) } }));
    expect(figure.hidden).toBe(false);
    expect(figure.querySelector(".util-leaf-chart svg")).not.toBeNull();
  });

  it("applies only newer frames", async () => {
    const { map, timeline } = await mount();
    const socket = FakeWebSocket.latest();
    socket.serverSends(state({ playing: true }));
    socket.serverSends(frameMessage(4, 10, { utilization: btoa("\u00ff\u00ff\u00ff\u00ff") }));
    socket.serverSends(frameMessage(3, 9));
    socket.serverSends(frameMessage(4, 11));
    socket.serverSends(frameMessage(6, 12, { utilization: btoa("\u0000\u0000\u0000\u0000") }));
    expect(map.drawn).toEqual([
      [1, 1, 1, 1],
      [0, 0, 0, 0],
    ]);
    expect(timeline.value).toBe("12");
  });

  it("draws binary frames as the server sends them, and refuses a layout it does not know", async () => {
    const { map, timeline, host } = await mount();
    const socket = FakeWebSocket.latest();
    socket.serverSends(state({ playing: true }));
    socket.serverSends(binaryFrameMessage(frameMessage(4, 10, { utilization: base64Bytes([255, 0, 51, 255]) })));
    expect(map.drawn).toEqual([[1, 0, 0.2, 1]]);
    expect(timeline.value).toBe("10");
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args.join(" "));
    try {
      socket.serverSends(binaryFrameMessage(frameMessage(5, 11, { utilization: base64Bytes([0, 0, 0, 0]) }), 2));
      socket.serverSends(binaryFrameMessage(frameMessage(6, 12), 2));
    } finally {
      console.error = original;
    }
    expect(map.drawn).toEqual([[1, 0, 0.2, 1]]); // nothing drawn from bytes it cannot read
    const problem = host.querySelector<HTMLElement>(".replay-error");
    expect(problem?.hidden).toBe(false);
    expect(problem?.textContent).toBe("The server sends replay frames in layout version 2; this page reads version 1. Reload the page.");
    expect(errors).toHaveLength(1); // said once in the console, not for every frame
    expect(String(errors[0])).toContain("version 2");
  });

  it("sends the controller's commands", async () => {
    const { play, timeline, speed, loop, host } = await mount();
    const socket = FakeWebSocket.latest();
    socket.serverOpens();
    socket.serverSends(state({ index: 3 }));
    socket.serverSends(frameMessage(1, 3));
    play.click();
    timeline.value = "42";
    timeline.dispatchEvent(new Event("input"));
    expect(host.querySelector(".replay-position")?.textContent).toBe("Frame 43 of 600");
    timeline.dispatchEvent(new Event("change"));
    speed.value = "0";
    speed.dispatchEvent(new Event("change"));
    loop.checked = true;
    loop.dispatchEvent(new Event("change"));
    host.dispatchEvent(new KeyboardEvent("keydown", { key: "." }));
    host.dispatchEvent(new KeyboardEvent("keydown", { key: "k" }));
    expect(socket.sent).toEqual([
      { action: "play" },
      { action: "seek", index: 42 },
      { action: "speed", speed: 0 },
      { action: "loop", loop: true },
      { action: "seek", index: 4 },
      { action: "play" },
    ]);
    socket.serverSends(state({ playing: true, speed: 0, loop: true, index: 42 }));
    expect(play.textContent).toBe("Pause");
    expect(play.getAttribute("aria-pressed")).toBe("true");
    expect(speed.value).toBe("0");
    expect(loop.checked).toBe(true);
    play.click();
    expect(socket.sent.at(-1)).toEqual({ action: "pause" });
  });

  it("shows a speed outside the list as the server sets it", async () => {
    const { speed } = await mount();
    FakeWebSocket.latest().serverSends(state({ speed: 3 }));
    expect(speed.value).toBe("3");
    expect(speed.options[speed.options.length - 1]?.textContent).toBe("3×");
  });

  it("lets viewers follow without controlling", async () => {
    const { play, timeline, speed, loop, host } = await mount(false);
    const socket = FakeWebSocket.latest();
    socket.serverSends(state());
    expect([play, timeline, speed, loop].every((control) => control.disabled)).toBe(true);
    expect(host.querySelector<HTMLElement>(".replay-viewer-note")?.hidden).toBe(false);
    host.dispatchEvent(new KeyboardEvent("keydown", { key: "k" }));
    expect(socket.sent).toEqual([]);
  });

  it("fetches the paused frame over HTTP when the server does not push it", async () => {
    const { api, timers, map } = await mount();
    const socket = FakeWebSocket.latest();
    api.getAnswers.set(
      "/api/runs/12/frames/?index=7",
      Promise.resolve({ index: 7, frame: replayFrame({ utilization: btoa("\u00ff\u0000\u0000\u0000") }) }),
    );
    socket.serverSends(state({ index: 7 }));
    expect(api.gets).toEqual([]);
    fire(timers, LIVE_FETCH_GRACE_MS);
    await settle();
    expect(api.gets).toEqual(["/api/runs/12/frames/?index=7"]);
    expect(map.drawn).toEqual([[1, 0, 0, 0]]);
  });

  it("does not fetch what the server pushes within the grace period", async () => {
    const { api, timers } = await mount();
    const socket = FakeWebSocket.latest();
    socket.serverSends(state({ index: 7 }));
    socket.serverSends(frameMessage(2, 7));
    expect(timers.pending.some((timer) => timer.delayMs === LIVE_FETCH_GRACE_MS)).toBe(false);
    expect(api.gets).toEqual([]);
  });

  it("shows the server's errors", async () => {
    const { host } = await mount();
    FakeWebSocket.latest().serverSends({ type: "replay.error", detail: "Seek to a frame between 0 and 599." });
    const problem = host.querySelector<HTMLElement>(".replay-error");
    expect(problem?.hidden).toBe(false);
    expect(problem?.textContent).toBe("Seek to a frame between 0 and 599.");
    expect(problem?.getAttribute("role")).toBe("alert");
  });

  it("does not draw frames of another fabric", async () => {
    const { map, host } = await mount(true, undefined, new FakeMap({ linkCount: 9 }));
    FakeWebSocket.latest().serverSends(state());
    FakeWebSocket.latest().serverSends(frameMessage(1, 0));
    expect(map.drawn).toEqual([]);
    expect(host.querySelector(".replay-error")?.textContent).toBe("These frames describe 4 links but the map shows 9: not drawn (another snapshot?).");
  });

  it("accepts the server's numbering afresh after a reconnect", async () => {
    const { map, timers } = await mount();
    FakeWebSocket.latest().serverOpens();
    FakeWebSocket.latest().serverSends(state());
    FakeWebSocket.latest().serverSends(frameMessage(5, 0));
    FakeWebSocket.latest().serverDrops();
    fire(timers, timers.pending.find((timer) => timer.delayMs !== CONNECT_GRACE_MS)?.delayMs ?? -1);
    FakeWebSocket.latest().serverOpens();
    FakeWebSocket.latest().serverSends(state({ index: 1 }));
    FakeWebSocket.latest().serverSends(frameMessage(5, 1));
    expect(map.drawn).toHaveLength(2);
  });
});

describe("replay player without a live socket", () => {
  it("browses over HTTP once the socket drops, for viewers too", async () => {
    const { api, play, timeline, host } = await mount(false);
    api.getAnswer = Promise.resolve(replayFrame());
    const socket = FakeWebSocket.latest();
    socket.serverSends(state({ index: 5 }));
    socket.serverSends(frameMessage(1, 5));
    socket.serverDrops();
    expect(host.querySelector<HTMLElement>(".replay-mode")?.hidden).toBe(false);
    expect(play.disabled).toBe(false);
    timeline.value = "9";
    timeline.dispatchEvent(new Event("change"));
    await settle();
    expect(api.gets).toEqual(["/api/runs/12/frames/?index=9"]);
    expect(socket.sent).toEqual([]);
    expect(host.querySelector(".replay-position")?.textContent).toBe("Frame 10 of 600");
  });

  it("plays locally at the chosen pace, and stops at the end unless looping", async () => {
    // 100 ms frames at 1x: one frame per 100 ms tick.
    const { api, timers, play, host } = await mount(
      true,
      'data-frame-url="/api/runs/12/frames/" data-frames="3"',
      undefined,
      Promise.resolve(replayFrame({ t_s: 0, t_end_s: 0.1 })),
    );
    expect(api.gets).toEqual(["/api/runs/12/frames/?index=0"]);
    play.click();
    expect(play.textContent).toBe("Pause");
    fire(timers, 100);
    await settle();
    fire(timers, 100);
    await settle();
    expect(api.gets).toEqual(["/api/runs/12/frames/?index=0", "/api/runs/12/frames/?index=1", "/api/runs/12/frames/?index=2"]);
    fire(timers, 100);
    expect(play.textContent).toBe("Play");
    expect(host.querySelector(".replay-position")?.textContent).toBe("Frame 3 of 3");
    // Play at the end starts over; with loop on it wraps.
    (host.querySelector(".replay-loop") as HTMLInputElement).checked = true;
    host.querySelector(".replay-loop")?.dispatchEvent(new Event("change"));
    play.click();
    fire(timers, 100);
    await settle();
    expect(api.gets.at(-1)).toBe("/api/runs/12/frames/?index=0");
  });

  it("falls back to HTTP when the socket is refused or does not answer", async () => {
    const refused = await mount();
    refused.api.getAnswer = Promise.resolve(replayFrame());
    FakeWebSocket.latest().serverDrops(4404);
    await settle();
    expect(refused.api.gets).toEqual(["/api/runs/12/frames/?index=0"]);
    expect(refused.map.drawn).toHaveLength(1);

    FakeWebSocket.reset();
    const silent = await mount();
    silent.api.getAnswer = Promise.resolve(replayFrame());
    expect(silent.api.gets).toEqual([]);
    fire(silent.timers, CONNECT_GRACE_MS);
    await settle();
    expect(silent.api.gets).toEqual(["/api/runs/12/frames/?index=0"]);
    // A state arriving later takes over.
    FakeWebSocket.latest().serverSends(state({ index: 0 }));
    expect(silent.host.querySelector<HTMLElement>(".replay-mode")?.hidden).toBe(true);
  });

  it("asks for the last frame when the page does not say how many there are", async () => {
    const { api, host } = await mount(true, 'data-frame-url="/api/runs/12/frames/"', undefined, Promise.resolve({ index: 41, frame: replayFrame() }));
    expect(api.gets).toEqual(["/api/runs/12/frames/?index=last"]);
    expect(host.querySelector(".replay-position")?.textContent).toBe("Frame 42 of 42");
    expect((host.querySelector(".replay-timeline") as HTMLInputElement).max).toBe("41");
  });

  it("says when a frame cannot be loaded", async () => {
    const { api, host } = await mount(true, 'data-frame-url="/api/runs/12/frames/" data-frames="3"');
    api.getAnswer = Promise.reject(new Error("boom"));
    const timeline = host.querySelector(".replay-timeline") as HTMLInputElement;
    timeline.value = "2";
    timeline.dispatchEvent(new Event("change"));
    await settle();
    expect(host.querySelector(".replay-error")?.textContent).toBe("Could not load the frame: The server sent an unexpected response.");
  });

  it("stops for good", async () => {
    const { player, timers } = await mount();
    player.stop();
    expect(FakeWebSocket.latest().closedByClient).toBe(true);
    expect(timers.pending).toEqual([]);
  });
});

describe("replay player, opened by a deep link", () => {
  it("seeks the shared playback to the link's frame once, for one who may control it, and reports each frame shown", async () => {
    const shown: number[] = [];
    const { timers } = await mount(true, undefined, undefined, undefined, { startFrame: 120, onFrame: (index) => shown.push(index) });
    const socket = FakeWebSocket.latest();
    socket.serverOpens();
    socket.serverSends(state({ index: 3 }));
    expect(socket.sent).toEqual([{ action: "seek", index: 120 }]);
    expect(timers.pending.some((timer) => timer.delayMs === LIVE_FETCH_GRACE_MS)).toBe(false); // the seek's answer brings the frame
    socket.serverSends(frameMessage(1, 120));
    socket.serverSends(state({ index: 120 }));
    socket.serverSends(state({ index: 121 }));
    expect(socket.sent).toHaveLength(1);
    expect(shown).toEqual([120]);
  });

  it("leaves a viewer on the shared position", async () => {
    await mount(false, undefined, undefined, undefined, { startFrame: 120 });
    const socket = FakeWebSocket.latest();
    socket.serverOpens();
    socket.serverSends(state({ index: 3 }));
    expect(socket.sent).toEqual([]);
  });

  it("opens at the link's frame when browsing alone, within the replay's frames", async () => {
    const alone = await mount(true, 'data-frame-url="/api/runs/12/frames/" data-frames="600"', undefined, Promise.resolve(replayFrame()), { startFrame: 120 });
    expect(alone.api.gets).toEqual(["/api/runs/12/frames/?index=120"]);
    FakeWebSocket.reset();
    const beyond = await mount(true, 'data-frame-url="/api/runs/12/frames/" data-frames="600"', undefined, Promise.resolve(replayFrame()), { startFrame: 9000 });
    expect(beyond.api.gets).toEqual(["/api/runs/12/frames/?index=599"]);
  });
});
