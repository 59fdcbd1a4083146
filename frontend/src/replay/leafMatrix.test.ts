import { describe, expect, it } from "vitest";
import { parseFrame, parseLeafMatrix } from "./frames";
import { axisLabels, decodeLeafBytes, decodeLeafMatrix, leafCellAt, paintLeafMatrix, RAMP_HIGH, rampRgb, shareOfMax } from "./leafMatrix";
import { base64Bytes, replayFrame } from "../testing/fakes";
import { EMPTY_RGB } from "./thresholds";

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

describe("colours", () => {
  it("ramps from white to dark blue, clamped, grey without a value", () => {
    expect(rampRgb(0)).toEqual([255, 255, 255]);
    expect(rampRgb(1)).toEqual(RAMP_HIGH);
    expect(rampRgb(2)).toEqual(RAMP_HIGH);
    expect(rampRgb(-1)).toEqual([255, 255, 255]);
    expect(rampRgb(0.5)).toEqual([143, 157, 197]);
    expect(rampRgb(Number.NaN)).toEqual(EMPTY_RGB);
  });

  it("scales to the busiest pair and paints one opaque pixel per pair", () => {
    expect(shareOfMax(255, 510)).toBe(0.5);
    expect(shareOfMax(0, 0)).toBe(0);
    expect(shareOfMax(Number.NaN, 10)).toBeNaN();
    const pixels = paintLeafMatrix(decodeLeafMatrix(parseLeafMatrix(wire))!);
    expect(pixels).toHaveLength(16);
    expect([...pixels.slice(0, 4)]).toEqual([255, 255, 255, 255]);
    expect([...pixels.slice(4, 8)]).toEqual([...RAMP_HIGH, 255]);
    expect([...pixels.slice(8, 12)]).toEqual([...rampRgb(0.2), 255]);
  });
});

describe("hover", () => {
  it("maps a point in the box to the pair under it", () => {
    expect(leafCellAt(0, 0, 360, 360, 4)).toEqual({ row: 0, col: 0, index: 0 });
    expect(leafCellAt(359.9, 100, 360, 360, 4)).toEqual({ row: 1, col: 3, index: 7 });
    expect(leafCellAt(180, 359, 360, 360, 3)).toEqual({ row: 2, col: 1, index: 7 });
    expect(leafCellAt(-1, 0, 360, 360, 4)).toBeNull();
    expect(leafCellAt(0, 360, 360, 360, 4)).toBeNull();
    expect(leafCellAt(0, 0, 0, 0, 4)).toBeNull();
    expect(leafCellAt(0, 0, 360, 360, 0)).toBeNull();
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
