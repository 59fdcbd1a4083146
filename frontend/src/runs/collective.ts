// The "collective" run: reading its form into the API's params (sizes the way
// the server reads them), placing the server's field errors, and the pure
// shape of its result for rendering. No DOM access.

import type { MessageKey } from "../core/i18n";
import { finite, isRecord, text } from "../core/json";

// Mirrors twin/simcore/units.py: decimal units are powers of 1000 (as
// nccl-tests counts), binary ones powers of 1024; no unit (or B) is bytes.
const SIZE_UNITS: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};
const SIZE_PATTERN = /^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-z]*)\s*$/i;

export type SizeReading = { readonly bytes: number } | { readonly error: MessageKey };

/** "342MB" -> 342e6, "1 GiB" -> 2^30, "4k" -> 4000, "1e9" -> 1e9; the server's rules, positive only. */
export function parseSize(text: string): SizeReading {
  const match = SIZE_PATTERN.exec(text);
  const scale = match === null ? undefined : SIZE_UNITS[(match[2] ?? "").toLowerCase()];
  if (match === null || scale === undefined) {
    return { error: "collective.sizeInvalid" };
  }
  const bytes = Number(match[1]) * scale;
  if (!Number.isFinite(bytes)) {
    return { error: "collective.sizeInvalid" }; // "1e999": JSON cannot carry it
  }
  return bytes > 0 ? { bytes } : { error: "collective.sizeNotPositive" };
}

/** The form's controls by name, as strings. */
export type CollectiveFormValues = Readonly<Record<"collective" | "size" | "algorithm" | "protocol" | "ecmp" | "channels" | "in_switch_reduction", string>>;

export interface CollectiveParams {
  readonly collective: string;
  readonly size_bytes: number;
  readonly algorithm: string;
  readonly protocol: string;
  readonly ecmp: string;
  readonly channels: number;
  readonly in_switch_reduction: boolean | null;
}

export type CollectiveReading =
  | { readonly params: CollectiveParams }
  | { readonly errors: ReadonlyMap<string, MessageKey> };

/** Validates what only the browser can (the size's syntax, a whole channel count); the server checks the rest. */
export function readCollectiveForm(values: CollectiveFormValues): CollectiveReading {
  const errors = new Map<string, MessageKey>();
  const size = parseSize(values.size);
  if ("error" in size) {
    errors.set("size", size.error);
  }
  const channelsText = values.channels.trim();
  const channels = /^[0-9]+$/.test(channelsText) ? Number(channelsText) : Number.NaN;
  if (!Number.isSafeInteger(channels)) {
    errors.set("channels", "collective.channelsInvalid");
  }
  if (errors.size > 0 || "error" in size) {
    return { errors };
  }
  const reduction = values.in_switch_reduction;
  return {
    params: {
      collective: values.collective,
      size_bytes: size.bytes,
      algorithm: values.algorithm,
      protocol: values.protocol,
      ecmp: values.ecmp,
      channels,
      in_switch_reduction: reduction === "true" ? true : reduction === "false" ? false : null,
    },
  };
}

/** The server names the form's "size" field size_bytes; the other params match the controls. */
const PARAM_FIELDS: Readonly<Record<string, string>> = { size_bytes: "size" };

function messagesOf(value: unknown): string[] {
  if (typeof value === "string") {
    return value === "" ? [] : [value];
  }
  if (Array.isArray(value)) {
    return value.flatMap(messagesOf);
  }
  if (typeof value === "object" && value !== null) {
    return Object.values(value).flatMap(messagesOf);
  }
  return [];
}

/**
 * Field errors of a 400 answer (`{"detail", "params": {"size_bytes": [...]}}`)
 * keyed by form control name; errors outside `params` are left to the detail.
 */
export function collectiveFieldErrors(body: unknown): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  const params = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["params"] : undefined;
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    return fields;
  }
  for (const [name, value] of Object.entries(params)) {
    const messages = messagesOf(value);
    if (messages.length > 0) {
      fields.set(PARAM_FIELDS[name] ?? name, messages);
    }
  }
  return fields;
}

// ---- result ---------------------------------------------------------------

export interface Bottleneck {
  readonly linkClass: string | null;
  readonly domain: string | null;
  readonly utilization: number;
}

export interface HotLink {
  readonly from: string;
  readonly to: string;
  /** The ends as people name them (a host's HCA, a switch's name); the ids on older results. */
  readonly fromName: string;
  readonly toName: string;
  readonly linkClass: string;
  readonly bytes: number;
  readonly utilization: number;
}

/** How auto chose (the server's English `reason` is not read: the page tells it from these). */
export interface Choice {
  readonly candidates: Readonly<Record<string, number>>;
  readonly skipped: Readonly<Record<string, string>>;
  /** The same reasons in each language of the site (one frame goes to every viewer). */
  readonly skippedByLanguage?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

export interface CollectiveResult {
  readonly collective: string;
  readonly algorithm: string;
  /** The NCCL protocol the run used (LL, LL128, Simple); null in results from before protocols. */
  readonly protocol: string | null;
  readonly ranks: number;
  readonly sizeBytes: number;
  readonly timeS: number;
  readonly algbwGBps: number;
  readonly busbwGBps: number;
  readonly latencyS: number | null;
  readonly bandwidthS: number | null;
  readonly bound: string;
  readonly bottleneck: Bottleneck | null;
  readonly maxLinkUtilization: number | null;
  readonly hottestLinks: readonly HotLink[];
  readonly choice: Choice | null;
}

function parseBottleneck(value: unknown): Bottleneck | null {
  if (!isRecord(value)) {
    return null;
  }
  return { linkClass: text(value["link_class"]), domain: text(value["domain"]), utilization: finite(value["utilization"]) ?? 0 };
}

function parseHotLink(value: unknown): HotLink[] {
  if (!isRecord(value)) {
    return [];
  }
  const from = text(value["from"]);
  const to = text(value["to"]);
  const bytes = finite(value["bytes"]);
  const utilization = finite(value["utilization"]);
  return from === null || to === null || bytes === null || utilization === null
    ? []
    : [{ from, to, fromName: text(value["from_name"]) ?? from, toName: text(value["to_name"]) ?? to, linkClass: text(value["class"]) ?? "", bytes, utilization }];
}

function parseChoice(value: unknown): Choice | null {
  if (!isRecord(value)) {
    return null;
  }
  const candidates: Record<string, number> = {};
  for (const [name, time] of Object.entries(isRecord(value["candidates"]) ? value["candidates"] : {})) {
    const seconds = finite(time);
    if (seconds !== null && seconds >= 0) {
      candidates[name] = seconds;
    }
  }
  const reasons = (given: unknown): Record<string, string> => {
    const read: Record<string, string> = {};
    for (const [name, why] of Object.entries(isRecord(given) ? given : {})) {
      read[name] = typeof why === "string" ? why : JSON.stringify(why);
    }
    return read;
  };
  const byLanguage = value["skipped_by_language"];
  return {
    candidates,
    skipped: reasons(value["skipped"]),
    ...(isRecord(byLanguage) ? { skippedByLanguage: Object.fromEntries(Object.entries(byLanguage).map(([language, given]) => [language, reasons(given)])) } : {}),
  };
}

/** The fields the page shows, or null when the headline numbers are missing (then a generic view is used). */
export function parseCollectiveResult(value: unknown): CollectiveResult | null {
  if (!isRecord(value)) {
    return null;
  }
  const collective = text(value["collective"]);
  const algorithm = text(value["algorithm"]);
  const bound = text(value["bound"]);
  const ranks = finite(value["ranks"]);
  const sizeBytes = finite(value["size_bytes"]);
  const timeS = finite(value["time_s"]);
  const algbwGBps = finite(value["algbw_GBps"]);
  const busbwGBps = finite(value["busbw_GBps"]);
  if (
    collective === null ||
    algorithm === null ||
    bound === null ||
    ranks === null ||
    sizeBytes === null ||
    timeS === null ||
    algbwGBps === null ||
    busbwGBps === null
  ) {
    return null;
  }
  const hottest = value["hottest_links"];
  return {
    collective,
    algorithm,
    protocol: text(value["protocol"]),
    ranks,
    sizeBytes,
    timeS,
    algbwGBps,
    busbwGBps,
    latencyS: finite(value["latency_s"]),
    bandwidthS: finite(value["bandwidth_s"]),
    bound,
    bottleneck: parseBottleneck(value["bottleneck"]),
    maxLinkUtilization: finite(value["max_link_utilization"]),
    hottestLinks: Array.isArray(hottest) ? hottest.flatMap(parseHotLink) : [],
    choice: parseChoice(value["choice"]),
  };
}

export interface CandidateBar {
  readonly algorithm: string;
  readonly timeS: number;
  readonly fastest: boolean;
}

/** The compared algorithms, fastest first (ties by name); every one as fast as the best is marked fastest. */
export function candidateBars(choice: Choice): CandidateBar[] {
  const entries = Object.entries(choice.candidates).sort(
    ([leftName, left], [rightName, right]) => left - right || (leftName < rightName ? -1 : leftName > rightName ? 1 : 0),
  );
  const best = entries[0]?.[1];
  return entries.map(([algorithm, timeS]) => ({
    algorithm,
    timeS,
    fastest: timeS === best,
  }));
}

/** Algorithms auto could not use, by name, each with the server's reason (in `language` when the server sent it). */
export function skippedAlgorithms(choice: Choice, language?: string): [string, string][] {
  const reasons = (language !== undefined ? choice.skippedByLanguage?.[language] : undefined) ?? choice.skipped;
  return Object.entries(reasons).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
}

/**
 * The bottleneck's link class with its domain, unless the class already names
 * it (the server's classes read like "card-leaf (scale-up)"). Null when no link
 * limits the collective.
 */
export function bottleneckLink(bottleneck: Bottleneck): { linkClass: string; domain: string | null } | null {
  const { linkClass, domain } = bottleneck;
  if (linkClass === null || linkClass === "") {
    return null;
  }
  return { linkClass, domain: domain === null || domain === "" || linkClass.includes(domain) ? null : domain };
}

/** The per-link utilisation of a run's detail (`{"link_utilization": [...]}`), or null when it has none. */
export function collectiveLinkUtilisation(detail: unknown): number[] | null {
  const values = isRecord(detail) ? detail["link_utilization"] : undefined;
  if (!Array.isArray(values) || values.length === 0) {
    return null;
  }
  // A link the simulation could not value is drawn without a colour, not as 0 %.
  return values.map((value) => finite(value) ?? Number.NaN);
}
