// The leaf-to-leaf traffic view under the replay player, pure parts: a frame's
// `leaf_matrix` decoded to bytes (G x G, row-major, row the sending group), the
// colour ramp from white (nothing) to dark blue (the frame's busiest pair), the
// RGBA pixels (one per cell, one ImageData write per frame), the cell under a
// pointer and short axis labels. No DOM access.

import { frameBytes, type FrameBytes, type LeafMatrixData } from "./frames";
import { EMPTY_RGB, paintCells, type Rgb } from "./thresholds";

export interface LeafMatrix {
  readonly groups: readonly string[];
  /** G x G bytes, row-major: bytes[row * G + col] went from groups[row] to groups[col]; NaN past the bytes sent. */
  readonly bytes: Float64Array;
  /** The busiest pair's bytes (0 when nothing moved). */
  readonly max: number;
}

/** G*G bytes (or their base64) to bytes sent per pair (byte / 255 * scaleBytes); null when not base64. */
export function decodeLeafBytes(source: FrameBytes, groups: number, scaleBytes: number): Float64Array | null {
  const raw = frameBytes(source);
  if (raw === null) {
    return null;
  }
  const cells = groups * groups;
  const out = new Float64Array(cells).fill(Number.NaN);
  const known = Math.min(cells, raw.length);
  for (let i = 0; i < known; i += 1) {
    out[i] = ((raw[i] as number) / 255) * scaleBytes;
  }
  return out;
}

/** The frame's matrix, or null when it has none or its bytes are not base64. */
export function decodeLeafMatrix(data: LeafMatrixData | null): LeafMatrix | null {
  if (data === null) {
    return null;
  }
  const bytes = decodeLeafBytes(data.values, data.groups.length, data.scaleBytes);
  if (bytes === null) {
    return null;
  }
  let max = 0;
  for (const value of bytes) {
    if (value > max) {
      max = value;
    }
  }
  return { groups: data.groups, bytes, max };
}

/** White: no bytes. */
export const RAMP_LOW: Rgb = [255, 255, 255];
/** Dark blue: the frame's busiest pair. */
export const RAMP_HIGH: Rgb = [30, 58, 138];

/** The colour of a share 0..1 of the busiest pair (clamped); the empty colour for NaN. */
export function rampRgb(fraction: number): Rgb {
  if (Number.isNaN(fraction)) {
    return EMPTY_RGB;
  }
  const f = Math.min(1, Math.max(0, fraction));
  return [
    Math.round(RAMP_LOW[0] + (RAMP_HIGH[0] - RAMP_LOW[0]) * f),
    Math.round(RAMP_LOW[1] + (RAMP_HIGH[1] - RAMP_LOW[1]) * f),
    Math.round(RAMP_LOW[2] + (RAMP_HIGH[2] - RAMP_LOW[2]) * f),
  ];
}

/** A pair's bytes as a share of the busiest pair's: 0 when nothing moved, NaN without a value. */
export function shareOfMax(bytes: number, max: number): number {
  if (Number.isNaN(bytes)) {
    return Number.NaN;
  }
  return max > 0 ? bytes / max : 0;
}

/** RGBA pixels of the matrix, one per cell, scaled to the frame's busiest pair. Writes into `pixels` and returns it. */
export function paintLeafMatrix(matrix: LeafMatrix, pixels?: Uint8ClampedArray): Uint8ClampedArray {
  return paintCells(matrix.bytes.length, (cell) => rampRgb(shareOfMax(matrix.bytes[cell] as number, matrix.max)), pixels);
}

export interface LeafCell {
  /** The sending group. */
  readonly row: number;
  /** The receiving group. */
  readonly col: number;
  /** row * G + col. */
  readonly index: number;
}

/**
 * The cell under a point (x, y) of a box `width` x `height` showing G x G
 * cells (CSS pixels from the box's top left), or null outside it.
 */
export function leafCellAt(x: number, y: number, width: number, height: number, groups: number): LeafCell | null {
  if (!(width > 0) || !(height > 0) || groups <= 0 || !(x >= 0) || !(y >= 0) || x >= width || y >= height) {
    return null;
  }
  const col = Math.min(groups - 1, Math.floor((x / width) * groups));
  const row = Math.min(groups - 1, Math.floor((y / height) * groups));
  return { row, col, index: row * groups + col };
}

/** Up to this many groups a side get axis labels; more show their names on hover only. */
export const MAX_LABELLED_GROUPS = 32;

function commonPrefix(names: readonly string[]): string {
  let prefix = names[0] ?? "";
  for (const name of names) {
    while (!name.startsWith(prefix)) {
      prefix = prefix.slice(0, -1);
    }
  }
  // Keep numbers whole: "leaf-01", "leaf-02" share "leaf-", not "leaf-0".
  return prefix.replace(/\d+$/, "");
}

/**
 * Short axis labels: the prefix all names share dropped ("leaf-01" -> "01",
 * "leaf-001…leaf-008" -> "001…008"), at most `maxLength` characters.
 */
export function axisLabels(groups: readonly string[], maxLength = 12): string[] {
  const prefix = groups.length > 1 ? commonPrefix(groups) : "";
  return groups.map((name) => {
    let label = name;
    if (prefix !== "") {
      label = label.split("…").map((part) => (part.startsWith(prefix) && part.length > prefix.length ? part.slice(prefix.length) : part)).join("…");
    }
    return label.length > maxLength ? `${label.slice(0, maxLength - 1)}…` : label;
  });
}
