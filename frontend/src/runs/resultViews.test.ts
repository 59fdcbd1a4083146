// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { translator, type Language } from "../core/i18n";
import type { RunMapMarks } from "./runMarks";
import type { RenderContext } from "./resultDom";
import { renderRunOutcome } from "./runResult";
import { parseRun, type Run } from "./runState";
import { FAILURES_RESULT, PLACEMENT_RESULT, REPLAY_SUMMARY, failureOutcome, runSnapshot, settle } from "../testing/fakes";

function finished(kind: string, result: unknown): Run {
  return parseRun(runSnapshot({ id: 12, kind, status: "succeeded", progress: 1, result })) as Run;
}

function context(language: Language = "en", marks?: RunMapMarks): RenderContext {
  return { doc: document, t: translator(language), numbers: numberFormatters(language === "en" ? "en" : "zh-Hans"), marks };
}

const cells = (table: Element | null | undefined) =>
  [...(table?.querySelectorAll("tbody tr") ?? [])].map((row) => [...row.querySelectorAll("td")].map((cell) => cell.textContent));
const headers = (table: Element | null | undefined) => [...(table?.querySelectorAll("th") ?? [])].map((cell) => cell.textContent);

/** Records what the buttons ask for. */
class FakeMarks implements RunMapMarks {
  readonly calls: unknown[] = [];
  showPlacement(runUrl: string, strategy: string): Promise<string> {
    this.calls.push(["placement", runUrl, strategy]);
    return Promise.resolve(`placed ${strategy}`);
  }
  showFailure(elements: readonly string[]): Promise<string> {
    this.calls.push(["failure", elements]);
    return Promise.resolve(`failed ${elements.join("+")}`);
  }
  clear(): void {
    this.calls.push(["clear"]);
  }
}

describe("replay result", () => {
  it("says what was replayed, how long it took and how well the cost cache did", () => {
    const outcome = renderRunOutcome(finished("replay", REPLAY_SUMMARY), context());
    expect(outcome.className).toBe("replay-summary");
    expect(outcome.querySelector(".replay-headline")?.textContent).toBe("step-175B on sn-1024: 24,592 events in 421 ms of simulated time.");
    const terms = [...outcome.querySelectorAll("dl.kv dt")].map((term) => term.textContent);
    const values = [...outcome.querySelectorAll("dl.kv dd")].map((value) => value.textContent);
    expect(terms).toEqual(["Simulated time", "Events", "Slowed by congestion", "Distinct operations", "Cost cache hit rate"]);
    expect(values).toEqual(["421 ms", "24,592 (24,000 collectives, 592 flows)", "1,230 (5.0%)", "6,464", "94.7%"]);
  });

  it("names the peak congestion with its time and link", () => {
    const outcome = renderRunOutcome(finished("replay", REPLAY_SUMMARY), context());
    expect(outcome.querySelector(".replay-peak")?.textContent).toBe(
      "Peak congestion 155.5% at t = 205 ms on spine-04 → leaf-29 (leaf-spine (scale-up)).",
    );
    const idle = renderRunOutcome(
      finished("replay", { ...REPLAY_SUMMARY, peak_congestion: { congestion: 0, t_s: 0, link: null, from: null, to: null, class: null } }),
      context(),
    );
    expect(idle.querySelector(".replay-peak")?.textContent).toBe("No link was congested.");
  });

  it("tables operations, the busiest links and the utilisation per class", () => {
    const outcome = renderRunOutcome(finished("replay", REPLAY_SUMMARY), context());
    expect(cells(outcome.querySelector("table.replay-operations"))).toEqual([
      ["allreduce", "24,000", "3.20 TB", "813 s", "650 s", "1.25×", "ring × 20,000, in_switch × 4,000"],
      ["flow", "592", "4.10 GB", "1.20 s", "1.20 s", "1.00×", "flow × 592"],
    ]);
    expect(cells(outcome.querySelector("table.replay-busiest"))).toEqual([["spine-04", "leaf-29", "leaf-spine (scale-up)", "880 GB", "93.0%"]]);
    const classes = outcome.querySelector("table.replay-classes");
    expect(headers(classes)).toEqual(["Class", "Links", "Bytes", "Mean utilisation", "Max utilisation"]);
    expect(cells(classes)).toEqual([
      ["leaf-spine (scale-up)", "1,024", "2.20 TB", "62.0%", "93.0%"],
      ["card-leaf (scale-up)", "1,024", "1.10 TB", "41.0%", "80.0%"],
    ]);
  });

  it("is translated, and falls back to the generic view for another shape", () => {
    const outcome = renderRunOutcome(finished("replay", REPLAY_SUMMARY), context("zh-hans"));
    expect(outcome.querySelector(".replay-headline")?.textContent).toBe("step-175B 在 sn-1024 上：24,592 个事件，模拟时间 421 毫秒。");
    expect(renderRunOutcome(finished("replay", { frames: 3 }), context()).matches(".run-unknown")).toBe(true);
  });
});

describe("placement result", () => {
  it("lists each strategy's warnings in the page's language", () => {
    const aware = { ...PLACEMENT_RESULT.results.aware, warnings_by_language: { en: ["2 TP groups span two leaves"], "zh-hans": ["2 个 TP 组跨越两台叶交换机"] } };
    const result = { ...PLACEMENT_RESULT, results: { ...PLACEMENT_RESULT.results, aware } };
    const warnings = (outcome: HTMLElement) => [...outcome.querySelectorAll(".placement-warnings li")].map((item) => item.textContent);
    expect(warnings(renderRunOutcome(finished("placement", result), context()))).toEqual(["aware: 2 TP groups span two leaves"]);
    document.documentElement.lang = "zh-hans";
    try {
      expect(warnings(renderRunOutcome(finished("placement", result), context("zh-hans")))).toEqual(["aware: 2 个 TP 组跨越两台叶交换机"]);
    } finally {
      document.documentElement.lang = "";
    }
  });

  it("leads with the best strategy and how much faster it is", () => {
    const outcome = renderRunOutcome(finished("placement", PLACEMENT_RESULT), context());
    expect(outcome.querySelector(".placement-headline")?.textContent).toBe(
      "Best: aware, 30.0 ms of communication per training step (3.00× faster than random).",
    );
    expect(outcome.querySelector(".placement-job")?.textContent).toBe("TP 8 × PP 2 × DP 4, EP 1: 64 ranks");
  });

  it("compares the strategies per dimension, best highlighted, with their downloads", () => {
    const outcome = renderRunOutcome(finished("placement", PLACEMENT_RESULT), context());
    const table = outcome.querySelector("table.placement-compare");
    expect(headers(table)).toEqual(["Strategy", "TP", "PP", "DP", "Total", "Download"]);
    expect(cells(table)).toEqual([
      ["aware best", "10.0 ms", "5.00 ms", "15.0 ms", "30.0 ms", "CSV · Hostlist · Hostfile"],
      ["naive", "20.0 ms", "10.0 ms", "20.0 ms", "50.0 ms", "CSV · Hostlist · Hostfile"],
      ["random", "60.0 ms", "10.0 ms", "20.0 ms", "90.0 ms", "CSV · Hostlist · Hostfile"],
    ]);
    expect([...(table?.querySelectorAll("tbody tr") ?? [])].map((row) => row.className)).toEqual(["best", "", ""]);
    expect([...(table?.querySelectorAll("tbody tr:nth-child(2) a") ?? [])].map((link) => link.getAttribute("href"))).toEqual([
      "/api/runs/12/placement/?strategy=naive&format=csv",
      "/api/runs/12/placement/?strategy=naive&format=hostlist",
      "/api/runs/12/placement/?strategy=naive&format=hostfile",
    ]);
    expect(outcome.querySelector(".placement-warnings")?.textContent).toBe("aware: 2 TP groups span two leaves");
    expect(outcome.querySelector("button")).toBeNull(); // no map on the page
  });

  it("details the best placement's dimensions and bottleneck links", () => {
    const outcome = renderRunOutcome(finished("placement", PLACEMENT_RESULT), context());
    const dimensions = outcome.querySelector("table.placement-dimensions");
    expect(dimensions?.querySelector("caption")?.textContent).toBe("Parallel dimensions of the aware placement");
    expect(cells(dimensions)[0]).toEqual(["TP", "allreduce (ring)", "8 × 8", "10.0 ms", "181 GB/s", "1.3 / 3", "no", "card-0 → leaf-0 at 91.0%"]);
    expect(cells(dimensions)[2]?.[6]).toBe("no");
    expect(cells(outcome.querySelector("table.placement-bottlenecks"))).toEqual([["card-0", "leaf-0", "card-leaf (scale-up)", "2.00 GB", "91.0%"]]);
  });

  it("offers Show on map per strategy when the page has a map", async () => {
    const marks = new FakeMarks();
    const outcome = renderRunOutcome(finished("placement", PLACEMENT_RESULT), context("en", marks), "/api/runs/12/");
    document.body.replaceChildren(outcome);
    const buttons = [...outcome.querySelectorAll<HTMLButtonElement>("table.placement-compare button.show-on-map")];
    expect(buttons.map((button) => button.getAttribute("aria-label"))).toEqual([
      "Show the aware placement on the map",
      "Show the naive placement on the map",
      "Show the random placement on the map",
    ]);
    buttons[1]?.click();
    await settle();
    expect(marks.calls).toEqual([["placement", "/api/runs/12/", "naive"]]);
    const status = outcome.querySelector<HTMLElement>(".marks-status");
    expect(status?.textContent).toBe("placed naive");
    expect(status?.hidden).toBe(false);
  });

  it("is translated", () => {
    const outcome = renderRunOutcome(finished("placement", PLACEMENT_RESULT), context("zh-hans"));
    expect(outcome.querySelector(".placement-headline")?.textContent).toBe("最佳：aware，每个训练步的通信时间为 30.0 毫秒（比 random 快 3.00×）。");
  });
});

describe("failures result", () => {
  it("says what was evaluated and explains the worst failure", () => {
    const outcome = renderRunOutcome(finished("failures", FAILURES_RESULT), context());
    expect(outcome.querySelector(".failures-subject")?.textContent).toBe(
      "16 single leaf switch failures evaluated against allreduce of 1.07 GB (ring) on every card.",
    );
    expect(outcome.querySelector(".failures-worst")?.textContent).toBe(
      "Worst: failing leaf-03 cuts off 8 cards, sends 120 card pairs over more switches, makes the allreduce take 1.52× as long (bus bandwidth 0.66×), runs it without 8 ranks.",
    );
    expect(outcome.querySelector(".failures-blast")?.textContent).toBe("leaf-03 serves 8 cards; 8 of them are cut off.");
  });

  it("says what each Slurm block loses", () => {
    const worst = failureOutcome(["leaf-01"], { blast_radius_by_block: { "su1-b1": { cards: 64, cards_cut_off: 8 } } });
    const outcome = renderRunOutcome(finished("failures", { ...FAILURES_RESULT, worst }), context());
    expect([...outcome.querySelectorAll(".failures-blast li")].map((item) => item.textContent)).toEqual([
      "leaf-01 serves 8 cards; 8 of them are cut off.",
      "Slurm block su1-b1 loses 8 of its 64 cards.",
    ]);
  });

  it("ranks the failures and tables the links by impact", () => {
    const outcome = renderRunOutcome(finished("failures", FAILURES_RESULT), context());
    const ranking = outcome.querySelector("table.failures-ranking");
    expect(headers(ranking)).toEqual(["#", "Failed", "Links down", "Cards cut off", "Degraded pairs", "Time change", "Bus bandwidth change"]);
    expect(cells(ranking)).toEqual([
      ["1", "leaf-03", "9", "8", "120", "1.52×", "0.66×"],
      ["2", "link:12", "1", "0", "7", "1.10×", "0.91×"],
    ]);
    expect(ranking?.querySelector("tbody tr")?.className).toBe("worst");
    const impact = outcome.querySelector("table.failures-impact");
    expect(headers(impact)).toEqual(["From", "To", "Bytes", "Cards affected"]);
    expect(cells(impact)).toEqual([["leaf-03", "spine-00", "4.00 GB", "64"]]);
  });

  it("words a workload that cannot run any more and a failure that costs nothing", () => {
    const broken = failureOutcome(["spine-1"], {
      cards_cut_off_count: 0,
      degraded_pairs: 0,
      blast_radius: {},
      workload: { before: { time_s: 1, busbw_GBps: 1 }, after: null, time_change: null, busbw_change: null, ranks_lost: 0 },
    });
    const harmless = failureOutcome(["spine-2"], {
      cards_cut_off_count: 0,
      degraded_pairs: 0,
      workload: { before: { time_s: 1, busbw_GBps: 1 }, after: { time_s: 1, busbw_GBps: 1 }, time_change: 1, busbw_change: 1, ranks_lost: 0 },
    });
    const outcome = renderRunOutcome(finished("failures", { ...FAILURES_RESULT, kind: "chosen", worst: broken, ranking: [broken, harmless] }), context());
    expect(outcome.querySelector(".failures-subject")?.textContent).toBe(
      "The chosen elements failed together, evaluated against allreduce of 1.07 GB (ring) on every card.",
    );
    expect(outcome.querySelector(".failures-worst")?.textContent).toBe("Worst: failing spine-1 leaves too few cards to run the allreduce.");
    expect(cells(outcome.querySelector("table.failures-ranking"))[0]?.slice(5)).toEqual(["cannot run", "cannot run"]);
    const calm = renderRunOutcome(finished("failures", { ...FAILURES_RESULT, worst: harmless, ranking: [harmless] }), context());
    expect(calm.querySelector(".failures-worst")?.textContent).toBe("Worst: failing spine-2 changes nothing measurable.");
  });

  it("offers Show on map per row", async () => {
    const marks = new FakeMarks();
    const outcome = renderRunOutcome(finished("failures", FAILURES_RESULT), context("en", marks));
    const buttons = [...outcome.querySelectorAll<HTMLButtonElement>("table.failures-ranking button.show-on-map")];
    expect(buttons.map((button) => button.getAttribute("aria-label"))).toEqual(["Show leaf-03 on the map", "Show link:12 on the map"]);
    buttons[1]?.click();
    await settle();
    expect(marks.calls).toEqual([["failure", ["link:12"]]]);
    expect(outcome.querySelector(".marks-status")?.textContent).toBe("failed link:12");
  });

  it("is translated", () => {
    const outcome = renderRunOutcome(finished("failures", FAILURES_RESULT), context("zh-hans"));
    expect(outcome.querySelector(".failures-worst")?.textContent).toBe(
      "最严重：leaf-03 故障将切断 8 张加速卡，使 120 个卡对经过更多交换机，使 allreduce 耗时变为 1.52×（总线带宽 0.66×），在缺少 8 个 rank 的情况下运行。",
    );
  });
});
