import { describe, expect, it } from "vitest";
import {
  bestSpeedup,
  parsePlacementResult,
  placementDimensions,
  placementExportUrl,
  placementRanks,
  rankMarks,
  type PlacementResult,
} from "./placement";
import { PLACEMENT_RESULT } from "../testing/fakes";

describe("parsePlacementResult", () => {
  it("reads the strategies in the server's ranking, with the best first", () => {
    const result = parsePlacementResult(PLACEMENT_RESULT) as PlacementResult;
    expect(result.best).toBe("aware");
    expect(result.ranking).toEqual(["aware", "naive", "random"]);
    expect([...result.results.keys()]).toEqual(["aware", "naive", "random"]);
    const aware = result.results.get("aware");
    expect(aware?.communicationTimeS).toBe(0.03);
    expect(aware?.dimensions.tp?.bottleneck).toEqual({ link: 3, from: "card-0", to: "leaf-0", fromName: "card-0", toName: "leaf-0", linkClass: "card-leaf (scale-up)", bytes: 2e9, utilization: 0.91 });
    expect(aware?.dimensions.ep).toBeUndefined();
    expect(aware?.warnings).toEqual(["2 TP groups span two leaves"]);
    expect(result.job).toEqual({ tp: 8, pp: 2, dp: 4, ep: 1, world: 64 });
  });

  it("orders strategies the ranking leaves out by time and falls back to the fastest as best", () => {
    const result = parsePlacementResult({ ...PLACEMENT_RESULT, ranking: ["naive"], best: "nope" }) as PlacementResult;
    expect(result.ranking).toEqual(["naive", "aware", "random"]);
    expect(result.best).toBe("naive");
  });

  it("refuses results without any timed strategy", () => {
    expect(parsePlacementResult({ results: {} })).toBeNull();
    expect(parsePlacementResult({ results: { naive: { communication_time_s: "fast" } } })).toBeNull();
    expect(parsePlacementResult("x")).toBeNull();
  });

  it("finds the dimensions and how much faster the best is", () => {
    const result = parsePlacementResult(PLACEMENT_RESULT) as PlacementResult;
    expect(placementDimensions(result)).toEqual(["tp", "pp", "dp"]);
    const speedup = bestSpeedup(result);
    expect(speedup?.slowest).toBe("random");
    expect(speedup?.factor).toBeCloseTo(3);
    const alone = parsePlacementResult({ ...PLACEMENT_RESULT, results: { aware: PLACEMENT_RESULT.results.aware }, ranking: ["aware"] }) as PlacementResult;
    expect(bestSpeedup(alone)).toBeNull();
  });
});

describe("placement exports and marks", () => {
  it("builds the export URLs off the run's URL", () => {
    expect(placementExportUrl("/api/runs/12/", "aware", "hostlist")).toBe("/api/runs/12/placement/?strategy=aware&format=hostlist");
    expect(placementExportUrl("/api/runs/12", "my plan", "csv")).toBe("/api/runs/12/placement/?strategy=my+plan&format=csv");
  });

  it("reads one strategy's ranks from the detail and colours them by TP group", () => {
    const detail = {
      ranks: {
        aware: [
          { rank: 0, card: "n0/gpu0", host: "n0", stage: 0, dp_index: 0, tp_index: 0, tp_group: 0 },
          { rank: 1, card: "n0/gpu1", host: "n0", stage: 0, dp_index: 0, tp_index: 1, tp_group: 0 },
          { rank: 2, card: "n1/gpu0", host: null, stage: 0, dp_index: 1, tp_index: 0, tp_group: 1 },
          { rank: 3, host: "n1" },
        ],
      },
    };
    const records = placementRanks(detail, "aware");
    expect(records.map((record) => [record.card, record.tpGroup, record.host])).toEqual([
      ["n0/gpu0", 0, "n0"],
      ["n0/gpu1", 0, "n0"],
      ["n1/gpu0", 1, null],
    ]);
    expect(rankMarks(records)).toEqual({ ids: ["n0/gpu0", "n0/gpu1", "n1/gpu0"], marks: ["placed:0", "placed:0", "placed:1"], groups: 2 });
    expect(placementRanks(detail, "naive")).toEqual([]);
    expect(placementRanks({}, "aware")).toEqual([]);
  });
});
