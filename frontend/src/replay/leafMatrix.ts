// The leaf-to-leaf traffic view under the replay player, pure parts: a frame's
// `leaf_matrix` decoded to bytes (G x G, row-major, row the sending group), a
// pair's share of the busiest and short axis labels (utilisationCharts.ts
// draws the heatmap). No DOM access.

import { frameBytes, type FrameBytes, type LeafMatrixData } from "./frames";

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

/** A pair's bytes as a share of the busiest pair's: 0 when nothing moved, NaN without a value. */
export function shareOfMax(bytes: number, max: number): number {
  if (Number.isNaN(bytes)) {
    return Number.NaN;
  }
  return max > 0 ? bytes / max : 0;
}

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
