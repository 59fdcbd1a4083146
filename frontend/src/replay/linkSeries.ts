// Time series of the hottest links: for links named in frames' `top` lists,
// their utilisation over the last frames received (a ring of `capacity`
// frames, at most `maxSeries` links: the ones with the highest peak in the
// window). The views draw them as small line charts. No DOM access.

import type { FrameLink } from "./frames";

export const SERIES_FRAMES = 600;
export const MAX_SERIES = 10;

export interface LinkSeriesView {
  readonly link: number;
  readonly from: string;
  readonly to: string;
  /** Highest utilisation in the window. */
  readonly peak: number;
  /** Oldest first, one value per frame kept (NaN: before the link was tracked, or unknown). */
  readonly values: Float32Array;
}

interface Tracked {
  readonly link: number;
  readonly from: string;
  readonly to: string;
  readonly ring: Float32Array;
}

export class HotLinkSeries {
  private readonly keys: Float64Array;
  private readonly times: Float64Array;
  private start = 0;
  private size = 0;
  private readonly tracked = new Map<number, Tracked>();

  constructor(
    readonly capacity = SERIES_FRAMES,
    readonly maxSeries = MAX_SERIES,
  ) {
    this.keys = new Float64Array(capacity);
    this.times = new Float64Array(capacity);
  }

  /** Frames kept. */
  get count(): number {
    return this.size;
  }

  /** Links tracked now. */
  get seriesCount(): number {
    return this.tracked.size;
  }

  /**
   * Adds one frame: `key` tells frames apart (a replay's index, a telemetry
   * seq); the same key as the newest frame is ignored (a frame shown twice).
   * `utilisation` is the frame's per-link array; `top` its hottest links.
   */
  push(key: number, tS: number, top: readonly FrameLink[], utilisation: ArrayLike<number> | null): void {
    if (this.size > 0 && this.keys[this.slotOf(this.size - 1)] === key) {
      return;
    }
    let slot: number;
    if (this.size < this.capacity) {
      slot = this.slotOf(this.size);
      this.size += 1;
    } else {
      slot = this.start;
      this.start = (this.start + 1) % this.capacity;
    }
    this.keys[slot] = key;
    this.times[slot] = tS;
    const exact = new Map<number, number>();
    for (const entry of top) {
      if (entry.link !== null) {
        exact.set(entry.link, Math.max(exact.get(entry.link) ?? Number.NEGATIVE_INFINITY, entry.utilization));
      }
    }
    const valueOf = (link: number): number => exact.get(link) ?? (utilisation === null ? Number.NaN : (utilisation[link] ?? Number.NaN));
    for (const series of this.tracked.values()) {
      series.ring[slot] = valueOf(series.link);
    }
    for (const entry of top) {
      if (entry.link === null || this.tracked.has(entry.link)) {
        continue;
      }
      const value = valueOf(entry.link);
      if (this.tracked.size >= this.maxSeries) {
        const weakest = this.weakest();
        if (weakest === null || !(value > weakest.peak)) {
          continue;
        }
        this.tracked.delete(weakest.link);
      }
      const ring = new Float32Array(this.capacity).fill(Number.NaN);
      ring[slot] = value;
      this.tracked.set(entry.link, { link: entry.link, from: entry.from, to: entry.to, ring });
    }
  }

  /** The series, highest peak first (ties: lower link index). */
  series(): LinkSeriesView[] {
    return [...this.tracked.values()]
      .map((tracked) => {
        const values = this.ordered(tracked.ring);
        return { link: tracked.link, from: tracked.from, to: tracked.to, peak: peakOf(values), values };
      })
      .sort((a, b) => b.peak - a.peak || a.link - b.link);
  }

  /** The frames' start times, oldest first. */
  frameTimes(): Float64Array {
    const out = new Float64Array(this.size);
    for (let i = 0; i < this.size; i += 1) {
      out[i] = this.times[this.slotOf(i)] as number;
    }
    return out;
  }

  /** Forgets everything (another replay, telemetry switched off). */
  reset(): void {
    this.start = 0;
    this.size = 0;
    this.tracked.clear();
  }

  private slotOf(position: number): number {
    return (this.start + position) % this.capacity;
  }

  private ordered(ring: Float32Array): Float32Array {
    const out = new Float32Array(this.size);
    for (let i = 0; i < this.size; i += 1) {
      out[i] = ring[this.slotOf(i)] as number;
    }
    return out;
  }

  /** The tracked link with the lowest peak in the window (a series gone out of the window counts as -inf). */
  private weakest(): { link: number; peak: number } | null {
    let found: { link: number; peak: number } | null = null;
    for (const tracked of this.tracked.values()) {
      const peak = peakOf(this.ordered(tracked.ring));
      if (found === null || peak < found.peak || (peak === found.peak && tracked.link > found.link)) {
        found = { link: tracked.link, peak };
      }
    }
    return found;
  }
}

function peakOf(values: ArrayLike<number>): number {
  let peak = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i] as number;
    if (value > peak) {
      peak = value;
    }
  }
  return peak;
}
