import { describe, expect, it } from "vitest";
import { parseFrame, parseLeafMatrix } from "./frames";
import { axisLabels, decodeLeafBytes, decodeLeafMatrix, shareOfMax } from "./leafMatrix";
import { base64Bytes, replayFrame } from "../testing/fakes";

const wire = { groups: ["leaf-01", "leaf-02"], scale_bytes: 510, values: base64Bytes([0, 255, 51, 0]) };

describe("leaf_matrix at the boundary", () => {
  it("parses the field and leaves it null when absent or malformed", () => {
    expect(parseFrame(replayFrame({ leaf_matrix: wire }))?.leafMatrix).toEqual({ groups: ["leaf-01", "leaf-02"], scaleBytes: 510, values: wire.values });
    expect(parseFrame(replayFrame())?.leafMatrix).toBeNull();
    expect(parseLeafMatrix({ ...wire, groups: [] })).toBeNull();
    expect(parseLeafMatrix({ ...wire, groups: Array.from({ length: 65 }, (_, i) => `g${i}`) })).toBeNull();
    expect(parseLeafMatrix({ ...wire, groups: ["a", 2] })).toBeNull();
    expect(parseLeafMatrix({ ...wire, scale_bytes: -1 })).toBeNull();
    expect(parseLeafMatrix({ ...wire, values: null })).toBeNull();
  });
});

describe("decoding", () => {
  it("turns base64 into bytes per pair, row-major, NaN past the bytes sent", () => {
    expect([...decodeLeafBytes(base64Bytes([0, 255, 51, 0]), 2, 510)!]).toEqual([0, 510, 102, 0]);
    const short = decodeLeafBytes(base64Bytes([255]), 2, 10)!;
    expect(short[0]).toBe(10);
    expect([...short.slice(1)].every(Number.isNaN)).toBe(true);
    expect(decodeLeafBytes("not base64!", 2, 10)).toBeNull();
  });

  it("finds the frame's busiest pair", () => {
    const matrix = decodeLeafMatrix(parseLeafMatrix(wire))!;
    expect(matrix.groups).toEqual(["leaf-01", "leaf-02"]);
    expect(matrix.max).toBe(510);
    expect(decodeLeafMatrix(null)).toBeNull();
    expect(decodeLeafMatrix({ groups: ["a"], scaleBytes: 1, values: base64Bytes([0]) })?.max).toBe(0);
  });
});

describe("shares", () => {
  it("scales a pair to the busiest pair", () => {
    expect(shareOfMax(255, 510)).toBe(0.5);
    expect(shareOfMax(0, 0)).toBe(0);
    expect(shareOfMax(Number.NaN, 10)).toBeNaN();
  });
});

describe("axis labels", () => {
  it("drops the shared prefix, keeps numbers whole and shortens long names", () => {
    expect(axisLabels(["leaf-01", "leaf-02", "leaf-10"])).toEqual(["01", "02", "10"]);
    expect(axisLabels(["leaf-001…leaf-008", "leaf-009…leaf-016"])).toEqual(["001…008", "009…016"]);
    expect(axisLabels(["leaf-01"])).toEqual(["leaf-01"]);
    expect(axisLabels(["pod1-leaf-a", "rack-7-a-very-long-name"], 8)).toEqual(["pod1-le…", "rack-7-…"]);
  });
});
