import { describe, expect, it } from "vitest";
import { parseFailuresResult, splitFailedElements, type FailuresResult } from "./failures";
import { FAILURES_RESULT, failureOutcome } from "../testing/fakes";

describe("parseFailuresResult", () => {
  it("reads the ranking, the worst failure and the workload change", () => {
    const result = parseFailuresResult(FAILURES_RESULT) as FailuresResult;
    expect(result.kind).toBe("leaf");
    expect(result.evaluated).toBe(16);
    expect(result.workload).toEqual({ collective: "allreduce", sizeBytes: 1073741824, algorithm: "ring", ranks: null });
    expect(result.ranking.map((outcome) => outcome.elements)).toEqual([["leaf-03"], ["link:12"]]);
    expect(result.worst?.workload).toEqual({
      beforeTimeS: 0.01,
      beforeBusbwGBps: 100,
      afterTimeS: 0.0152,
      afterBusbwGBps: 66,
      timeChange: 1.52,
      busbwChange: 0.66,
      ranksLost: 8,
    });
    expect(result.worst?.blastRadius).toEqual([{ element: "leaf-03", cardsAttached: 8, cardsCutOff: 8 }]);
  });

  it("reads link impact with a/b ends, or from/to, and the cards affected", () => {
    const result = parseFailuresResult(FAILURES_RESULT) as FailuresResult;
    expect(result.linkImpact).toEqual([
      { link: 12, from: "leaf-03", to: "spine-00", fromName: "leaf-03", toName: "spine-00", linkClass: "", bytes: 4e9, cardsCutOff: 0, cardsRouted: 64, cardsAffected: 64 },
    ]);
    const named = parseFailuresResult({ ...FAILURES_RESULT, link_impact: [{ link: 2, a: "ib:1", b: "ib:2", a_name: "leaf01", b_name: "spine01", bytes: 1 }] });
    expect(named?.linkImpact.map((link) => [link.from, link.fromName, link.toName])).toEqual([["ib:1", "leaf01", "spine01"]]);
    const other = parseFailuresResult({ ...FAILURES_RESULT, link_impact: [{ link: 1, from: "a", to: "b", class: "c", bytes: 1, cards_affected: 3, impact: 3 }, { a: "x" }] });
    expect(other?.linkImpact.map((link) => [link.from, link.to, link.linkClass, link.cardsAffected])).toEqual([["a", "b", "c", 3]]);
  });

  it("counts a card cut off by its only cable once, also in runs stored without cards_affected", () => {
    const stored = { link: 3, a: "card-0001", a_port: "p0", b: "leaf-01", b_port: "1", bytes: 2e8, cards_cut_off: 1, cards_routed: 3, impact: 8e8 };
    const result = parseFailuresResult({ ...FAILURES_RESULT, link_impact: [stored] });
    expect(result?.linkImpact[0]?.cardsAffected).toBe(1);
  });

  it("accepts the short blast-radius names and a workload that cannot run after", () => {
    const outcome = failureOutcome(["spine-1"], {
      blast_radius: { "spine-1": { cards: 4, cut_off: 4 } },
      workload: { before: { time_s: 1, busbw_GBps: 1 }, after: null, time_change: null, busbw_change: null, ranks_lost: 4 },
    });
    const result = parseFailuresResult({ ...FAILURES_RESULT, worst: outcome, ranking: [outcome] }) as FailuresResult;
    expect(result.worst?.blastRadius).toEqual([{ element: "spine-1", cardsAttached: 4, cardsCutOff: 4 }]);
    expect(result.worst?.workload.afterTimeS).toBeNull();
    expect(result.worst?.workload.timeChange).toBeNull();
  });

  it("falls back to the first of the ranking as the worst, and refuses results without a ranking", () => {
    expect(parseFailuresResult({ ...FAILURES_RESULT, worst: null })?.worst?.elements).toEqual(["leaf-03"]);
    expect(parseFailuresResult({ ...FAILURES_RESULT, worst: null, ranking: [] })?.worst).toBeNull();
    expect(parseFailuresResult({ kind: "leaf" })).toBeNull();
  });
});

describe("splitFailedElements", () => {
  it("tells link ids from switch ids", () => {
    expect(splitFailedElements(["leaf-03", "link:12", "link:x", "link:0"])).toEqual({ switches: ["leaf-03", "link:x"], links: [12, 0] });
  });
});
