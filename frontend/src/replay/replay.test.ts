import { describe, expect, it } from "vitest";
import {
  MAX_FRAMES_PER_SECOND,
  clampIndex,
  frameUrl,
  isReplaySpeed,
  localPace,
  nextIndex,
  parseReplaySummary,
} from "./replay";
import { REPLAY_SUMMARY } from "../testing/fakes";

describe("parseReplaySummary", () => {
  it("reads the summary", () => {
    const summary = parseReplaySummary(REPLAY_SUMMARY);
    expect(summary?.durationS).toBe(0.4213);
    expect(summary?.events).toEqual({ total: 24592, collectives: 24000, flows: 592, stretched: 1230, distinctOperations: 6464, cacheHitRate: 0.947 });
    expect(summary?.operations.map((operation) => [operation.name, operation.stretch, operation.algorithms])).toEqual([
      ["allreduce", 1.25, [["ring", 20000], ["in_switch", 4000]]],
      ["flow", 1, [["flow", 592]]],
    ]);
    expect(summary?.peak).toEqual({ congestion: 1.5547, tS: 0.2051, from: "spine-04", to: "leaf-29", linkClass: "leaf-spine (scale-up)" });
    expect(summary?.busiestLinks[0]?.bytes).toBe(8.8e11);
  });

  it("lists the link classes busiest first", () => {
    expect(parseReplaySummary(REPLAY_SUMMARY)?.linkClasses.map((load) => load.name)).toEqual(["leaf-spine (scale-up)", "card-leaf (scale-up)"]);
  });

  it("keeps a peak without a link (nothing moved) and refuses a summary without duration or events", () => {
    const idle = parseReplaySummary({ ...REPLAY_SUMMARY, peak_congestion: { congestion: 0, t_s: 0, link: null, from: null, to: null, class: null } });
    expect(idle?.peak).toEqual({ congestion: 0, tS: 0, from: null, to: null, linkClass: null });
    expect(parseReplaySummary({ ...REPLAY_SUMMARY, duration_s: null })).toBeNull();
    expect(parseReplaySummary({ ...REPLAY_SUMMARY, events: 3 })).toBeNull();
    expect(parseReplaySummary([])).toBeNull();
  });
});

describe("player helpers", () => {
  it("builds frame URLs", () => {
    expect(frameUrl("/api/runs/12/frames/", 5)).toBe("/api/runs/12/frames/?index=5");
    expect(frameUrl("/api/runs/12/frames/?x=1", "last")).toBe("/api/runs/12/frames/?x=1&index=last");
  });

  it("accepts the speeds the server does", () => {
    expect([0, 0.25, 1, 64].every(isReplaySpeed)).toBe(true);
    expect([0.1, 65, -1].some(isReplaySpeed)).toBe(false);
  });

  it("paces local playback like the server: simulated seconds per wall second, at most 10 frames a second", () => {
    // 100 ms frames at 1x: one frame every 100 ms.
    expect(localPace(0.1, 1)).toEqual({ delayMs: 100, step: 1 });
    // 1 s frames at 2x: one frame every 500 ms.
    expect(localPace(1, 2)).toEqual({ delayMs: 500, step: 1 });
    // 1 ms frames at 1x would be 1,000 a second: show every 100th, every 100 ms.
    const fast = localPace(0.001, 1);
    expect(fast.step).toBe(100);
    expect(fast.delayMs).toBeCloseTo(100);
    // As fast as possible: every frame at the top rate.
    expect(localPace(0.001, 0)).toEqual({ delayMs: 1000 / MAX_FRAMES_PER_SECOND, step: 1 });
  });

  it("moves on, loops or stops at the end", () => {
    expect(nextIndex(3, 1, 10, false)).toBe(4);
    expect(nextIndex(8, 5, 10, false)).toBe(9);
    expect(nextIndex(9, 1, 10, false)).toBeNull();
    expect(nextIndex(9, 1, 10, true)).toBe(0);
    expect(nextIndex(0, 1, 0, true)).toBeNull();
    expect([clampIndex(-3, 10), clampIndex(4.4, 10), clampIndex(42, 10), clampIndex(3, 0)]).toEqual([0, 4, 9, 0]);
  });
});
