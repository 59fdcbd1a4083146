// The viewer's utilisation thresholds (green below warning, amber from warning,
// red from critical), kept in localStorage and shared by the map's overlay and
// the utilisation views of the replay player and live telemetry. The colour
// mapping itself lives with the map's overlay (map/overlay.ts). No DOM access.

import { DEFAULT_THRESHOLDS, type UtilisationThresholds } from "../map/overlay";

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
