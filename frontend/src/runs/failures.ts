// The "failures" run (twin/operations/failures.py): the shape of its result,
// and the failed elements of a row split into what the map can mark. No DOM access.

import { finite, isRecord } from "../core/json";

export interface WorkloadChange {
  readonly beforeTimeS: number | null;
  readonly beforeBusbwGBps: number | null;
  /** Null when the workload cannot run after the failure (fewer than 2 ranks left). */
  readonly afterTimeS: number | null;
  readonly afterBusbwGBps: number | null;
  /** after / before time: 1.5 is 50 % slower. */
  readonly timeChange: number | null;
  /** after / before bus bandwidth. */
  readonly busbwChange: number | null;
  readonly ranksLost: number;
}

export interface BlastRadius {
  readonly element: string;
  readonly cardsAttached: number;
  readonly cardsCutOff: number;
}

export interface FailureOutcome {
  readonly elements: readonly string[];
  readonly linksDown: number;
  readonly cardsCutOffCount: number;
  readonly cardsCutOff: readonly string[];
  readonly degradedPairs: number;
  readonly disconnectedPairs: number;
  readonly blastRadius: readonly BlastRadius[];
  /** Slurm blocks that lose cards (element = the block's name); empty without blocks. */
  readonly blastByBlock: readonly BlastRadius[];
  readonly workload: WorkloadChange;
}

export interface LinkImpact {
  readonly link: number | null;
  readonly from: string;
  readonly to: string;
  /** The ends as people name them; the ids on older results. */
  readonly fromName: string;
  readonly toName: string;
  readonly linkClass: string;
  readonly bytes: number;
  readonly cardsCutOff: number | null;
  readonly cardsRouted: number | null;
  /** Cards cut off (a bridge) or else rerouted if it fails; never a card twice. */
  readonly cardsAffected: number | null;
}

export interface FailureWorkload {
  readonly collective: string;
  readonly sizeBytes: number | null;
  readonly algorithm: string;
  /** Null: every card of the fabric. */
  readonly ranks: number | null;
}

export interface FailuresResult {
  /** "switch", "leaf", "link", or "chosen" for a given set failed together. */
  readonly kind: string;
  readonly workload: FailureWorkload | null;
  readonly worst: FailureOutcome | null;
  readonly ranking: readonly FailureOutcome[];
  readonly evaluated: number;
  readonly linkImpact: readonly LinkImpact[];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}

function parseWorkloadChange(value: unknown): WorkloadChange {
  const record = isRecord(value) ? value : {};
  const before = isRecord(record["before"]) ? record["before"] : {};
  const after = isRecord(record["after"]) ? record["after"] : {};
  return {
    beforeTimeS: finite(before["time_s"]),
    beforeBusbwGBps: finite(before["busbw_GBps"]),
    afterTimeS: finite(after["time_s"]),
    afterBusbwGBps: finite(after["busbw_GBps"]),
    timeChange: finite(record["time_change"]),
    busbwChange: finite(record["busbw_change"]),
    ranksLost: finite(record["ranks_lost"]) ?? 0,
  };
}

function parseBlastRadius(value: unknown): BlastRadius[] {
  if (!isRecord(value)) {
    return [];
  }
  return Object.entries(value).flatMap(([element, entry]): BlastRadius[] => {
    if (!isRecord(entry)) {
      return [];
    }
    // failures.py says cards_attached / cards_cut_off; accept the short names too.
    const attached = finite(entry["cards_attached"]) ?? finite(entry["cards"]);
    const cut = finite(entry["cards_cut_off"]) ?? finite(entry["cut_off"]);
    return attached === null ? [] : [{ element, cardsAttached: attached, cardsCutOff: cut ?? 0 }];
  });
}

export function parseFailureOutcome(value: unknown): FailureOutcome | null {
  if (!isRecord(value)) {
    return null;
  }
  const elements = strings(value["elements"]);
  const cardsCutOffCount = finite(value["cards_cut_off_count"]);
  if (elements.length === 0 || cardsCutOffCount === null) {
    return null;
  }
  const listed = strings(value["cards_cut_off"]);
  return {
    elements,
    linksDown: finite(value["links_down"]) ?? 0,
    cardsCutOffCount,
    cardsCutOff: listed,
    degradedPairs: finite(value["degraded_pairs"]) ?? 0,
    disconnectedPairs: finite(value["disconnected_pairs"]) ?? 0,
    blastRadius: parseBlastRadius(value["blast_radius"]),
    blastByBlock: parseBlastRadius(value["blast_radius_by_block"]),
    workload: parseWorkloadChange(value["workload"]),
  };
}

function parseLinkImpact(value: unknown): LinkImpact[] {
  if (!isRecord(value)) {
    return [];
  }
  // failures.link_impact names the ends a / b; arc records say from / to.
  const from = value["from"] ?? value["a"];
  const to = value["to"] ?? value["b"];
  if (typeof from !== "string" || typeof to !== "string") {
    return [];
  }
  const fromName = value["from_name"] ?? value["a_name"];
  const toName = value["to_name"] ?? value["b_name"];
  const cardsCutOff = finite(value["cards_cut_off"]);
  const cardsRouted = finite(value["cards_routed"]);
  const given = finite(value["cards_affected"]);
  return [
    {
      link: finite(value["link"]),
      from,
      to,
      fromName: typeof fromName === "string" ? fromName : from,
      toName: typeof toName === "string" ? toName : to,
      linkClass: typeof value["class"] === "string" ? value["class"] : "",
      bytes: finite(value["bytes"]) ?? 0,
      cardsCutOff,
      cardsRouted,
      // Runs stored before cards_affected was given also counted a bridge's cut-off cards as routed.
      cardsAffected: given ?? (cardsCutOff !== null && cardsCutOff > 0 ? cardsCutOff : cardsRouted),
    },
  ];
}

function parseWorkload(value: unknown): FailureWorkload | null {
  if (!isRecord(value) || typeof value["collective"] !== "string") {
    return null;
  }
  return {
    collective: value["collective"],
    sizeBytes: finite(value["size_bytes"]),
    algorithm: typeof value["algorithm"] === "string" ? value["algorithm"] : "",
    ranks: finite(value["ranks"]),
  };
}

/** The result, or null when it has no ranking (then a generic view is used). */
export function parseFailuresResult(value: unknown): FailuresResult | null {
  if (!isRecord(value) || !Array.isArray(value["ranking"])) {
    return null;
  }
  const ranking = value["ranking"].map(parseFailureOutcome).filter((outcome): outcome is FailureOutcome => outcome !== null);
  const impact = value["link_impact"];
  return {
    kind: typeof value["kind"] === "string" ? value["kind"] : "",
    workload: parseWorkload(value["workload"]),
    worst: parseFailureOutcome(value["worst"]) ?? ranking[0] ?? null,
    ranking,
    evaluated: finite(value["evaluated"]) ?? ranking.length,
    linkImpact: Array.isArray(impact) ? impact.flatMap(parseLinkImpact) : [],
  };
}

/** `link:<i>` element ids: the link's position in the snapshot's links (the layout's link order). */
export function splitFailedElements(elements: readonly string[]): { switches: string[]; links: number[] } {
  const switches: string[] = [];
  const links: number[] = [];
  for (const id of elements) {
    const match = /^link:(\d+)$/.exec(id);
    if (match === null) {
      switches.push(id);
    } else {
      links.push(Number(match[1]));
    }
  }
  return { switches, links };
}
