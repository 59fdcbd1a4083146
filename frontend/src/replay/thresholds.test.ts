import { describe, expect, it } from "vitest";
import { BAND_COLOURS, utilisationBand, utilisationColour } from "../map/overlay";
import {
  DEFAULT_THRESHOLDS,
  THRESHOLDS_STORAGE_KEY,
  bindMapThresholds,
  parseThresholds,
  thresholdStore,
  thresholdsFromPercent,
  type ThresholdStorage,
} from "./thresholds";

function memoryStorage(initial: Record<string, string> = {}): ThresholdStorage & { items: Map<string, string> } {
  const items = new Map(Object.entries(initial));
  return { items, getItem: (key) => items.get(key) ?? null, setItem: (key, value) => void items.set(key, value) };
}

describe("utilisation thresholds", () => {
  it("bands values: green below warning, amber from warning, red from critical", () => {
    const th = DEFAULT_THRESHOLDS;
    expect(th).toEqual({ warning: 0.8, critical: 0.95 });
    expect(utilisationBand(0, th)).toBe("ok");
    expect(utilisationBand(0.7999, th)).toBe("ok");
    expect(utilisationBand(0.8, th)).toBe("warning");
    expect(utilisationBand(0.9499, th)).toBe("warning");
    expect(utilisationBand(0.95, th)).toBe("critical");
    expect(utilisationBand(1.5, th)).toBe("critical");
    expect(utilisationBand(Number.NaN, th)).toBeNull();
    expect(utilisationColour(0.9, th)).toBe(BAND_COLOURS.warning);
    expect(utilisationColour(0.96, th)).toBe(BAND_COLOURS.critical);
    expect(utilisationColour(Number.NaN, th)).toBeNull();
    // Without thresholds the map keeps its gradient.
    expect(utilisationColour(0)).toBe("#004488");
    expect(utilisationColour(1)).toBe("#bb5566");
  });

  it("reads percentages as typed: clamped, critical at least warning", () => {
    expect(thresholdsFromPercent(70, 90)).toEqual({ warning: 0.7, critical: 0.9 });
    expect(thresholdsFromPercent(-5, 150)).toEqual({ warning: 0, critical: 1 });
    expect(thresholdsFromPercent(90, 50)).toEqual({ warning: 0.9, critical: 0.9 });
    expect(thresholdsFromPercent(Number.NaN, 50)).toBeNull();
  });

  it("parses stored values, falling back to the defaults", () => {
    expect(parseThresholds(null)).toBe(DEFAULT_THRESHOLDS);
    expect(parseThresholds("not json")).toBe(DEFAULT_THRESHOLDS);
    expect(parseThresholds('{"warning": "x"}')).toBe(DEFAULT_THRESHOLDS);
    expect(parseThresholds('{"warning": 0.5, "critical": 0.75}')).toEqual({ warning: 0.5, critical: 0.75 });
  });

  it("keeps the viewer's choice in storage and tells listeners once per change", () => {
    const storage = memoryStorage({ [THRESHOLDS_STORAGE_KEY]: '{"warning": 0.6, "critical": 0.9}' });
    const store = thresholdStore(storage);
    expect(store.get()).toEqual({ warning: 0.6, critical: 0.9 });
    const heard: number[] = [];
    const unsubscribe = store.subscribe((th) => heard.push(th.warning));
    store.set({ warning: 0.7, critical: 0.9 });
    store.set({ warning: 0.7, critical: 0.9 });
    expect(heard).toEqual([0.7]);
    expect(JSON.parse(storage.items.get(THRESHOLDS_STORAGE_KEY) ?? "")).toEqual({ warning: 0.7, critical: 0.9 });
    unsubscribe();
    store.set({ warning: 0.5, critical: 0.9 });
    expect(heard).toEqual([0.7]);
    expect(thresholdStore(storage).get()).toEqual({ warning: 0.5, critical: 0.9 });
  });

  it("survives storage that throws and a missing storage", () => {
    const broken: ThresholdStorage = {
      getItem: () => {
        throw new Error("denied");
      },
      setItem: () => {
        throw new Error("quota");
      },
    };
    const store = thresholdStore(broken);
    expect(store.get()).toBe(DEFAULT_THRESHOLDS);
    store.set({ warning: 0.5, critical: 0.6 });
    expect(store.get()).toEqual({ warning: 0.5, critical: 0.6 });
    expect(thresholdStore(null).get()).toBe(DEFAULT_THRESHOLDS);
  });

  it("keeps a map on the store's thresholds", () => {
    const store = thresholdStore(null);
    const applied: unknown[] = [];
    const stop = bindMapThresholds(store, { setUtilisationThresholds: (th) => applied.push(th) });
    store.set({ warning: 0.5, critical: 0.9 });
    stop();
    store.set({ warning: 0.6, critical: 0.9 });
    expect(applied).toEqual([DEFAULT_THRESHOLDS, { warning: 0.5, critical: 0.9 }]);
    expect(() => bindMapThresholds(store, {})()).not.toThrow();
    expect(() => bindMapThresholds(store, null)()).not.toThrow();
  });
});
