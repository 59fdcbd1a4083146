// The "replay" run: the shape of its result (twin/replay/summary.py's
// replay_summary) and the pure parts of the player: speeds, frame URLs, the
// pace of playback without websockets. No DOM access.

import { finite, isRecord, text } from "../core/json";

// ---- result -------------------------------------------------------------

export interface ReplayEvents {
  readonly total: number;
  readonly collectives: number | null;
  readonly flows: number | null;
  readonly stretched: number | null;
  readonly distinctOperations: number | null;
  readonly cacheHitRate: number | null;
}

export interface ReplayOperation {
  readonly name: string;
  readonly count: number;
  readonly bytes: number;
  readonly timeS: number;
  readonly soloS: number;
  readonly stretch: number;
  /** Algorithm -> events, most used first. */
  readonly algorithms: readonly (readonly [string, number])[];
}

export interface ReplayLink {
  readonly link: number | null;
  /** The ends as people name them (results from before names: their ids). */
  readonly from: string;
  readonly to: string;
  readonly linkClass: string;
  readonly bytes: number;
  readonly utilization: number;
}

export interface PeakCongestion {
  readonly congestion: number;
  readonly tS: number | null;
  /** Null when no link carried anything. */
  readonly from: string | null;
  readonly to: string | null;
  readonly linkClass: string | null;
}

export interface LinkClassLoad {
  readonly name: string;
  readonly links: number;
  readonly bytes: number;
  readonly meanUtilization: number;
  readonly maxUtilization: number;
}

export interface ReplaySummary {
  readonly fabric: string | null;
  readonly trace: string | null;
  readonly durationS: number;
  readonly events: ReplayEvents;
  readonly operations: readonly ReplayOperation[];
  readonly busiestLinks: readonly ReplayLink[];
  readonly peak: PeakCongestion | null;
  readonly linkClasses: readonly LinkClassLoad[];
}

function parseOperation([name, value]: [string, unknown]): ReplayOperation[] {
  if (!isRecord(value)) {
    return [];
  }
  const count = finite(value["count"]);
  if (count === null) {
    return [];
  }
  const timeS = finite(value["time_s"]) ?? 0;
  const soloS = finite(value["solo_s"]) ?? 0;
  const algorithms = Object.entries(isRecord(value["algorithms"]) ? value["algorithms"] : {})
    .flatMap(([algorithm, used]): [string, number][] => (finite(used) === null ? [] : [[algorithm, used as number]]))
    .sort(([, left], [, right]) => right - left);
  return [
    {
      name,
      count,
      bytes: finite(value["bytes"]) ?? 0,
      timeS,
      soloS,
      stretch: finite(value["stretch"]) ?? (soloS > 0 ? timeS / soloS : 1),
      algorithms,
    },
  ];
}

function parseLink(value: unknown): ReplayLink[] {
  if (!isRecord(value)) {
    return [];
  }
  const from = text(value["from_name"]) ?? text(value["from"]);
  const to = text(value["to_name"]) ?? text(value["to"]);
  const utilization = finite(value["utilization"]);
  if (from === null || to === null || utilization === null) {
    return [];
  }
  return [{ link: finite(value["link"]), from, to, linkClass: text(value["class"]) ?? "", bytes: finite(value["bytes"]) ?? 0, utilization }];
}

function parsePeak(value: unknown): PeakCongestion | null {
  if (!isRecord(value)) {
    return null;
  }
  const congestion = finite(value["congestion"]);
  if (congestion === null) {
    return null;
  }
  return {
    congestion,
    tS: finite(value["t_s"]),
    from: text(value["from_name"]) ?? text(value["from"]),
    to: text(value["to_name"]) ?? text(value["to"]),
    linkClass: text(value["class"]),
  };
}

function parseClass([name, value]: [string, unknown]): LinkClassLoad[] {
  if (!isRecord(value)) {
    return [];
  }
  const mean = finite(value["mean_utilization"]);
  const max = finite(value["max_utilization"]);
  if (mean === null || max === null) {
    return [];
  }
  return [{ name, links: finite(value["links"]) ?? 0, bytes: finite(value["bytes"]) ?? 0, meanUtilization: mean, maxUtilization: max }];
}

/** The replay summary, or null when its duration or event count is missing (then a generic view is used). */
export function parseReplaySummary(value: unknown): ReplaySummary | null {
  if (!isRecord(value)) {
    return null;
  }
  const durationS = finite(value["duration_s"]);
  const events = isRecord(value["events"]) ? value["events"] : null;
  const total = events === null ? null : finite(events["total"]);
  if (durationS === null || events === null || total === null) {
    return null;
  }
  const busiest = value["busiest_links"];
  return {
    fabric: text(value["fabric"]),
    trace: text(value["trace"]),
    durationS,
    events: {
      total,
      collectives: finite(events["collectives"]),
      flows: finite(events["flows"]),
      stretched: finite(events["stretched"]),
      distinctOperations: finite(events["distinct_operations"]),
      cacheHitRate: finite(events["cache_hit_rate"]),
    },
    operations: Object.entries(isRecord(value["operations"]) ? value["operations"] : {}).flatMap(parseOperation),
    busiestLinks: Array.isArray(busiest) ? busiest.flatMap(parseLink) : [],
    peak: parsePeak(value["peak_congestion"]),
    // Busiest class first: that is the tier to look at.
    linkClasses: Object.entries(isRecord(value["link_classes"]) ? value["link_classes"] : {})
      .flatMap(parseClass)
      .sort((left, right) => right.meanUtilization - left.meanUtilization || (left.name < right.name ? -1 : 1)),
  };
}

// ---- player ---------------------------------------------------------------

/** The speeds offered, slowest first; 0 is "as fast as possible". */
export const REPLAY_SPEEDS: readonly number[] = [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 0];

/** The server sends at most this many frames a second; local playback keeps the same pace. */
export const MAX_FRAMES_PER_SECOND = 10;

/** A speed the server accepts: 0 or 0.25 .. 64. */
export function isReplaySpeed(speed: number): boolean {
  return speed === 0 || (speed >= 0.25 && speed <= 64);
}

/** The frame endpoint for one index (or the last frame). */
export function frameUrl(base: string, index: number | "last"): string {
  return `${base}${base.includes("?") ? "&" : "?"}index=${String(index)}`;
}

/**
 * Playback without the server (no websocket), paced like the server's player
 * (twin/simulations/replays.py): `speed` simulated seconds per wall second,
 * frames of `windowS` simulated seconds, at most MAX_FRAMES_PER_SECOND shown,
 * so a fast replay skips `step - 1` frames rather than falling behind. Speed 0
 * shows every frame at that top rate.
 */
export function localPace(windowS: number, speed: number): { delayMs: number; step: number } {
  const minDelayS = 1 / MAX_FRAMES_PER_SECOND;
  const interval = windowS > 0 ? windowS : 1e-6;
  if (speed <= 0) {
    return { delayMs: minDelayS * 1000, step: 1 };
  }
  const step = Math.max(1, Math.round(speed / (interval * MAX_FRAMES_PER_SECOND)));
  return { delayMs: Math.max(minDelayS, (interval * step) / speed) * 1000, step };
}

/** The index after `index` moved by `step`: wraps when looping, else stops at the last frame (null: at the end). */
export function nextIndex(index: number, step: number, frames: number, loop: boolean): number | null {
  if (frames <= 0) {
    return null;
  }
  const next = index + step;
  if (next < frames) {
    return next;
  }
  if (loop) {
    return 0;
  }
  return index >= frames - 1 ? null : frames - 1;
}

export function clampIndex(index: number, frames: number): number {
  return Math.min(Math.max(0, Math.round(index)), Math.max(0, frames - 1));
}
