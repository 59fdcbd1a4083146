// Overlays on the map: link utilisation as a heatmap, snapshot-diff classes,
// and per-node marks (a job's ranks, failed elements of a what-if). Pure: the
// colour scales and the mapping of plain arrays onto the layout's links.

import type { MessageKey } from "../core/i18n";
import type { MapModel } from "./model";

/**
 * Heatmap stops, low to high: idle blue, busy yellow, congested red. Paul Tol's high-contrast
 * scheme: the three stay apart with every common colour-vision deficiency and in grey.
 */
export const UTILISATION_STOPS: readonly (readonly [number, string])[] = [
  [0, "#004488"],
  [0.5, "#ddaa33"],
  [1, "#bb5566"],
];

function hexToRgb(hex: string): [number, number, number] {
  const value = Number.parseInt(hex.slice(1), 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

function rgbToHex([r, g, b]: readonly number[]): string {
  return `#${[r, g, b].map((c) => Math.round(c as number).toString(16).padStart(2, "0")).join("")}`;
}

/**
 * Thresholds of the banded utilisation scale (fractions 0..1): blue below
 * `warning`, yellow from `warning`, red from `critical`.
 */
export interface UtilisationThresholds {
  readonly warning: number;
  readonly critical: number;
}

export const DEFAULT_THRESHOLDS: UtilisationThresholds = { warning: 0.8, critical: 0.95 };

export type UtilisationBand = "ok" | "warning" | "critical";
export const BAND_COLOURS: Readonly<Record<UtilisationBand, string>> = {
  ok: "#004488",
  warning: "#ddaa33",
  critical: "#bb5566",
};

/** The band of a utilisation under the thresholds; null for an unknown value. */
export function utilisationBand(value: number, thresholds: UtilisationThresholds): UtilisationBand | null {
  if (!Number.isFinite(value)) {
    return null;
  }
  return value >= thresholds.critical ? "critical" : value >= thresholds.warning ? "warning" : "ok";
}

/**
 * Colour of a utilisation 0..1 (clamped); null for an unknown value. With
 * thresholds, the banded scale (green / amber / red); without, the gradient.
 */
export function utilisationColour(value: number, thresholds?: UtilisationThresholds | null): string | null {
  if (!Number.isFinite(value)) {
    return null;
  }
  if (thresholds) {
    return BAND_COLOURS[utilisationBand(value, thresholds) ?? "ok"];
  }
  const v = Math.min(1, Math.max(0, value));
  for (let i = 1; i < UTILISATION_STOPS.length; i += 1) {
    const [high, highColour] = UTILISATION_STOPS[i] as readonly [number, string];
    if (v <= high) {
      const [low, lowColour] = UTILISATION_STOPS[i - 1] as readonly [number, string];
      const t = high === low ? 1 : (v - low) / (high - low);
      const a = hexToRgb(lowColour);
      const b = hexToRgb(highColour);
      return rgbToHex(a.map((channel, k) => channel + (b[k]! - channel) * t));
    }
  }
  return (UTILISATION_STOPS[UTILISATION_STOPS.length - 1] as readonly [number, string])[1];
}

/** Diff / cabling-check classes, most serious first: an aggregate shows the first present. */
export const DIFF_CLASSES = [
  "MISSING",
  "MISWIRED",
  "SWAPPED",
  "DEGRADED",
  "EXTRA",
  "UNKNOWN_DEVICE",
  "CHANGED",
  "AMBIGUOUS",
] as const;
export type DiffClass = (typeof DIFF_CLASSES)[number];

export const DIFF_COLOURS: Readonly<Record<DiffClass, string>> = {
  MISSING: "#dc2626",
  MISWIRED: "#ea580c",
  SWAPPED: "#c026d3",
  DEGRADED: "#ca8a04",
  EXTRA: "#7c3aed",
  UNKNOWN_DEVICE: "#db2777",
  CHANGED: "#2563eb",
  AMBIGUOUS: "#64748b",
};

export const DIFF_LABELS: Readonly<Record<DiffClass, MessageKey>> = {
  MISSING: "map.diff.MISSING",
  MISWIRED: "map.diff.MISWIRED",
  SWAPPED: "map.diff.SWAPPED",
  DEGRADED: "map.diff.DEGRADED",
  EXTRA: "map.diff.EXTRA",
  UNKNOWN_DEVICE: "map.diff.UNKNOWN_DEVICE",
  CHANGED: "map.diff.CHANGED",
  AMBIGUOUS: "map.diff.AMBIGUOUS",
};

/** A mark's rank as stored in Int8Arrays: higher is more serious, -1 is none. */
export function diffRank(kind: string): number {
  const position = (DIFF_CLASSES as readonly string[]).indexOf(kind);
  return position < 0 ? -1 : DIFF_CLASSES.length - 1 - position;
}

export function diffClassOfRank(rank: number): DiffClass | null {
  return rank < 0 ? null : (DIFF_CLASSES[DIFF_CLASSES.length - 1 - rank] ?? null);
}

/** Node marks: a job's ranks ("placed", or "placed:<group>" coloured per group) and failed elements. */
export const NODE_MARKS = ["placed", "failed"] as const;
export type NodeMark = (typeof NODE_MARKS)[number];
export const NODE_MARK_COLOURS: Readonly<Record<NodeMark, string>> = { placed: "#0ea5e9", failed: "#111827" };
export const NODE_MARK_LABELS: Readonly<Record<NodeMark, MessageKey>> = {
  placed: "map.mark.placed",
  failed: "map.mark.failed",
};

/** "placed:<k>" colours, cycled by k: a job's TP groups told apart (none is the failed black). */
export const GROUP_MARK_COLOURS: readonly string[] = [
  "#0ea5e9",
  "#f97316",
  "#a855f7",
  "#22c55e",
  "#e11d48",
  "#eab308",
  "#14b8a6",
  "#6366f1",
  "#84cc16",
  "#ec4899",
  "#0891b2",
  "#b45309",
];
/** Codes 0 and 1 are NODE_MARKS; "placed:<k>" is FIRST_GROUP_MARK + k mod the palette. */
export const FIRST_GROUP_MARK = NODE_MARKS.length;

/** A mark name's code as stored in Int8Arrays, or -1 for a name the map does not know. */
export function nodeMarkCode(mark: string): number {
  const named = (NODE_MARKS as readonly string[]).indexOf(mark);
  if (named >= 0) {
    return named;
  }
  const group = /^placed:(\d+)$/.exec(mark);
  return group === null ? -1 : FIRST_GROUP_MARK + (Number(group[1]) % GROUP_MARK_COLOURS.length);
}

/** Which mark an aggregate shows when its nodes differ: failed, then a group's colour, then plain placed. */
export function nodeMarkPriority(code: number): number {
  return code < 0 ? -1 : code === NODE_MARKS.indexOf("failed") ? 2 : code >= FIRST_GROUP_MARK ? 1 : 0;
}

export function nodeMarkColour(code: number): string {
  if (code >= FIRST_GROUP_MARK) {
    return GROUP_MARK_COLOURS[code - FIRST_GROUP_MARK] ?? NODE_MARK_COLOURS.placed;
  }
  return NODE_MARK_COLOURS[NODE_MARKS[code] ?? "placed"];
}

/** Colour of links marked failed (setLinkMarks): the failed nodes' black. */
export const FAILED_LINK_COLOUR = NODE_MARK_COLOURS.failed;

export interface Overlays {
  /** Per layout link, 0..1 or NaN. */
  utilisation: Float32Array | null;
  /** Per layout link and node, a diff rank or -1. */
  linkDiff: Int8Array | null;
  nodeDiff: Int8Array | null;
  /** Per node: a mark code (nodeMarkCode), or -1. */
  nodeMark: Int8Array | null;
  /** Per layout link: 1 where marked failed. */
  linkMark: Uint8Array | null;
}

export function emptyOverlays(): Overlays {
  return { utilisation: null, linkDiff: null, nodeDiff: null, nodeMark: null, linkMark: null };
}

/** Link indices by unordered node-index pair, for mapping (a, b) lists onto layout links. */
export function linksByPair(model: MapModel): Map<string, number[]> {
  const pairs = new Map<string, number[]>();
  for (let link = 0; link < model.linkCount; link += 1) {
    const a = model.linkA[link] as number;
    const b = model.linkB[link] as number;
    const key = a < b ? `${a} ${b}` : `${b} ${a}`;
    const list = pairs.get(key);
    if (list === undefined) {
      pairs.set(key, [link]);
    } else {
      list.push(link);
    }
  }
  return pairs;
}

function pairKey(model: MapModel, a: string, b: string): string | null {
  const ia = model.indexOfId.get(a);
  const ib = model.indexOfId.get(b);
  if (ia === undefined || ib === undefined) {
    return null;
  }
  return ia < ib ? `${ia} ${ib}` : `${ib} ${ia}`;
}

export interface LinkValues {
  /** Either per layout link (same order as layout.links) … */
  readonly values?: ArrayLike<number>;
  /** … or as node-id pairs: every link between a[i] and b[i] gets value[i]. */
  readonly a?: readonly string[];
  readonly b?: readonly string[];
  readonly value?: ArrayLike<number>;
}

/** Utilisation per layout link from either form; unknown pairs are counted, not thrown. */
export function utilisationArray(
  model: MapModel,
  input: LinkValues,
  pairs: () => Map<string, number[]>,
): { values: Float32Array; unmatched: number } {
  const out = new Float32Array(model.linkCount).fill(Number.NaN);
  let unmatched = 0;
  if (input.values !== undefined) {
    const count = Math.min(model.linkCount, input.values.length);
    for (let i = 0; i < count; i += 1) {
      out[i] = Number(input.values[i]);
    }
    return { values: out, unmatched: Math.max(0, input.values.length - model.linkCount) };
  }
  const { a = [], b = [], value = [] } = input;
  const index = pairs();
  for (let i = 0; i < a.length; i += 1) {
    const key = pairKey(model, a[i] as string, (b[i] ?? "") as string);
    const links = key === null ? undefined : index.get(key);
    if (links === undefined) {
      unmatched += 1;
      continue;
    }
    for (const link of links) {
      out[link] = Number(value[i]);
    }
  }
  return { values: out, unmatched };
}

/** Marks per node from parallel arrays of ids and mark names; the first of equal priority wins, failed beats placed. */
export function nodeMarkArray(model: MapModel, ids: readonly string[], marks: readonly string[]): Int8Array {
  const out = new Int8Array(model.nodeCount).fill(-1);
  ids.forEach((id, i) => {
    const node = model.indexOfId.get(id);
    const mark = nodeMarkCode(marks[i] ?? "");
    if (node !== undefined && nodeMarkPriority(mark) > nodeMarkPriority(out[node] as number)) {
      out[node] = mark;
    }
  });
  return out;
}

/** 1 on the given layout link indices; indices outside the layout are counted, not thrown. */
export function linkMarkArray(model: MapModel, links: readonly number[]): { marks: Uint8Array; unmatched: number } {
  const marks = new Uint8Array(model.linkCount);
  let unmatched = 0;
  for (const link of links) {
    if (Number.isInteger(link) && link >= 0 && link < model.linkCount) {
      marks[link] = 1;
    } else {
      unmatched += 1;
    }
  }
  return { marks, unmatched };
}

export interface DiffFinding {
  readonly class: string;
  readonly end?: { node?: string | null } | null;
  readonly peer?: { node?: string | null } | null;
}

/** Diff findings onto nodes (both ends) and onto the links between the two ends, when drawn. */
export function diffArrays(
  model: MapModel,
  findings: readonly DiffFinding[],
  pairs: () => Map<string, number[]>,
): { linkDiff: Int8Array; nodeDiff: Int8Array; present: Set<DiffClass> } {
  const linkDiff = new Int8Array(model.linkCount).fill(-1);
  const nodeDiff = new Int8Array(model.nodeCount).fill(-1);
  const present = new Set<DiffClass>();
  const index = pairs();
  for (const finding of findings) {
    const rank = diffRank(finding.class);
    if (rank < 0) {
      continue;
    }
    let matched = false;
    const ends = [finding.end?.node, finding.peer?.node].filter((id): id is string => typeof id === "string");
    for (const id of ends) {
      const node = model.indexOfId.get(id);
      if (node !== undefined) {
        matched = true;
        nodeDiff[node] = Math.max(nodeDiff[node] as number, rank);
      }
    }
    if (ends.length === 2) {
      const key = pairKey(model, ends[0] as string, ends[1] as string);
      for (const link of (key === null ? undefined : index.get(key)) ?? []) {
        linkDiff[link] = Math.max(linkDiff[link] as number, rank);
      }
    }
    if (matched) {
      present.add(finding.class as DiffClass);
    }
  }
  return { linkDiff, nodeDiff, present };
}

/** Parses the diff endpoint's answer, keeping only well-formed findings. */
export function parseFindings(value: unknown): DiffFinding[] {
  const findings = (value as { findings?: unknown } | null)?.findings;
  if (!Array.isArray(findings)) {
    return [];
  }
  return findings.filter(
    (finding): finding is DiffFinding =>
      typeof finding === "object" && finding !== null && typeof (finding as { class?: unknown }).class === "string",
  );
}
