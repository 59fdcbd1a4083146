// The viewer's utilisation thresholds (green below warning, amber from warning,
// red from critical), kept in localStorage and shared by the map's overlay and
// the utilisation views of the replay player and live telemetry. The colour
// mapping itself lives with the map's overlay (map/overlay.ts). No DOM access.

import { BAND_COLOURS, DEFAULT_THRESHOLDS, utilisationBand, type UtilisationThresholds } from "../map/overlay";

export { DEFAULT_THRESHOLDS, type UtilisationThresholds };

export const THRESHOLDS_STORAGE_KEY = "twin.utilisationThresholds";

/** The storage the store keeps its value in; tests pass a Map-backed fake. */
export type ThresholdStorage = Pick<Storage, "getItem" | "setItem">;

/**
 * Thresholds from percentages as typed (0..100): each clamped into 0..100,
 * critical at least warning. Null when either is not a number.
 */
export function thresholdsFromPercent(warning: number, critical: number): UtilisationThresholds | null {
  if (!Number.isFinite(warning) || !Number.isFinite(critical)) {
    return null;
  }
  const w = Math.min(100, Math.max(0, warning)) / 100;
  const c = Math.min(100, Math.max(0, critical)) / 100;
  return { warning: w, critical: Math.max(w, c) };
}

/** A stored value back to thresholds; the defaults for anything else. */
export function parseThresholds(text: string | null): UtilisationThresholds {
  if (text === null) {
    return DEFAULT_THRESHOLDS;
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return DEFAULT_THRESHOLDS;
  }
  const { warning, critical } = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  if (typeof warning !== "number" || typeof critical !== "number") {
    return DEFAULT_THRESHOLDS;
  }
  return thresholdsFromPercent(warning * 100, critical * 100) ?? DEFAULT_THRESHOLDS;
}

/** [r, g, b] of each band, for ImageData writes. */
export type Rgb = readonly [number, number, number];

function rgb(hex: string): Rgb {
  const value = Number.parseInt(hex.slice(1), 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

export const BAND_RGB: Readonly<Record<"ok" | "warning" | "critical", Rgb>> = {
  ok: rgb(BAND_COLOURS.ok),
  warning: rgb(BAND_COLOURS.warning),
  critical: rgb(BAND_COLOURS.critical),
};
/** Cells without a value (no such port, an undecodable byte). */
export const EMPTY_RGB: Rgb = [226, 232, 240];

/** RGBA pixels, one opaque cell per `count`, coloured by `colourOf(cell)`: the one pixel writer of
 * the canvas views. Writes into `pixels` (4 bytes a cell) and returns it. */
export function paintCells(count: number, colourOf: (cell: number) => Rgb, pixels: Uint8ClampedArray = new Uint8ClampedArray(count * 4)): Uint8ClampedArray {
  for (let cell = 0; cell < count; cell += 1) {
    const colour = colourOf(cell);
    const at = cell * 4;
    pixels[at] = colour[0];
    pixels[at + 1] = colour[1];
    pixels[at + 2] = colour[2];
    pixels[at + 3] = 255;
  }
  return pixels;
}

/** The band colour of a value as RGB; EMPTY_RGB for NaN. */
export function thresholdRgb(value: number, thresholds: UtilisationThresholds): Rgb {
  const band = utilisationBand(value, thresholds);
  return band === null ? EMPTY_RGB : BAND_RGB[band];
}

export interface ThresholdStore {
  get(): UtilisationThresholds;
  /** Sets, stores and tells every listener (only when the value changed). */
  set(thresholds: UtilisationThresholds): void;
  /** Calls `listener` on every change; returns the unsubscribe. */
  subscribe(listener: (thresholds: UtilisationThresholds) => void): () => void;
}

/** The page's one threshold store; storage that throws (private mode, quota) only loses persistence. */
export function thresholdStore(storage: ThresholdStorage | null): ThresholdStore {
  let current = DEFAULT_THRESHOLDS;
  try {
    current = parseThresholds(storage?.getItem(THRESHOLDS_STORAGE_KEY) ?? null);
  } catch {
    // keep the defaults
  }
  const listeners = new Set<(thresholds: UtilisationThresholds) => void>();
  return {
    get: () => current,
    set(thresholds) {
      if (thresholds.warning === current.warning && thresholds.critical === current.critical) {
        return;
      }
      current = { warning: thresholds.warning, critical: thresholds.critical };
      try {
        storage?.setItem(THRESHOLDS_STORAGE_KEY, JSON.stringify(current));
      } catch {
        // not persisted
      }
      for (const listener of [...listeners]) {
        listener(current);
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

/** Keeps a map's banded colours on the store's thresholds; returns the unsubscribe. */
export function bindMapThresholds(
  store: ThresholdStore,
  map: { setUtilisationThresholds?: ((thresholds: UtilisationThresholds | null) => void) | undefined } | null,
): () => void {
  const apply = map?.setUtilisationThresholds?.bind(map);
  if (apply === undefined) {
    return () => undefined;
  }
  apply(store.get());
  return store.subscribe((thresholds) => apply(thresholds));
}
