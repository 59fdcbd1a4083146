// The "placement" run (twin/operations/placement.py compare_placements): the
// shape of its result, the comparison behind its table, the export URLs and
// the map marks of one strategy's ranks. No DOM access.

import { runSubresourceUrl } from "./runState";
import { finite, isRecord, text } from "../core/json";

export const DIMENSIONS = ["tp", "pp", "dp", "ep"] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** An arc record: a link in one direction with its load. */
export interface ArcRecord {
  readonly link: number | null;
  readonly from: string;
  readonly to: string;
  /** The ends as people name them; the ids on older results. */
  readonly fromName: string;
  readonly toName: string;
  readonly linkClass: string;
  readonly bytes: number | null;
  readonly utilization: number;
}

export interface DimensionResult {
  readonly collective: string;
  readonly algorithm: string;
  readonly groups: number | null;
  readonly groupSize: number | null;
  readonly timeS: number;
  readonly busbwGBps: number | null;
  readonly meanSwitchHops: number | null;
  readonly maxSwitchHops: number | null;
  readonly crossesScaleOut: boolean;
  readonly bottleneck: ArcRecord | null;
}

export interface StrategyResult {
  readonly strategy: string;
  readonly communicationTimeS: number;
  readonly dimensions: Readonly<Partial<Record<Dimension, DimensionResult>>>;
  readonly bottleneckLinks: readonly ArcRecord[];
  readonly warnings: readonly string[];
  /** The warnings in each language of the site (one frame goes to every viewer); `warnings` is the server's language. */
  readonly warningsByLanguage?: Readonly<Record<string, readonly string[]>>;
}

export interface JobShape {
  readonly tp: number;
  readonly pp: number;
  readonly dp: number;
  readonly ep: number;
  readonly world: number;
}

export interface PlacementResult {
  readonly job: JobShape | null;
  /** Fastest first; every strategy of `results` appears once. */
  readonly ranking: readonly string[];
  readonly best: string | null;
  readonly results: ReadonlyMap<string, StrategyResult>;
}

export function parseArcRecord(value: unknown): ArcRecord | null {
  if (!isRecord(value)) {
    return null;
  }
  const from = value["from"];
  const to = value["to"];
  const utilization = finite(value["utilization"]);
  if (typeof from !== "string" || typeof to !== "string" || utilization === null) {
    return null;
  }
  const fromName = value["from_name"];
  const toName = value["to_name"];
  return {
    link: finite(value["link"]),
    from,
    to,
    fromName: typeof fromName === "string" ? fromName : from,
    toName: typeof toName === "string" ? toName : to,
    linkClass: text(value["class"]) ?? "",
    bytes: finite(value["bytes"]),
    utilization,
  };
}

function parseDimension(value: unknown): DimensionResult | null {
  if (!isRecord(value)) {
    return null;
  }
  const timeS = finite(value["time_s"]);
  if (timeS === null) {
    return null;
  }
  return {
    collective: text(value["collective"]) ?? "",
    algorithm: text(value["algorithm"]) ?? "",
    groups: finite(value["groups"]),
    groupSize: finite(value["group_size"]),
    timeS,
    busbwGBps: finite(value["busbw_GBps"]),
    meanSwitchHops: finite(value["mean_switch_hops"]),
    maxSwitchHops: finite(value["max_switch_hops"]),
    crossesScaleOut: value["crosses_scale_out"] === true,
    bottleneck: parseArcRecord(value["bottleneck"]),
  };
}

function parseStrategy(name: string, value: unknown): StrategyResult | null {
  if (!isRecord(value)) {
    return null;
  }
  const communicationTimeS = finite(value["communication_time_s"]);
  if (communicationTimeS === null) {
    return null;
  }
  const dimensions: Partial<Record<Dimension, DimensionResult>> = {};
  const given = isRecord(value["dimensions"]) ? value["dimensions"] : {};
  for (const dimension of DIMENSIONS) {
    const parsed = parseDimension(given[dimension]);
    if (parsed !== null) {
      dimensions[dimension] = parsed;
    }
  }
  const links = value["bottleneck_links"];
  const warnings = value["warnings"];
  return {
    strategy: typeof value["strategy"] === "string" && value["strategy"] !== "" ? value["strategy"] : name,
    communicationTimeS,
    dimensions,
    bottleneckLinks: Array.isArray(links) ? links.map(parseArcRecord).filter((link): link is ArcRecord => link !== null) : [],
    warnings: strings(warnings),
    warningsByLanguage: isRecord(value["warnings_by_language"])
      ? Object.fromEntries(Object.entries(value["warnings_by_language"]).map(([language, texts]) => [language, strings(texts)]))
      : {},
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function parseJob(value: unknown): JobShape | null {
  if (!isRecord(value)) {
    return null;
  }
  const [tp, pp, dp, ep] = (["tp", "pp", "dp", "ep"] as const).map((key) => finite(value[key]));
  if (tp === null || dp === null || tp === undefined || dp === undefined) {
    return null;
  }
  const stages = pp ?? 1;
  return { tp, pp: stages, dp, ep: ep ?? 1, world: finite(value["world"]) ?? tp * stages * dp };
}

/** The result, or null when no strategy has a communication time (then a generic view is used). */
export function parsePlacementResult(value: unknown): PlacementResult | null {
  if (!isRecord(value) || !isRecord(value["results"])) {
    return null;
  }
  const parsed = new Map<string, StrategyResult>();
  for (const [name, result] of Object.entries(value["results"])) {
    const strategy = parseStrategy(name, result);
    if (strategy !== null) {
      parsed.set(name, strategy);
    }
  }
  if (parsed.size === 0) {
    return null;
  }
  // The server's ranking first, then anything it left out, fastest first.
  const given = Array.isArray(value["ranking"]) ? value["ranking"].filter((name): name is string => typeof name === "string" && parsed.has(name)) : [];
  const rest = [...parsed.keys()]
    .filter((name) => !given.includes(name))
    .sort((left, right) => (parsed.get(left)?.communicationTimeS ?? 0) - (parsed.get(right)?.communicationTimeS ?? 0));
  const ranking = [...new Set([...given, ...rest])];
  const best = typeof value["best"] === "string" && parsed.has(value["best"]) ? value["best"] : (ranking[0] ?? null);
  return { job: parseJob(value["job"]), ranking, best, results: new Map(ranking.map((name) => [name, parsed.get(name) as StrategyResult])) };
}

/** The dimensions any strategy reports, in tp, pp, dp, ep order: the comparison table's columns. */
export function placementDimensions(result: PlacementResult): Dimension[] {
  return DIMENSIONS.filter((dimension) => [...result.results.values()].some((strategy) => strategy.dimensions[dimension] !== undefined));
}

/** How many times faster the best strategy communicates than the slowest; null with one strategy or a zero time. */
export function bestSpeedup(result: PlacementResult): { slowest: string; factor: number } | null {
  const best = result.best === null ? undefined : result.results.get(result.best);
  let slowest: StrategyResult | undefined;
  for (const strategy of result.results.values()) {
    if (slowest === undefined || strategy.communicationTimeS > slowest.communicationTimeS) {
      slowest = strategy;
    }
  }
  if (best === undefined || slowest === undefined || slowest === best || best.communicationTimeS <= 0) {
    return null;
  }
  return { slowest: slowest.strategy, factor: slowest.communicationTimeS / best.communicationTimeS };
}

export const PLACEMENT_FORMATS = ["csv", "hostlist", "hostfile"] as const;
export type PlacementFormat = (typeof PLACEMENT_FORMATS)[number];

/** `/api/runs/<id>/placement/?strategy=S&format=F`: one strategy's rank table, Slurm hostlist or hostfile. */
export function placementExportUrl(runUrl: string, strategy: string, format: PlacementFormat): string {
  return `${runSubresourceUrl(runUrl, "placement")}?${new URLSearchParams({ strategy, format }).toString()}`;
}

export interface RankRecord {
  readonly rank: number;
  readonly card: string;
  readonly host: string | null;
  readonly tpGroup: number;
}

/** One strategy's ranks from the run's detail (`{"ranks": {strategy: [...]}}`); empty when it has none. */
export function placementRanks(detail: unknown, strategy: string): RankRecord[] {
  const ranks = isRecord(detail) && isRecord(detail["ranks"]) ? detail["ranks"][strategy] : undefined;
  if (!Array.isArray(ranks)) {
    return [];
  }
  return ranks.flatMap((record: unknown): RankRecord[] => {
    if (!isRecord(record) || typeof record["card"] !== "string") {
      return [];
    }
    const rank = finite(record["rank"]) ?? 0;
    return [
      {
        rank,
        card: record["card"],
        host: typeof record["host"] === "string" ? record["host"] : null,
        tpGroup: finite(record["tp_group"]) ?? 0,
      },
    ];
  });
}

/** setNodeMarks arguments: each rank's card, coloured by its tensor-parallel group. */
export function rankMarks(records: readonly RankRecord[]): { ids: string[]; marks: string[]; groups: number } {
  return {
    ids: records.map((record) => record.card),
    marks: records.map((record) => `placed:${String(record.tpGroup)}`),
    groups: new Set(records.map((record) => record.tpGroup)).size,
  };
}
