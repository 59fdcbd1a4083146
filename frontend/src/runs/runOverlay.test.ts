// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { HttpError } from "../core/http";
import { translator } from "../core/i18n";
import type { LinkValues } from "../map/overlay";
import type { UtilisationMap } from "../map/overlaySlot";
import { runOverlay } from "./runOverlay";
import { parseRun, type Run } from "./runState";
import { ScriptedApi, runSnapshot, settle } from "../testing/fakes";

/** Records what the overlay asks of the map. */
class FakeMap implements UtilisationMap {
  readonly calls: (["set", number[]] | ["clear", string])[] = [];

  setLinkUtilisation(input: LinkValues): { unmatched: number } {
    this.calls.push(["set", Array.from(input.values ?? [])]);
    return { unmatched: 0 };
  }

  clearOverlay(name: "utilisation" | "marks" | "diff"): void {
    this.calls.push(["clear", name]);
  }
}

function run(overrides: Record<string, unknown> = {}): Run {
  return parseRun(runSnapshot({ id: 21, kind: "collective", status: "succeeded", progress: 1, ...overrides })) as Run;
}

function page(map: FakeMap | null = new FakeMap()) {
  document.body.innerHTML = `<section><div id="fabric-map"></div></section>`;
  const api = new ScriptedApi();
  const overlay = runOverlay({ doc: document, t: translator("en"), http: api, map: () => Promise.resolve(map) });
  const note = () => document.getElementById("map-overlay-note");
  return { api, overlay, map, note };
}

beforeEach(() => {
  document.body.innerHTML = "";
});

describe("runOverlay", () => {
  it("draws a succeeded collective run's link utilisation, with a note next to the map", async () => {
    const { api, overlay, map, note } = page();
    api.getAnswers.set("/api/runs/21/detail/", Promise.resolve({ link_bytes: [1, 2, 3], link_utilization: [0.1, 0.9, null] }));
    overlay.offer(run(), "/api/runs/21/");
    await settle();
    expect(api.gets).toEqual(["/api/runs/21/detail/"]);
    expect(map?.calls).toEqual([["set", [0.1, 0.9, Number.NaN]]]);
    expect(note()?.previousElementSibling?.id).toBe("fabric-map");
    expect(note()?.hidden).toBe(false);
    expect(note()?.textContent).toBe("Showing link utilisation of run #21 — Clear");
    expect(note()?.querySelector("button")?.textContent).toBe("Clear");
  });

  it("clears the overlay and hides the note", async () => {
    const { api, overlay, map, note } = page();
    api.getAnswer = Promise.resolve({ link_utilization: [0.5] });
    overlay.offer(run(), "/api/runs/21/");
    await settle();
    note()?.querySelector("button")?.click();
    expect(map?.calls.at(-1)).toEqual(["clear", "utilisation"]);
    expect(note()?.hidden).toBe(true);
  });

  it("ignores other kinds, unfinished runs and runs already shown", async () => {
    const { api, overlay } = page();
    api.getAnswer = Promise.resolve({ link_utilization: [0.5] });
    overlay.offer(run({ kind: "hop_stats" }), "/api/runs/21/");
    overlay.offer(run({ status: "running" }), "/api/runs/21/");
    overlay.offer(run({ status: "failed" }), "/api/runs/21/");
    overlay.offer(run({ status: "cancelled" }), "/api/runs/21/");
    await settle();
    expect(api.gets).toEqual([]);
    overlay.offer(run(), "/api/runs/21/");
    overlay.offer(run(), "/api/runs/21/");
    await settle();
    expect(api.gets).toEqual(["/api/runs/21/detail/"]);
  });

  it("lets a newer run replace the overlay, even when the older answer arrives last", async () => {
    const { api, overlay, map, note } = page();
    let answerOld: (value: unknown) => void = () => undefined;
    api.getAnswers.set("/api/runs/21/detail/", new Promise((resolve) => (answerOld = resolve)));
    api.getAnswers.set("/api/runs/22/detail/", Promise.resolve({ link_utilization: [0.2, 0.4] }));
    overlay.offer(run(), "/api/runs/21/");
    overlay.offer(run({ id: 22 }), "/api/runs/22/");
    await settle();
    answerOld({ link_utilization: [1, 1] });
    await settle();
    expect(map?.calls).toEqual([["set", [0.2, 0.4]]]);
    expect(note()?.textContent).toContain("run #22");
  });

  it("does not redraw a run whose answer arrives after Clear", async () => {
    const { api, overlay, map, note } = page();
    let answer: (value: unknown) => void = () => undefined;
    api.getAnswer = new Promise((resolve) => (answer = resolve));
    overlay.offer(run(), "/api/runs/21/");
    await settle();
    overlay.clear();
    answer({ link_utilization: [1] });
    await settle();
    expect(map?.calls).toEqual([]);
    expect(note()).toBeNull();
  });

  it("says why when the detail cannot be loaded or has no per-link data", async () => {
    const { api, overlay, map, note } = page();
    api.getAnswers.set("/api/runs/21/detail/", Promise.reject(new HttpError(404, "Not found.")));
    overlay.offer(run(), "/api/runs/21/");
    await settle();
    expect(note()?.textContent).toBe("Could not load the link utilisation of run #21: Not found.");
    expect(note()?.classList.contains("error-text")).toBe(true);

    api.getAnswers.set("/api/runs/22/detail/", Promise.resolve({}));
    overlay.offer(run({ id: 22 }), "/api/runs/22/");
    await settle();
    expect(note()?.textContent).toBe("Run #22 has no per-link data to show.");
    expect(map?.calls).toEqual([]);
  });

  it("does nothing without a map", async () => {
    const { api, overlay, note } = page(null);
    overlay.offer(run(), "/api/runs/21/");
    await settle();
    expect(api.gets).toEqual([]);
    expect(note()).toBeNull();
  });
});
