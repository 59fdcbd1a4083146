// @vitest-environment happy-dom
// The fixture is report_summary() of a what-if of fat_tree(endpoints=64, radix=16) grown
// 1x, 2x, 4x as one-supernode and rail, allreduce and alltoall at 64 KiB and 4 MiB, knee
// at 5 points (twin/whatif; see docs/whatif.md).
import { describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { translator, type Language } from "../core/i18n";
import { renderRunOutcome } from "./runResult";
import { parseRun, type Run } from "./runState";
import { parseWhatIfResult, referenceSize, stagesByAlternative, whatIfCollectives } from "./whatif";
import { chartTexts, runSnapshot } from "../testing/fakes";
import fixture from "../testing/whatifSummary.fixture.json";

function finished(result: unknown): Run {
  return parseRun(runSnapshot({ kind: "whatif", status: "succeeded", progress: 1, result })) as Run;
}

function context(language: Language = "en") {
  return { doc: document, t: translator(language), numbers: numberFormatters(language === "en" ? "en-US" : "zh-Hans") };
}

describe("what-if result", () => {
  it("reads the stages per design and the knee", () => {
    const result = parseWhatIfResult(fixture);
    expect(result).not.toBeNull();
    expect([...stagesByAlternative(result!).keys()]).toEqual(["one-supernode", "rail"]);
    expect(whatIfCollectives(result!)).toEqual(["allreduce", "alltoall"]);
    expect(referenceSize(result!, "allreduce")).toBe(4194304);
    expect(result!.knee).toMatchObject({ alternative: "one-supernode", factor: 2, cards: 128, metric: "allreduce" });
    expect(parseWhatIfResult({ stages: [{ factor: 1 }], knee: null })).toBeNull();
  });

  it("leads with the knee, its remedy and the report's links, not the raw JSON", () => {
    const outcome = renderRunOutcome(finished(fixture), context());
    expect(outcome.querySelector(".whatif-headline")?.textContent).toMatch(/^At 128 cards \(2x, one-supernode\) allreduce busbw efficiency drops/);
    expect([...outcome.querySelectorAll("dl.kv dt")].map((term) => term.textContent)).toEqual(["Symptom", "Likely cause", "Check", "Fix"]);
    const links = [...outcome.querySelectorAll<HTMLAnchorElement>(".whatif-links a")].map((link) => link.getAttribute("href"));
    expect(links).toEqual(["/runs/12/report/", "/runs/12/report.pdf", "/runs/12/report.csv", "/runs/12/report.json"]);
    expect(outcome.textContent).not.toContain("busbw_GBps");
    expect(outcome.querySelector(".run-download a")?.getAttribute("href")).toBe("/api/runs/12/");
  });

  it("charts busbw against cards per collective, one line per design, the knee marked", () => {
    const outcome = renderRunOutcome(finished(fixture), context());
    const charts = [...outcome.querySelectorAll(".whatif-busbw")];
    expect(charts.map((chart) => chart.querySelector("figcaption")?.textContent)).toEqual([
      "allreduce busbw at 4.19 MB per rank, by cards",
      "alltoall busbw at 4.19 MB per rank, by cards",
    ]);
    const allreduce = chartTexts(charts[0]);
    expect(allreduce).toEqual(expect.arrayContaining(["Cards", "busbw (GB/s)", "one-supernode", "rail", "knee (one-supernode)"]));
    expect(chartTexts(charts[1])).not.toContain("knee (one-supernode)");
  });

  it("tables every stage, the knee's row marked", () => {
    const outcome = renderRunOutcome(finished(fixture), context());
    const rows = [...outcome.querySelectorAll(".whatif-stages tbody tr")];
    expect(rows).toHaveLength(6);
    const first = [...(rows[0]?.querySelectorAll("td") ?? [])].map((cell) => cell.textContent);
    expect(first).toEqual(["one-supernode", "1×", "64", "2", "12", "3", "1,600 GB/s", "58.7 kW", "24.8 GB/s", "37.5 GB/s"]);
    expect(rows.map((row) => row.classList.contains("knee"))).toEqual([false, true, false, false, false, false]);
  });

  it("is translated", () => {
    const outcome = renderRunOutcome(finished({ ...fixture, knee: null }), context("zh-hans"));
    expect(outcome.querySelector(".whatif-headline")?.textContent).toBe("没有拐点：没有任何阶段的效率骤降。");
    expect(outcome.querySelector(".whatif-stages caption")?.textContent).toBe("阶段");
  });
});
