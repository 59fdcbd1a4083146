// The "hop_stats" run result: validation and the numbers behind its bar chart.

export interface HopStatsResult {
  readonly cards: number;
  readonly switches: number;
  readonly links: number;
  readonly pairs: number;
  /** Hop count (as a JSON object key) -> number of card pairs. */
  readonly histogram: Readonly<Record<string, number>>;
  readonly mean_hops: number;
  readonly diameter: number;
  readonly unreachable_pairs: number;
}

const NUMERIC_FIELDS = ["cards", "switches", "links", "pairs", "mean_hops", "diameter", "unreachable_pairs"] as const;

export function isHopStatsResult(value: unknown): value is HopStatsResult {
  if (typeof value !== "object" || value === null) {
    return false;
  }
  const record = value as Record<string, unknown>;
  const histogram = record["histogram"];
  return (
    NUMERIC_FIELDS.every((field) => typeof record[field] === "number") &&
    typeof histogram === "object" &&
    histogram !== null &&
    Object.values(histogram).every((count) => typeof count === "number")
  );
}

export interface HistogramBar {
  readonly hops: number;
  readonly pairs: number;
  /** Share of all card pairs, unreachable ones included. */
  readonly share: number;
}

/** Bars in ascending hop order; keys that are not hop counts are dropped. */
export function histogramBars(result: HopStatsResult): HistogramBar[] {
  const entries = Object.entries(result.histogram)
    .map(([hops, pairs]) => ({ hops: Number(hops), pairs }))
    .filter((entry) => Number.isInteger(entry.hops) && entry.pairs >= 0)
    .sort((left, right) => left.hops - right.hops);
  const counted = entries.reduce((sum, entry) => sum + entry.pairs, 0);
  // `pairs` is the documented total; max() keeps shares <= 100 % should the
  // histogram ever count more than it.
  const total = Math.max(result.pairs, counted);
  return entries.map((entry) => ({
    ...entry,
    share: total > 0 ? entry.pairs / total : 0,
  }));
}
