import { describe, expect, it } from "vitest";
import {
  SeqGate,
  decodeBase64,
  decodeCongestion,
  decodeUtilisation,
  frameMismatch,
  frameUtilisation,
  parseFrame,
  parseFrameAnswer,
  parseReplayMessage,
  parseTelemetryMessage,
  type Frame,
} from "./frames";
import { base64Bytes, replayFrame } from "../testing/fakes";

const rounded = (values: Float32Array | null) => (values === null ? null : Array.from(values, (value) => (Number.isNaN(value) ? null : Number(value.toFixed(4)))));

describe("decoding", () => {
  it("reads base64 into bytes, and refuses what is not base64", () => {
    expect(Array.from(decodeBase64(base64Bytes([0, 1, 127, 128, 255])) ?? [])).toEqual([0, 1, 127, 128, 255]);
    expect(decodeBase64("")).toEqual(new Uint8Array(0));
    expect(decodeBase64("not base64!")).toBeNull();
  });

  it("turns bytes into utilisation (byte / 255) and congestion (2 byte / 255)", () => {
    const bytes = base64Bytes([0, 51, 255, 128]);
    expect(rounded(decodeUtilisation(bytes))).toEqual([0, 0.2, 1, 0.502]);
    expect(rounded(decodeCongestion(bytes))).toEqual([0, 0.4, 2, 1.0039]);
    expect(decodeUtilisation(bytes)).toBeInstanceOf(Float32Array);
  });

  it("pads a short byte string to the link count with NaN and cuts a long one", () => {
    expect(rounded(decodeUtilisation(base64Bytes([255]), 3))).toEqual([1, null, null]);
    expect(rounded(decodeUtilisation(base64Bytes([255, 0, 0]), 1))).toEqual([1]);
  });
});

describe("parseFrame", () => {
  it("reads the fields the pages use, a top link's ends by name where the frame names them", () => {
    const frame = parseFrame(replayFrame()) as Frame;
    expect(frame.tS).toBe(0.41);
    expect(frame.tEndS).toBe(0.42);
    expect(frame.links).toBe(4);
    expect(frame.top).toEqual([
      { link: 2, from: "spine-04", to: "leaf-29", utilization: 1, congestion: 1.5547, linkClass: "leaf-spine (scale-up)" },
      { link: 3, from: "card-0", to: "leaf-0", utilization: 0.502, congestion: 0.6, linkClass: "card-leaf (scale-up)" },
    ]);
    expect([frame.eventsDone, frame.eventsTotal, frame.activeCount]).toEqual([24576, 24592, 2]);
    expect(frame.totals.maxUtilization).toBe(1);
    expect(frame.telemetry).toBeNull();
    expect(rounded(frameUtilisation(frame))).toEqual([0, 0.2, 1, 0.502]);
  });

  it("reads the telemetry report, counted or listed", () => {
    const counted = parseFrame(replayFrame({ source: "telemetry", telemetry: { samples: 40, unknown_ports: 2, unknown: ["x:1", "y:2"] } }));
    expect(counted?.telemetry).toEqual({ samples: 40, unknownPorts: 2, unknownList: ["x:1", "y:2"] });
    const listed = parseFrame(replayFrame({ telemetry: { samples: 3, unknown_ports: ["a:1", "b:2", "c:3"] } }));
    expect(listed?.telemetry).toEqual({ samples: 3, unknownPorts: 3, unknownList: ["a:1", "b:2", "c:3"] });
  });

  it("rejects frames without a window or utilisation bytes and skips malformed top entries", () => {
    expect(parseFrame(null)).toBeNull();
    expect(parseFrame(replayFrame({ t_s: "0.4" }))).toBeNull();
    expect(parseFrame(replayFrame({ utilization: [1, 2] }))).toBeNull();
    expect(parseFrame(replayFrame({ top: [{ from: "a" }, "x", { from: "a", to: "b", utilization: 0.5 }] }))?.top).toEqual([
      { link: null, from: "a", to: "b", utilization: 0.5, congestion: 0.5, linkClass: "" },
    ]);
  });

  it("says when a frame counts other links than the map draws", () => {
    const frame = parseFrame(replayFrame()) as Frame;
    expect(frameMismatch(frame, 4)).toBeNull();
    expect(frameMismatch(frame, 5)).toBe("links");
    expect(frameMismatch(frame, undefined)).toBeNull();
    const pinned = parseFrame(replayFrame({ snapshot: 7 })) as Frame;
    expect(frameMismatch(pinned, 4, 7)).toBeNull();
    expect(frameMismatch(pinned, 4, 8)).toBe("snapshot");
    expect(frameMismatch(pinned, 4, null)).toBeNull();
  });
});

describe("parseFrameAnswer", () => {
  it("reads the endpoint's {index, frame} and a bare frame", () => {
    const wrapped = parseFrameAnswer({ index: 599, frame: replayFrame() });
    expect([wrapped?.index, wrapped?.frame.tS]).toEqual([599, 0.41]);
    const bare = parseFrameAnswer(replayFrame());
    expect([bare?.index, bare?.frame.tS]).toEqual([null, 0.41]);
    expect(parseFrameAnswer({ index: 1, frame: { t_s: 1 } })).toBeNull();
    expect(parseFrameAnswer("x")).toBeNull();
  });
});

describe("parseReplayMessage", () => {
  it("reads state, frame and error messages", () => {
    const state = { playing: true, speed: 0.25, loop: false, index: 3, frames: 600 };
    expect(parseReplayMessage(JSON.stringify({ type: "replay.state", state }))).toEqual({ type: "state", state });
    const frame = parseReplayMessage(JSON.stringify({ type: "replay.frame", seq: 7, index: 3, frame: replayFrame() }));
    expect(frame?.type === "frame" && [frame.seq, frame.index, frame.frame.tS]).toEqual([7, 3, 0.41]);
    expect(parseReplayMessage(JSON.stringify({ type: "replay.error", detail: "Only operators drive the player." }))).toEqual({
      type: "error",
      detail: "Only operators drive the player.",
    });
  });

  it("ignores unknown and malformed messages", () => {
    expect(parseReplayMessage("{oops")).toBeNull();
    expect(parseReplayMessage(JSON.stringify({ type: "replay.paused" }))).toBeNull();
    expect(parseReplayMessage(JSON.stringify({ type: "replay.state", state: { playing: "yes", speed: 1, index: 0, frames: 1 } }))).toBeNull();
    expect(parseReplayMessage(JSON.stringify({ type: "replay.state", state: { playing: true, speed: -1, index: 0, frames: 1 } }))).toBeNull();
    expect(parseReplayMessage(JSON.stringify({ type: "replay.frame", seq: "7", index: 3, frame: replayFrame() }))).toBeNull();
    expect(parseReplayMessage(JSON.stringify({ type: "replay.frame", seq: 7, index: -1, frame: replayFrame() }))).toBeNull();
  });
});

describe("parseTelemetryMessage", () => {
  it("reads fabric.telemetry and nothing else", () => {
    const message = parseTelemetryMessage(JSON.stringify({ type: "fabric.telemetry", seq: 4, frame: replayFrame({ source: "telemetry" }) }));
    expect(message?.seq).toBe(4);
    expect(message?.frame.source).toBe("telemetry");
    expect(parseTelemetryMessage(JSON.stringify({ type: "fabric.snapshot", seq: 4, frame: replayFrame() }))).toBeNull();
    expect(parseTelemetryMessage(JSON.stringify({ type: "fabric.telemetry", frame: replayFrame() }))).toBeNull();
  });
});

describe("SeqGate", () => {
  it("accepts only newer sequence numbers until reset", () => {
    const gate = new SeqGate();
    expect([gate.accept(0), gate.accept(2), gate.accept(2), gate.accept(1), gate.accept(3)]).toEqual([true, true, false, false, true]);
    gate.reset();
    expect(gate.accept(1)).toBe(true);
  });
});
