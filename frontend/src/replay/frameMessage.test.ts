import { describe, expect, it } from "vitest";
import { binaryFrameMessage, replayFrame } from "../testing/fakes";
import fixture from "./frameMessage.fixture.json";
import { decodeFrameMessage, FRAME_MESSAGE_VERSION } from "./frameMessage";
import { decodeCongestion, decodeUtilisation, frameBytes, parseReplayMessage, type Frame } from "./frames";
import { decodeLeafMatrix } from "./leafMatrix";

/** The bytes twin/replay/encoding.py encode_frame_message wrote (tests/replay/test_replay_frames.py keeps the file in step). */
function pythonBytes(): ArrayBuffer {
  return Uint8Array.from(atob(fixture.base64), (character) => character.charCodeAt(0)).buffer;
}

function parsedFrame(data: string | ArrayBuffer): { seq: number; index: number; frame: Frame } {
  const message = parseReplayMessage(data);
  if (message?.type !== "frame") {
    throw new Error(`not a frame: ${JSON.stringify(message)}`);
  }
  return message;
}

describe("binary frame messages", () => {
  it("decode the Python encoder's bytes to the frame its JSON gives", () => {
    const buffer = pythonBytes();
    const binary = parsedFrame(buffer);
    const json = parsedFrame(JSON.stringify(fixture.message));
    expect([binary.seq, binary.index]).toEqual([41, 3]);
    expect(Array.from(frameBytes(binary.frame.utilization) ?? [])).toEqual([0, 1, 127, 128, 254, 255]);
    expect(Array.from(decodeUtilisation(binary.frame.utilization, 6) ?? [])).toEqual(Array.from(decodeUtilisation(json.frame.utilization, 6) ?? []));
    expect(Array.from(decodeCongestion(binary.frame.congestion ?? "", 6) ?? [])).toEqual(Array.from(decodeCongestion(json.frame.congestion ?? "", 6) ?? []));
    expect(decodeLeafMatrix(binary.frame.leafMatrix)).toEqual(decodeLeafMatrix(json.frame.leafMatrix));
    expect(decodeLeafMatrix(binary.frame.leafMatrix)?.max).toBe(2.5e8);
    const { utilization, congestion, leafMatrix, ...rest } = binary.frame;
    const { utilization: u, congestion: c, leafMatrix: l, ...restJson } = json.frame;
    expect(rest).toEqual(restJson);
    expect([leafMatrix?.groups, leafMatrix?.scaleBytes]).toEqual([l?.groups, l?.scaleBytes]);
    expect([typeof u, typeof c]).toEqual(["string", "string"]);
    // Views of the received buffer: nothing is copied.
    expect(utilization).toBeInstanceOf(Uint8Array);
    expect((utilization as Uint8Array).buffer).toBe(buffer);
    expect((congestion as Uint8Array).buffer).toBe(buffer);
  });

  it("put the switches' arrays back where the JSON frame has them", () => {
    const decoded = decodeFrameMessage(pythonBytes());
    expect(decoded.kind).toBe("message");
    const frame = (decoded as unknown as { message: { frame: { switches: Record<string, Uint8Array> } } }).message.frame;
    expect(Object.fromEntries(Object.entries(frame.switches).map(([name, bytes]) => [name, Array.from(bytes)]))).toEqual({ in: [10, 20], out: [30, 40], max: [50, 255] });
  });

  it("round-trip the test encoder's messages like the server's", () => {
    const sent = { type: "replay.frame", seq: 5, index: 2, frame: replayFrame() };
    expect(decodeFrameMessage(binaryFrameMessage(fixture.message))).toEqual(decodeFrameMessage(pythonBytes()));
    const binary = parsedFrame(binaryFrameMessage(sent));
    const json = parsedFrame(JSON.stringify(sent));
    expect(Array.from(decodeUtilisation(binary.frame.utilization) ?? [])).toEqual(Array.from(decodeUtilisation(json.frame.utilization) ?? []));
    expect(binary.frame.top).toEqual(json.frame.top);
  });

  it("refuse another layout version instead of reading its bytes", () => {
    const newer = binaryFrameMessage(fixture.message, FRAME_MESSAGE_VERSION + 1);
    expect(decodeFrameMessage(newer)).toEqual({ kind: "unsupported", version: 2 });
    expect(parseReplayMessage(newer)).toEqual({ type: "unsupported", version: 2 });
  });

  it("reject bytes that do not add up", () => {
    const bytes = new Uint8Array(pythonBytes());
    expect(decodeFrameMessage(bytes.slice(0, bytes.length - 1).buffer).kind).toBe("malformed");
    expect(decodeFrameMessage(bytes.slice(0, 5).buffer).kind).toBe("malformed");
    const longHeader = bytes.slice();
    new DataView(longHeader.buffer).setUint32(4, 1 << 30, true);
    expect(decodeFrameMessage(longHeader.buffer).kind).toBe("malformed");
    const notJson = bytes.slice();
    notJson[8] = 0x7b + 1;
    expect(decodeFrameMessage(notJson.buffer).kind).toBe("malformed");
    expect(parseReplayMessage(bytes.slice(0, bytes.length - 1).buffer)).toBeNull();
  });
});
