import { describe, expect, it } from "vitest";
import {
  bottleneckLink,
  candidateBars,
  collectiveFieldErrors,
  collectiveLinkUtilisation,
  parseCollectiveResult,
  parseSize,
  readCollectiveForm,
  skippedAlgorithms,
  type Choice,
  type CollectiveFormValues,
} from "./collective";
import { COLLECTIVE_RESULT } from "../testing/fakes";

describe("parseSize", () => {
  it("reads the server's doctest examples the same way", () => {
    expect(parseSize("342MB")).toEqual({ bytes: 342_000_000 });
    expect(parseSize("1 GiB")).toEqual({ bytes: 1_073_741_824 });
    expect(parseSize("4k")).toEqual({ bytes: 4000 });
    expect(parseSize("1e9")).toEqual({ bytes: 1e9 });
  });

  it("knows decimal, binary and shorthand units in any case", () => {
    expect(parseSize("4096")).toEqual({ bytes: 4096 });
    expect(parseSize("4096B")).toEqual({ bytes: 4096 });
    expect(parseSize("2kb")).toEqual({ bytes: 2000 });
    expect(parseSize("3m")).toEqual({ bytes: 3e6 });
    expect(parseSize("1.5G")).toEqual({ bytes: 1.5e9 });
    expect(parseSize("2TB")).toEqual({ bytes: 2e12 });
    expect(parseSize("1t")).toEqual({ bytes: 1e12 });
    expect(parseSize("8KiB")).toEqual({ bytes: 8192 });
    expect(parseSize("1.5 mib")).toEqual({ bytes: 1.5 * 2 ** 20 });
    expect(parseSize("1TiB")).toEqual({ bytes: 2 ** 40 });
  });

  it("accepts leading dots, exponents and surrounding spaces", () => {
    expect(parseSize(".5MB")).toEqual({ bytes: 500_000 });
    expect(parseSize("  2.5E+3 kb ")).toEqual({ bytes: 2.5e6 });
    expect(parseSize("1e-3k")).toEqual({ bytes: 1 });
  });

  it("rejects what the server cannot read", () => {
    for (const text of ["", "MB", "12 parsecs", "1,000", "-5", "1.", "1 2", "1e", "0x10", "1GB/s"]) {
      expect(parseSize(text), text).toEqual({ error: "collective.sizeInvalid" });
    }
  });

  it("rejects sizes that are not positive, and ones too large for JSON", () => {
    expect(parseSize("0")).toEqual({ error: "collective.sizeNotPositive" });
    expect(parseSize("0.0MB")).toEqual({ error: "collective.sizeNotPositive" });
    expect(parseSize("1e999")).toEqual({ error: "collective.sizeInvalid" });
  });
});

const FORM: CollectiveFormValues = {
  collective: "allreduce",
  size: "342MB",
  algorithm: "auto",
  protocol: "auto",
  ecmp: "hash",
  channels: "4",
  in_switch_reduction: "",
};

describe("readCollectiveForm", () => {
  it("builds the API's params", () => {
    expect(readCollectiveForm(FORM)).toEqual({
      params: {
        collective: "allreduce",
        size_bytes: 342e6,
        algorithm: "auto",
        protocol: "auto",
        ecmp: "hash",
        channels: 4,
        in_switch_reduction: null,
      },
    });
  });

  it("sends in-switch reduction as null, true or false", () => {
    const reduction = (value: string) => {
      const reading = readCollectiveForm({ ...FORM, in_switch_reduction: value });
      return "params" in reading ? reading.params.in_switch_reduction : "error";
    };
    expect([reduction(""), reduction("true"), reduction("false")]).toEqual([null, true, false]);
  });

  it("reports a bad size or channel count per field instead of params", () => {
    const reading = readCollectiveForm({ ...FORM, size: "lots", channels: "1.5" });
    expect("errors" in reading && [...reading.errors]).toEqual([
      ["size", "collective.sizeInvalid"],
      ["channels", "collective.channelsInvalid"],
    ]);
    const zero = readCollectiveForm({ ...FORM, size: "0" });
    expect("errors" in zero && [...zero.errors]).toEqual([["size", "collective.sizeNotPositive"]]);
  });
});

describe("collectiveFieldErrors", () => {
  it("keys the server's params errors by form control, size_bytes as size", () => {
    const errors = collectiveFieldErrors({
      detail: "params: size_bytes: Ensure this value is less than or equal to 1e+15. channels: Too many.",
      params: { size_bytes: ["Ensure this value is less than or equal to 1e+15."], channels: ["Too many.", "Really."] },
    });
    expect([...errors]).toEqual([
      ["size", ["Ensure this value is less than or equal to 1e+15."]],
      ["channels", ["Too many.", "Really."]],
    ]);
  });

  it("ignores errors outside params and bodies without them", () => {
    expect(collectiveFieldErrors({ detail: "snapshot: Invalid pk.", snapshot: ["Invalid pk."] }).size).toBe(0);
    expect(collectiveFieldErrors({ detail: "Broker down." }).size).toBe(0);
    expect(collectiveFieldErrors(undefined).size).toBe(0);
    expect(collectiveFieldErrors({ params: ["not a dict"] }).size).toBe(0);
  });

  it("flattens nested messages and drops empty ones", () => {
    expect([...collectiveFieldErrors({ params: { ecmp: { mode: ["Bad."] }, algorithm: [] } })]).toEqual([["ecmp", ["Bad."]]]);
  });
});

describe("parseCollectiveResult", () => {
  it("reads the pushed result", () => {
    const result = parseCollectiveResult(COLLECTIVE_RESULT);
    expect(result).toMatchObject({
      collective: "allreduce",
      algorithm: "in_switch",
      ranks: 1024,
      sizeBytes: 342e6,
      timeS: 0.008046,
      bound: "bandwidth",
      bottleneck: { linkClass: "card-leaf (scale-up)", domain: "scale-up", utilization: 0.85 },
      maxLinkUtilization: 0.85,
    });
    expect(result?.hottestLinks[0]?.fromName).toBe("node01/mlx5_0");
    expect(result?.hottestLinks[1]).toEqual({
      from: "leaf-0",
      to: "spine-1",
      fromName: "leaf-0", // a result from before names: the ids
      toName: "spine-1",
      linkClass: "leaf-spine (scale-out)",
      bytes: 1.2e9,
      utilization: 0.4213,
    });
    expect(result?.choice?.candidates).toEqual(COLLECTIVE_RESULT.choice.candidates);
  });

  it("needs the headline numbers", () => {
    expect(parseCollectiveResult({ ...COLLECTIVE_RESULT, time_s: "fast" })).toBeNull();
    expect(parseCollectiveResult({ ...COLLECTIVE_RESULT, algorithm: undefined })).toBeNull();
    expect(parseCollectiveResult([])).toBeNull();
  });

  it("tolerates missing or malformed optional parts", () => {
    const { choice: _choice, bottleneck: _bottleneck, ...rest } = COLLECTIVE_RESULT;
    const result = parseCollectiveResult({ ...rest, hottest_links: [{ from: "a" }, 5], latency_s: null });
    expect(result).toMatchObject({ choice: null, bottleneck: null, hottestLinks: [], latencyS: null });
  });

  it("reads the skipped algorithms' reasons in each language", () => {
    const choice = { ...COLLECTIVE_RESULT.choice, skipped_by_language: { en: { one_shot: "scale-up only" }, "zh-hans": { one_shot: "仅限纵向扩展域" } } };
    const result = parseCollectiveResult({ ...COLLECTIVE_RESULT, choice });
    expect(result?.choice?.skippedByLanguage?.["zh-hans"]).toEqual({ one_shot: "仅限纵向扩展域" });
  });
});

describe("candidateBars", () => {
  const choice = (candidates: Record<string, number>): Choice => ({ candidates, skipped: {} });

  it("orders the candidates fastest first, the fastest marked", () => {
    expect(candidateBars(choice({ ring: 0.02, in_switch: 0.005, two_shot: 0.01 }))).toEqual([
      { algorithm: "in_switch", timeS: 0.005, fastest: true },
      { algorithm: "two_shot", timeS: 0.01, fastest: false },
      { algorithm: "ring", timeS: 0.02, fastest: false },
    ]);
  });

  it("marks every candidate tied for fastest and orders ties by name", () => {
    const bars = candidateBars(choice({ tree: 1, ring: 1, direct: 2 }));
    expect(bars.map((bar) => [bar.algorithm, bar.fastest])).toEqual([
      ["ring", true],
      ["tree", true],
      ["direct", false],
    ]);
  });

  it("handles no candidates and zero times", () => {
    expect(candidateBars(choice({}))).toEqual([]);
    expect(candidateBars(choice({ a: 0 }))).toEqual([{ algorithm: "a", timeS: 0, fastest: true }]);
  });
});

describe("skippedAlgorithms", () => {
  it("lists the skipped ones by name with why", () => {
    expect(skippedAlgorithms({ candidates: {}, skipped: { tree: "no", bruck: "needs p=2^k" } })).toEqual([
      ["bruck", "needs p=2^k"],
      ["tree", "no"],
    ]);
  });

  it("says why in the reader's language when the server sent it", () => {
    const choice = { candidates: {}, skipped: { tree: "no" }, skippedByLanguage: { "zh-hans": { tree: "不行" } } };
    expect(skippedAlgorithms(choice, "zh-hans")).toEqual([["tree", "不行"]]);
    expect(skippedAlgorithms(choice, "en")).toEqual([["tree", "no"]]);
  });
});

describe("bottleneckLink", () => {
  it("adds the domain only when the class does not already name it", () => {
    expect(bottleneckLink({ linkClass: "card-leaf (scale-up)", domain: "scale-up", utilization: 1 })).toEqual({
      linkClass: "card-leaf (scale-up)",
      domain: null,
    });
    expect(bottleneckLink({ linkClass: "leaf-spine", domain: "scale-out", utilization: 1 })).toEqual({
      linkClass: "leaf-spine",
      domain: "scale-out",
    });
  });

  it("is null when no link limits the collective", () => {
    expect(bottleneckLink({ linkClass: null, domain: null, utilization: 0 })).toBeNull();
  });
});

describe("collectiveLinkUtilisation", () => {
  it("reads the per-link utilisation, unknown values as NaN", () => {
    expect(collectiveLinkUtilisation({ link_bytes: [1, 2, 3], link_utilization: [0.5, null, 1] })).toEqual([0.5, Number.NaN, 1]);
  });

  it("is null when the detail has none", () => {
    expect(collectiveLinkUtilisation({})).toBeNull();
    expect(collectiveLinkUtilisation({ link_utilization: [] })).toBeNull();
    expect(collectiveLinkUtilisation(null)).toBeNull();
  });
});
