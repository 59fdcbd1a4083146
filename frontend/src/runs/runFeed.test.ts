import { beforeEach, describe, expect, it } from "vitest";
import { RunFeed } from "./runFeed";
import { parseRun, type Run } from "./runState";
import { FakeTimers, FakeWebSocket, runSnapshot, runStateMessage } from "../testing/fakes";

interface Harness {
  feed: RunFeed;
  timers: FakeTimers;
  shown: { status: string; progress: number; frames: number }[];
  events: string[];
}

function startFeed(): Harness {
  const timers = new FakeTimers();
  const shown: Harness["shown"] = [];
  const events: string[] = [];
  const feed = new RunFeed({
    url: "ws://twin.test/ws/runs/12/",
    onRun: (run, frames) => shown.push({ status: run.status, progress: run.progress, frames }),
    onConnected: () => events.push("connected"),
    onDisconnected: () => events.push("disconnected"),
    onRejected: (code) => events.push(`rejected ${code}`),
    openSocket: FakeWebSocket.open,
    timers,
    random: () => 0,
  });
  feed.start();
  return { feed, timers, shown, events };
}

function snapshot(overrides: Record<string, unknown>): Run {
  return parseRun(runSnapshot(overrides)) as Run;
}

beforeEach(() => FakeWebSocket.reset());

describe("RunFeed seq handling", () => {
  it("applies frames in seq order and skips stale ones", () => {
    const { shown } = startFeed();
    const socket = FakeWebSocket.latest();
    socket.serverOpens();
    socket.serverSends(runStateMessage(1, { progress: 0.1 }));
    socket.serverSends(runStateMessage(3, { progress: 0.3 }));
    socket.serverSends(runStateMessage(2, { progress: 0.2 })); // late
    socket.serverSends(runStateMessage(3, { progress: 0.35 })); // duplicate seq
    socket.serverSends(runStateMessage(4, { progress: 0.4 }));
    expect(shown.map((view) => view.progress)).toEqual([0.1, 0.3, 0.4]);
    expect(shown.map((view) => view.frames)).toEqual([1, 2, 3]);
  });

  it("ignores malformed and foreign messages", () => {
    const { shown } = startFeed();
    const socket = FakeWebSocket.latest();
    socket.serverSends("{oops");
    socket.serverSends({ type: "something.else", seq: 9 });
    socket.serverSends(runStateMessage(1));
    expect(shown).toHaveLength(1);
  });

  it("keeps the seq across reconnects so a replayed older snapshot cannot win", () => {
    const { shown, timers } = startFeed();
    FakeWebSocket.latest().serverSends(runStateMessage(5, { progress: 0.5 }));
    FakeWebSocket.latest().serverDrops();
    timers.fireNext();
    FakeWebSocket.latest().serverSends(runStateMessage(4, { progress: 0.4 }));
    FakeWebSocket.latest().serverSends(runStateMessage(6, { progress: 0.6 }));
    expect(shown.map((view) => view.progress)).toEqual([0.5, 0.6]);
  });

  it("closes the socket on a terminal status and does not reconnect", () => {
    const { shown, timers, events } = startFeed();
    const socket = FakeWebSocket.latest();
    socket.serverSends(runStateMessage(1, { status: "succeeded", progress: 1 }));
    expect(socket.closedByClient).toBe(true);
    socket.serverDrops(); // the close handshake completing
    expect(timers.pending).toHaveLength(0);
    expect(events).not.toContain("disconnected");
    expect(shown.at(-1)?.status).toBe("succeeded");
  });

  it("stops when an HTTP snapshot already shows the outcome", () => {
    const { feed, timers, shown } = startFeed();
    const socket = FakeWebSocket.latest();
    feed.offerSnapshot(snapshot({ status: "failed", error: "worker lost" }));
    expect(socket.closedByClient).toBe(true);
    socket.serverSends(runStateMessage(1, { status: "running" }));
    expect(shown.map((view) => view.status)).toEqual(["failed"]);
    expect(timers.pending).toHaveLength(0);
  });

  it("counts only websocket frames, not HTTP snapshots", () => {
    const { feed, shown } = startFeed();
    feed.offerSnapshot(snapshot({ progress: 0.1 }));
    FakeWebSocket.latest().serverSends(runStateMessage(1, { progress: 0.2 }));
    expect(shown.map((view) => view.frames)).toEqual([0, 1]);
  });
});

describe("RunFeed reconnects", () => {
  it("backs off 1 s, 2 s, 4 s … up to 15 s while the socket keeps failing", () => {
    const { timers, events } = startFeed();
    for (let failure = 0; failure < 7; failure += 1) {
      FakeWebSocket.latest().serverDrops();
      timers.fireNext();
    }
    expect(timers.requestedDelays).toEqual([1000, 2000, 4000, 8000, 15000, 15000, 15000]);
    expect(FakeWebSocket.instances).toHaveLength(8);
    expect(events.filter((event) => event === "disconnected")).toHaveLength(7);
  });

  it("starts the schedule over once a reconnected socket delivers a frame", () => {
    const { timers } = startFeed();
    FakeWebSocket.latest().serverDrops();
    timers.fireNext();
    FakeWebSocket.latest().serverDrops();
    timers.fireNext();
    FakeWebSocket.latest().serverOpens();
    FakeWebSocket.latest().serverSends(runStateMessage(1));
    FakeWebSocket.latest().serverDrops();
    expect(timers.requestedDelays).toEqual([1000, 2000, 1000]);
  });

  it("does not reset the schedule for a socket that opens and closes without data", () => {
    const { timers } = startFeed();
    for (let failure = 0; failure < 3; failure += 1) {
      FakeWebSocket.latest().serverOpens();
      FakeWebSocket.latest().serverDrops();
      timers.fireNext();
    }
    expect(timers.requestedDelays).toEqual([1000, 2000, 4000]);
  });

  it("reports connection changes for the banner", () => {
    const { timers, events } = startFeed();
    FakeWebSocket.latest().serverOpens();
    FakeWebSocket.latest().serverDrops();
    timers.fireNext();
    FakeWebSocket.latest().serverOpens();
    expect(events).toEqual(["connected", "disconnected", "connected"]);
  });

  it("ignores events from a socket it has replaced", () => {
    const { timers, shown } = startFeed();
    const first = FakeWebSocket.latest();
    first.serverDrops();
    timers.fireNext();
    first.serverSends(runStateMessage(9));
    first.serverDrops();
    expect(shown).toHaveLength(0);
    expect(timers.pending).toHaveLength(0);
  });

  it("treats a socket that cannot even be constructed as a drop", () => {
    const timers = new FakeTimers();
    const events: string[] = [];
    const feed = new RunFeed({
      url: "not a url",
      onRun: () => undefined,
      onConnected: () => events.push("connected"),
      onDisconnected: () => events.push("disconnected"),
      onRejected: (code) => events.push(`rejected ${code}`),
      openSocket: () => {
        throw new SyntaxError("invalid URL");
      },
      timers,
      random: () => 0,
    });
    feed.start();
    expect(events).toEqual(["disconnected"]);
    expect(timers.requestedDelays).toEqual([1000]);
  });

  it("does not retry once the server says the run does not exist (4404)", () => {
    const { timers, events } = startFeed();
    FakeWebSocket.latest().serverDrops(4404);
    expect(timers.pending).toHaveLength(0);
    expect(events).toEqual(["rejected 4404"]);
  });

  it("stop() cancels a pending reconnect", () => {
    const { feed, timers } = startFeed();
    FakeWebSocket.latest().serverDrops();
    feed.stop();
    expect(timers.pending).toHaveLength(0);
  });
});
