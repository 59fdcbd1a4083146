// The "whatif" run's result (twin/whatif/report.py report_summary): one entry per stage
// of each design, and the knee. No DOM access.

import { finite, isRecord, text } from "../core/json";

export interface WhatIfStage {
  readonly alternative: string;
  readonly factor: number;
  readonly cards: number;
  /** Switches per tier ("leaf", "spine", "scale-out leaf" …). */
  readonly switches: ReadonlyMap<string, number>;
  readonly tiers: number | null;
  readonly diameterHops: number | null;
  readonly bisectionGBps: number | null;
  readonly powerKw: number | null;
  /** busbw in GB/s per collective, per message size in bytes. */
  readonly busbwGBps: ReadonlyMap<string, ReadonlyMap<number, number>>;
}

export interface WhatIfRemedy {
  readonly symptom: string;
  readonly likelyCause: string;
  readonly check: string;
  readonly fix: string;
}

export interface WhatIfKnee {
  readonly alternative: string;
  readonly factor: number;
  readonly cards: number | null;
  readonly metric: string;
  readonly dropPoints: number | null;
  readonly explanation: string;
  readonly remedy: WhatIfRemedy | null;
}

export interface WhatIfResult {
  readonly stages: readonly WhatIfStage[];
  readonly knee: WhatIfKnee | null;
}


function numberMap(value: unknown): Map<string, number> {
  const map = new Map<string, number>();
  if (isRecord(value)) {
    for (const [key, count] of Object.entries(value)) {
      const number = finite(count);
      if (number !== null) {
        map.set(key, number);
      }
    }
  }
  return map;
}

function parseStage(value: unknown): WhatIfStage | null {
  if (!isRecord(value)) {
    return null;
  }
  const factor = finite(value["factor"]);
  const cards = finite(value["cards"]);
  if (typeof value["alternative"] !== "string" || factor === null || cards === null) {
    return null;
  }
  const busbw = new Map<string, Map<number, number>>();
  if (isRecord(value["busbw_GBps"])) {
    for (const [collective, bySize] of Object.entries(value["busbw_GBps"])) {
      const sizes = new Map([...numberMap(bySize)].map(([size, GBps]) => [Number(size), GBps] as const).filter(([size]) => Number.isFinite(size)));
      busbw.set(collective, new Map([...sizes].sort(([a], [b]) => a - b)));
    }
  }
  return {
    alternative: value["alternative"],
    factor,
    cards,
    switches: numberMap(value["switches"]),
    tiers: finite(value["tiers"]),
    diameterHops: finite(value["diameter_hops"]),
    bisectionGBps: finite(value["bisection_GBps"]),
    powerKw: finite(value["power_kw"]),
    busbwGBps: busbw,
  };
}

function parseKnee(value: unknown): WhatIfKnee | null {
  if (!isRecord(value)) {
    return null;
  }
  const factor = finite(value["factor"]);
  if (typeof value["alternative"] !== "string" || factor === null) {
    return null;
  }
  const remedy = value["remedy"];
  return {
    alternative: value["alternative"],
    factor,
    cards: finite(value["cards"]),
    metric: text(value["metric"]) ?? "",
    dropPoints: finite(value["drop_points"]),
    explanation: text(value["explanation"]) ?? "",
    remedy: isRecord(remedy)
      ? { symptom: text(remedy["symptom"]) ?? "", likelyCause: text(remedy["likely_cause"]) ?? "", check: text(remedy["check"]) ?? "", fix: text(remedy["fix"]) ?? "" }
      : null,
  };
}

/** Null when `value` is not a what-if summary (so the generic view is shown). */
export function parseWhatIfResult(value: unknown): WhatIfResult | null {
  if (!isRecord(value) || !Array.isArray(value["stages"]) || !("knee" in value)) {
    return null;
  }
  const stages = value["stages"].map(parseStage);
  if (stages.some((stage) => stage === null)) {
    return null;
  }
  return { stages: stages as WhatIfStage[], knee: parseKnee(value["knee"]) };
}

/** The collectives any stage measured, in first-seen order. */
export function whatIfCollectives(result: WhatIfResult): string[] {
  return [...new Set(result.stages.flatMap((stage) => [...stage.busbwGBps.keys()]))];
}

/** The largest size every stage measured for `collective` (the report's default reference size: bandwidth-bound). */
export function referenceSize(result: WhatIfResult, collective: string): number | null {
  const sizes = result.stages.flatMap((stage) => [...(stage.busbwGBps.get(collective)?.keys() ?? [])]);
  return sizes.length === 0 ? null : Math.max(...sizes);
}

/** The designs in first-seen order, each with its stages by growing card count. */
export function stagesByAlternative(result: WhatIfResult): Map<string, WhatIfStage[]> {
  const groups = new Map<string, WhatIfStage[]>();
  for (const stage of result.stages) {
    groups.set(stage.alternative, [...(groups.get(stage.alternative) ?? []), stage]);
  }
  for (const stages of groups.values()) {
    stages.sort((a, b) => a.cards - b.cards);
  }
  return groups;
}

export function isKneeStage(stage: WhatIfStage, knee: WhatIfKnee | null): boolean {
  return knee !== null && stage.alternative === knee.alternative && stage.factor === knee.factor;
}
