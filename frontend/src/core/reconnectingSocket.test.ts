import { beforeEach, describe, expect, it } from "vitest";
import { ReconnectingSocket, websocketUrl, type ReconnectingSocketOptions } from "./reconnectingSocket";
import { FakeTimers, FakeWebSocket } from "../testing/fakes";

function startSocket(overrides: Partial<ReconnectingSocketOptions> = {}) {
  const timers = new FakeTimers();
  const events: string[] = [];
  const socket = new ReconnectingSocket({
    url: "ws://twin.test/ws/fabrics/3/",
    onMessage: (data) => events.push(`message ${data}`),
    onConnected: () => events.push("connected"),
    onDisconnected: () => events.push("disconnected"),
    onRejected: (code) => events.push(`rejected ${code}`),
    openSocket: FakeWebSocket.open,
    timers,
    random: () => 0,
    ...overrides,
  });
  socket.start();
  return { socket, timers, events };
}

beforeEach(() => FakeWebSocket.reset());

describe("ReconnectingSocket", () => {
  it("passes messages of the live socket on", () => {
    const { events } = startSocket();
    FakeWebSocket.latest().serverOpens();
    FakeWebSocket.latest().serverSends("hello");
    expect(events).toEqual(["connected", "message hello"]);
    expect(FakeWebSocket.latest().url).toBe("ws://twin.test/ws/fabrics/3/");
  });

  it.each([4401, 4404])("gives up for good when the server closes with %i", (code) => {
    const { socket, timers, events } = startSocket();
    FakeWebSocket.latest().serverDrops(code);
    expect(events).toEqual([`rejected ${code}`]);
    expect(timers.pending).toHaveLength(0);
    socket.start();
    expect(FakeWebSocket.instances).toHaveLength(1);
  });

  it("retries after the broker-down close code 4503 and abnormal closes", () => {
    const { timers, events } = startSocket();
    FakeWebSocket.latest().serverOpens();
    FakeWebSocket.latest().serverDrops(4503);
    timers.fireNext();
    FakeWebSocket.latest().serverDrops(1006);
    timers.fireNext();
    expect(FakeWebSocket.instances).toHaveLength(3);
    expect(events).toEqual(["connected", "disconnected", "disconnected"]);
    expect(timers.requestedDelays).toEqual([1000, 2000]);
  });

  it("markHealthy() starts the backoff schedule over", () => {
    const { socket, timers } = startSocket();
    FakeWebSocket.latest().serverDrops();
    timers.fireNext();
    FakeWebSocket.latest().serverDrops();
    timers.fireNext();
    socket.markHealthy();
    FakeWebSocket.latest().serverDrops();
    expect(timers.requestedDelays).toEqual([1000, 2000, 1000]);
  });

  it("sends only on an open connection", () => {
    const { socket, timers } = startSocket();
    expect(socket.send("early")).toBe(false);
    FakeWebSocket.latest().serverOpens();
    expect(socket.send('{"action":"play"}')).toBe(true);
    expect(FakeWebSocket.latest().sent).toEqual([{ action: "play" }]);
    FakeWebSocket.latest().serverDrops();
    expect(socket.send("while down")).toBe(false);
    timers.fireNext();
    FakeWebSocket.latest().serverOpens();
    expect(socket.send("again")).toBe(true);
    socket.stop();
    expect(socket.send("after stop")).toBe(false);
    expect(FakeWebSocket.instances.map((instance) => instance.sent)).toEqual([[{ action: "play" }], ["again"]]);
  });

  describe("with stableAfterMs", () => {
    it("treats a connection that stayed open that long as healthy", () => {
      const { timers } = startSocket({ stableAfterMs: 15_000 });
      FakeWebSocket.latest().serverDrops();
      timers.fireNext(); // reconnect after 1 s
      FakeWebSocket.latest().serverDrops();
      timers.fireNext(); // reconnect after 2 s
      FakeWebSocket.latest().serverOpens();
      timers.fireNext(); // open for 15 s
      FakeWebSocket.latest().serverDrops();
      expect(timers.requestedDelays).toEqual([1000, 2000, 15_000, 1000]);
    });

    it("keeps backing off for sockets that open and are closed at once", () => {
      const { timers } = startSocket({ stableAfterMs: 15_000 });
      for (let attempt = 0; attempt < 3; attempt += 1) {
        FakeWebSocket.latest().serverOpens();
        FakeWebSocket.latest().serverDrops(4503);
        timers.fireNext();
      }
      // The stable timers were cancelled by each close, so only retries fired.
      expect(timers.requestedDelays.filter((delay) => delay !== 15_000)).toEqual([1000, 2000, 4000]);
      expect(timers.pending).toHaveLength(0);
    });

    it("stop() cancels the stable timer too", () => {
      const { socket, timers } = startSocket({ stableAfterMs: 15_000 });
      FakeWebSocket.latest().serverOpens();
      socket.stop();
      expect(timers.pending).toHaveLength(0);
      expect(FakeWebSocket.latest().closedByClient).toBe(true);
    });
  });
});

describe("websocketUrl", () => {
  it("follows the page's scheme and host", () => {
    expect(websocketUrl({ protocol: "https:", host: "twin.example:8443" }, "/ws/runs/1/")).toBe(
      "wss://twin.example:8443/ws/runs/1/",
    );
    expect(websocketUrl({ protocol: "http:", host: "localhost:8000" }, "/ws/runs/1/")).toBe("ws://localhost:8000/ws/runs/1/");
  });

  it("keeps an absolute websocket URL as given", () => {
    expect(websocketUrl({ protocol: "http:", host: "a" }, "wss://b/ws/")).toBe("wss://b/ws/");
  });
});
