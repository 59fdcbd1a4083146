import { describe, expect, it } from "vitest";
import { histogramBars, isHopStatsResult } from "./hopStats";
import { HOP_STATS_RESULT } from "../testing/fakes";

describe("isHopStatsResult", () => {
  it("accepts the documented shape", () => {
    expect(isHopStatsResult(HOP_STATS_RESULT)).toBe(true);
  });

  it("rejects missing fields and non-numeric counts", () => {
    expect(isHopStatsResult({ ...HOP_STATS_RESULT, diameter: undefined })).toBe(false);
    expect(isHopStatsResult({ ...HOP_STATS_RESULT, histogram: { "1": "many" } })).toBe(false);
    expect(isHopStatsResult(null)).toBe(false);
  });
});

describe("histogramBars", () => {
  it("orders hop counts numerically, not as strings", () => {
    const bars = histogramBars({ ...HOP_STATS_RESULT, histogram: { "11": 1, "3": 2, "1": 3 } });
    expect(bars.map((bar) => bar.hops)).toEqual([1, 3, 11]);
  });

  it("shares are of all card pairs, unreachable included", () => {
    const bars = histogramBars(HOP_STATS_RESULT);
    expect(bars.map((bar) => bar.share)).toEqual([0.1, 0.6, 0.25]);
  });

  it("never reports more than 100 % when the histogram outgrows pairs", () => {
    const bars = histogramBars({ ...HOP_STATS_RESULT, pairs: 10, histogram: { "1": 30, "3": 10 } });
    expect(bars.map((bar) => bar.share)).toEqual([0.75, 0.25]);
  });

  it("handles an empty histogram", () => {
    expect(histogramBars({ ...HOP_STATS_RESULT, pairs: 0, histogram: {} })).toEqual([]);
  });

  it("drops keys that are not hop counts", () => {
    expect(histogramBars({ ...HOP_STATS_RESULT, histogram: { inf: 4, "2": 1 } }).map((bar) => bar.hops)).toEqual([2]);
  });
});
