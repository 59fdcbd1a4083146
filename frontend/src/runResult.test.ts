// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { numberFormatters } from "./format";
import { translator } from "./i18n";
import { renderRunOutcome } from "./runResult";
import { parseRun, type Run } from "./runState";
import { HOP_STATS_RESULT, runSnapshot } from "./testing/fakes";

function finished(overrides: Record<string, unknown>): Run {
  return parseRun(runSnapshot({ status: "succeeded", progress: 1, ...overrides })) as Run;
}

const context = () => ({ doc: document, t: translator("en"), numbers: numberFormatters("en") });

describe("renderRunOutcome", () => {
  it("renders hop statistics as a key/value list and a histogram", () => {
    const outcome = renderRunOutcome(finished({ result: HOP_STATS_RESULT }), context());
    const terms = [...outcome.querySelectorAll("dl.kv dt")].map((term) => term.textContent);
    const values = [...outcome.querySelectorAll("dl.kv dd")].map((value) => value.textContent);
    expect(terms).toEqual(["Cards", "Switches", "Links", "Card pairs", "Mean hops", "Diameter (hops)", "Unreachable pairs"]);
    expect(values).toEqual(["1,024", "48", "2,048", "1,000", "3.30", "5", "50"]);

    const rows = [...outcome.querySelectorAll(".hist .hist-row")];
    expect(rows.map((row) => row.querySelector(".hist-label")?.textContent)).toEqual(["1 hop", "3 hops", "5 hops"]);
    expect(rows.map((row) => row.querySelector(".hist-value")?.textContent)).toEqual([
      "100 (10.0%)",
      "600 (60.0%)",
      "250 (25.0%)",
    ]);
    expect(rows[1]?.querySelector<HTMLElement>(".hist-bar")?.style.width).toBe("100.00%");
  });

  it("shows a failed run's error in an .error element", () => {
    const outcome = renderRunOutcome(finished({ status: "failed", error: "Snapshot 7 has no cards." }), context());
    expect(outcome.className).toBe("error");
    expect(outcome.textContent).toBe("Snapshot 7 has no cards.");
  });

  it("falls back to a key/value view for unknown kinds", () => {
    const outcome = renderRunOutcome(finished({ kind: "what_if", result: { removed: 3, detail: { a: 1 } } }), context());
    expect(outcome.matches("dl.kv")).toBe(true);
    expect(outcome.querySelector("dd")?.textContent).toBe("3");
    expect(outcome.querySelector("dd pre")?.textContent).toBe('{\n  "a": 1\n}');
  });

  it("does not trust a hop_stats result of the wrong shape", () => {
    const outcome = renderRunOutcome(finished({ result: { cards: "many" } }), context());
    expect(outcome.matches("dl.kv")).toBe(true);
  });

  it("never interprets server text as HTML", () => {
    const outcome = renderRunOutcome(finished({ status: "failed", error: "<img src=x onerror=alert(1)>" }), context());
    expect(outcome.querySelector("img")).toBeNull();
  });
});
