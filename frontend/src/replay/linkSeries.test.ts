import { describe, expect, it } from "vitest";
import type { FrameLink } from "./frames";
import { HotLinkSeries } from "./linkSeries";

function top(...entries: [number, number][]): FrameLink[] {
  return entries.map(([link, utilization]) => ({ link, from: `a${link}`, to: `b${link}`, utilization, congestion: utilization, linkClass: "" }));
}

describe("hottest-link series", () => {
  it("tracks links from top lists and follows them in later frames", () => {
    const series = new HotLinkSeries(4, 3);
    const util = new Float32Array([0.1, 0.2, 0.3]);
    series.push(0, 0, top([1, 0.95]), util);
    util[1] = 0.4;
    series.push(1, 1, [], util);
    series.push(1, 1, [], util); // the same frame again: ignored
    expect(series.count).toBe(2);
    const [only] = series.series();
    expect(only?.link).toBe(1);
    expect(only?.from).toBe("a1");
    expect(Array.from(only?.values ?? [])).toEqual([Math.fround(0.95), Math.fround(0.4)]);
    expect(only?.peak).toBeCloseTo(0.95);
  });

  it("keeps the last `capacity` frames, oldest first", () => {
    const series = new HotLinkSeries(3, 10);
    for (let i = 0; i < 5; i += 1) {
      series.push(i, i * 10, top([0, i / 10]), null);
    }
    expect(series.count).toBe(3);
    expect(Array.from(series.frameTimes())).toEqual([20, 30, 40]);
    expect(Array.from(series.series()[0]?.values ?? []).map((v) => Number(v.toFixed(2)))).toEqual([0.2, 0.3, 0.4]);
  });

  it("holds at most `maxSeries` links: a hotter newcomer replaces the lowest peak", () => {
    const series = new HotLinkSeries(10, 2);
    series.push(0, 0, top([0, 0.5], [1, 0.7]), null);
    series.push(1, 1, top([2, 0.4]), null); // cooler than both: not tracked
    expect(series.series().map((s) => s.link)).toEqual([1, 0]);
    series.push(2, 2, top([3, 0.9]), null);
    expect(series.series().map((s) => s.link)).toEqual([3, 1]);
    expect(series.seriesCount).toBe(2);
    // Before it was tracked, a newcomer has no values.
    expect(Array.from(series.series()[0]?.values ?? []).slice(0, 2)).toEqual([Number.NaN, Number.NaN]);
  });

  it("lets a series whose values left the window be replaced first", () => {
    const series = new HotLinkSeries(2, 1);
    series.push(0, 0, top([0, 1]), null);
    series.push(1, 1, [], null);
    series.push(2, 2, [], null); // link 0's only value has rotated out
    series.push(3, 3, top([5, 0.1]), null);
    expect(series.series().map((s) => s.link)).toEqual([5]);
    series.reset();
    expect(series.count).toBe(0);
    expect(series.series()).toEqual([]);
  });
});
