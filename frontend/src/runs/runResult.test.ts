// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { translator } from "../core/i18n";
import { HIGHLIGHT_COLOUR } from "../charts/palette";
import { renderRunOutcome } from "./runResult";
import { parseRun, type Run } from "./runState";
import { COLLECTIVE_RESULT, HOP_STATS_RESULT, chartTexts, runSnapshot } from "../testing/fakes";

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

    const chart = outcome.querySelector(".hop-histogram");
    expect(chart?.querySelector("figcaption")?.textContent).toBe("Card pairs by hop count");
    const labels = chartTexts(chart);
    // Hop counts along a named axis; 100 to 600 pairs is under a decade: a linear axis from 0.
    expect(labels).toEqual(expect.arrayContaining(["1", "3", "5", "Hops (switches crossed)", "Card pairs", "0", "600"]));
    expect(chart?.querySelectorAll("svg path").length).toBeGreaterThan(3);
  });

  it("shows a failed run's error in an .error element", () => {
    const outcome = renderRunOutcome(finished({ status: "failed", error: "Snapshot 7 has no cards." }), context());
    expect(outcome.className).toBe("error");
    expect(outcome.textContent).toBe("Snapshot 7 has no cards.");
  });

  it("offers a result of a kind it does not know for download instead of dumping it", () => {
    const outcome = renderRunOutcome(finished({ kind: "what_if", result: { removed: 3, detail: { a: 1 } } }), context());
    expect(outcome.matches(".run-unknown")).toBe(true);
    expect(outcome.textContent).not.toContain("removed");
    const link = outcome.querySelector<HTMLAnchorElement>(".run-download a");
    expect(link?.getAttribute("href")).toBe("/api/runs/12/");
    expect(link?.getAttribute("download")).toBe("run-12.json");
    expect(link?.textContent).toBe("Download the result (JSON)");
  });

  it("does not trust a hop_stats result of the wrong shape", () => {
    const outcome = renderRunOutcome(finished({ result: { cards: "many" } }), context());
    expect(outcome.matches(".run-unknown")).toBe(true);
  });

  it("puts the download link under every result view", () => {
    const outcome = renderRunOutcome(finished({ result: HOP_STATS_RESULT }), context(), "/api/runs/5/");
    expect(outcome.lastElementChild?.matches(".run-download")).toBe(true);
    expect(outcome.querySelector(".run-download a")?.getAttribute("href")).toBe("/api/runs/5/");
  });

  it("shows a cancelled run's note, not an error", () => {
    const outcome = renderRunOutcome(finished({ status: "cancelled", error: "Cancelled by a user." }), context());
    expect(outcome.className).toBe("muted run-cancelled");
    expect(outcome.textContent).toBe("Cancelled by a user.");
    expect(renderRunOutcome(finished({ status: "cancelled" }), context()).textContent).toBe("The run was cancelled.");
  });

  it("shows the reason in the page's language from a frame that has it in every language", () => {
    const errors = { en: "Cancelled by alice.", "zh-hans": "已被 alice 取消。" };
    document.documentElement.lang = "zh-hans";
    try {
      expect(renderRunOutcome(finished({ status: "cancelled", error: "Cancelled by alice.", errors }), context()).textContent).toBe("已被 alice 取消。");
      expect(renderRunOutcome(finished({ status: "failed", error: "Snapshot 7 has no cards." }), context()).textContent).toBe("Snapshot 7 has no cards.");
    } finally {
      document.documentElement.lang = "";
    }
    expect(renderRunOutcome(finished({ status: "cancelled", error: "已被 alice 取消。", errors }), context()).textContent).toBe("Cancelled by alice.");
  });

  it("never interprets server text as HTML", () => {
    const outcome = renderRunOutcome(finished({ status: "failed", error: "<img src=x onerror=alert(1)>" }), context());
    expect(outcome.querySelector("img")).toBeNull();
  });
});

describe("renderRunOutcome for collectives", () => {
  const collective = (result: unknown, language: "en" | "zh-hans" = "en") =>
    renderRunOutcome(finished({ kind: "collective", result }), {
      doc: document,
      t: translator(language),
      numbers: numberFormatters(language === "en" ? "en" : "zh-Hans"),
    });

  it("leads with the algorithm and its protocol, time, bandwidths and bound", () => {
    const outcome = collective(COLLECTIVE_RESULT);
    expect(outcome.className).toBe("collective");
    expect(outcome.querySelector(".coll-headline")?.textContent).toBe(
      "in_switch (Simple): 8.05 ms, algbw 42.5 GB/s, busbw 84.9 GB/s, bandwidth-bound",
    );
    expect(outcome.querySelector(".coll-subject")?.textContent).toBe("allreduce of 342 MB on 1,024 ranks");
    const values = [...outcome.querySelectorAll("dl.kv dd")].map((value) => value.textContent);
    expect(values).toEqual(["12.0 µs", "8.03 ms", "85.0%"]);
  });

  it("says what limits it and why the algorithm was chosen", () => {
    const outcome = collective(COLLECTIVE_RESULT);
    expect(outcome.querySelector(".coll-bottleneck")?.textContent).toBe(
      "Bottleneck: card-leaf (scale-up) links at 85.0% utilisation.",
    );
    const compared = Object.keys(COLLECTIVE_RESULT.choice.candidates).length;
    expect(outcome.querySelector(".coll-reason")?.textContent).toBe(
      `auto compared ${compared} algorithms: ${COLLECTIVE_RESULT.algorithm} (${COLLECTIVE_RESULT.protocol}) is the fastest at this size.`,
    );
  });

  it("charts the candidates fastest first, highlighting the fastest, and lists the skipped ones", () => {
    const outcome = collective(COLLECTIVE_RESULT);
    const chart = outcome.querySelector(".coll-candidates");
    const labels = chartTexts(chart);
    const algorithms = labels.filter((label) => ["in_switch", "ring", "two_shot"].includes(label));
    expect(algorithms).toEqual(["in_switch", "ring", "two_shot"]);
    // Times read with their unit on the axis, never "7.46e+03 ms".
    expect(labels).toEqual(expect.arrayContaining(["Algorithm", "Time"]));
    expect(labels.some((label) => / ms$/.test(label))).toBe(true);
    expect(labels.join(" ")).not.toMatch(/e[+-]\d/);
    // The fastest bar is the one in the highlight colour.
    expect(chart?.innerHTML.toLowerCase()).toContain(HIGHLIGHT_COLOUR.toLowerCase());
    expect(outcome.querySelector(".coll-skipped h4")?.textContent).toBe("Not applicable");
    expect(outcome.querySelector(".coll-skipped li")?.textContent).toBe(
      "one_shot: one_shot writes directly to peers: only inside a scale-up domain",
    );
  });

  it("tables the hottest links by the names people know their ends by (ids where a result has none)", () => {
    const table = collective(COLLECTIVE_RESULT).querySelector("table.data.coll-links");
    expect(table?.querySelector("caption")?.textContent).toBe("Hottest links");
    expect([...(table?.querySelectorAll("th") ?? [])].map((cell) => cell.textContent)).toEqual([
      "From",
      "To",
      "Class",
      "Utilisation",
      "Bytes",
    ]);
    const rows = [...(table?.querySelectorAll("tbody tr") ?? [])].map((row) =>
      [...row.querySelectorAll("td")].map((cell) => cell.textContent),
    );
    expect(rows).toEqual([
      ["node01/mlx5_0", "leaf01", "card-leaf (scale-up)", "85.0%", "684 MB"],
      ["leaf-0", "spine-1", "leaf-spine (scale-out)", "42.1%", "1.20 GB"],
    ]);
  });

  it("omits the choice for a fixed algorithm and words a missing bottleneck", () => {
    const { choice: _choice, ...fixed } = COLLECTIVE_RESULT;
    const outcome = collective({
      ...fixed,
      algorithm: "ring",
      protocol: "LL",
      bound: "latency",
      bottleneck: { link_class: null, domain: null, bound: "latency", utilization: 0 },
      hottest_links: [],
    });
    expect(outcome.querySelector(".coll-headline")?.textContent).toContain("ring (LL): 8.05 ms");
    expect(outcome.querySelector(".coll-headline")?.textContent).toContain("latency-bound");
    expect(outcome.querySelector(".coll-bottleneck")?.textContent).toBe("No link limits this collective.");
    expect(outcome.querySelector(".coll-reason, .coll-candidates, .coll-skipped, table")).toBeNull();
  });

  it("is translated", () => {
    const outcome = collective(COLLECTIVE_RESULT, "zh-hans");
    expect(outcome.querySelector(".coll-headline")?.textContent).toBe(
      "in_switch (Simple)：8.05 毫秒，algbw 42.5 GB/s，busbw 84.9 GB/s，受带宽限制",
    );
    expect(outcome.querySelector(".coll-links caption")?.textContent).toBe("最繁忙的链路");
  });

  it("falls back to the generic view for a result of the wrong shape", () => {
    expect(collective({ collective: "allreduce" }).matches(".run-unknown")).toBe(true);
  });
});
