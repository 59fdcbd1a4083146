// Utilisation frames (docs/replay.md "Frames"): the complete per-link snapshot a
// replay and live port counters both send. Validation at the boundary, the
// byte decoding (one byte per link: base64 in JSON, raw in a binary frame
// message) and the websocket messages that carry frames. No DOM access.

import type { Translate } from "../core/i18n";
import { finite, isRecord, type Json } from "../core/json";
import { decodeFrameMessage } from "./frameMessage";

/**
 * A frame's bytes: base64 text in a JSON frame (the HTTP endpoint, telemetry),
 * or a view of the received buffer in a binary frame message (replay websocket).
 */
export type FrameBytes = string | Uint8Array;

export interface FrameLink {
  readonly link: number | null;
  /** The ends as people name them (frames from before names: their ids); shown, never matched. */
  readonly from: string;
  readonly to: string;
  readonly utilization: number;
  readonly congestion: number;
  readonly linkClass: string;
}

export interface FrameTotals {
  readonly bytes: number | null;
  readonly meanUtilization: number | null;
  readonly maxUtilization: number | null;
  readonly maxCongestion: number | null;
}

export interface TelemetryReport {
  readonly samples: number | null;
  /** How many `node:port`s of the batch are at no end of a link of the fabric. */
  readonly unknownPorts: number;
  /** The first of them, as the server lists them. */
  readonly unknownList: readonly string[];
}

/**
 * Bytes between leaf groups during the frame's window (`leaf_matrix`): G group
 * names (a name may be a range of bucketed leaves) and G x G bytes, row-major,
 * row the sending group: byte / 255 * scaleBytes. Decoded by leafMatrix.ts.
 */
export interface LeafMatrixData {
  readonly groups: readonly string[];
  readonly scaleBytes: number;
  readonly values: FrameBytes;
}

/** At most this many groups a side. */
export const MAX_LEAF_GROUPS = 64;

export interface Frame {
  readonly source: string;
  /** The window, in simulated seconds (telemetry: seconds since the epoch). */
  readonly tS: number;
  readonly tEndS: number;
  readonly links: number;
  /** One byte per link: byte / 255 of the bandwidth. Decoded on demand. */
  readonly utilization: FrameBytes;
  /** One byte per link: 2 * byte / 255. */
  readonly congestion: FrameBytes | null;
  readonly top: readonly FrameLink[];
  readonly activeCount: number | null;
  readonly eventsDone: number | null;
  readonly eventsTotal: number | null;
  readonly totals: FrameTotals;
  readonly telemetry: TelemetryReport | null;
  /** The snapshot whose links the bytes follow, when the server says (telemetry uses the fabric's latest). */
  readonly snapshot: number | null;
  /** Leaf-to-leaf bytes, when the server sends them (not older replays, not fabrics without leaves). */
  readonly leafMatrix: LeafMatrixData | null;
}

function count(value: unknown): number | null {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : null;
}

/** The bytes of a base64 string; null when it is not base64. */
export function decodeBase64(text: string): Uint8Array | null {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) {
    bytes[i] = binary.charCodeAt(i);
  }
  return bytes;
}

/** The bytes themselves (a binary frame's view, not copied), or those of base64 text; null when it is not base64. */
export function frameBytes(source: FrameBytes): Uint8Array | null {
  return typeof source === "string" ? decodeBase64(source) : source;
}

function isFrameBytes(value: unknown): value is FrameBytes {
  return typeof value === "string" || value instanceof Uint8Array;
}

function scaled(source: FrameBytes, scale: number, links?: number): Float32Array | null {
  const bytes = frameBytes(source);
  if (bytes === null) {
    return null;
  }
  const length = links ?? bytes.length;
  const values = new Float32Array(length).fill(Number.NaN);
  const known = Math.min(length, bytes.length);
  for (let i = 0; i < known; i += 1) {
    values[i] = ((bytes[i] as number) * scale) / 255;
  }
  return values;
}

/**
 * Per-link utilisation 0..1 (byte / 255). With `links`, the array has exactly
 * that length: links the bytes do not cover are NaN (drawn without a colour).
 */
export function decodeUtilisation(source: FrameBytes, links?: number): Float32Array | null {
  return scaled(source, 1, links);
}

/** Per-link congestion 0..2 (2 * byte / 255, saturating). */
export function decodeCongestion(source: FrameBytes, links?: number): Float32Array | null {
  return scaled(source, 2, links);
}

function parseFrameLink(value: unknown): FrameLink[] {
  if (!isRecord(value)) {
    return [];
  }
  const { from, to } = value;
  const utilization = finite(value["utilization"]);
  if (typeof from !== "string" || typeof to !== "string" || utilization === null) {
    return [];
  }
  const { from_name: fromName, to_name: toName } = value;
  return [
    {
      link: count(value["link"]),
      from: typeof fromName === "string" ? fromName : from,
      to: typeof toName === "string" ? toName : to,
      utilization,
      congestion: finite(value["congestion"]) ?? utilization,
      linkClass: typeof value["class"] === "string" ? value["class"] : "",
    },
  ];
}

function parseTelemetryReport(value: unknown): TelemetryReport | null {
  if (!isRecord(value)) {
    return null;
  }
  // The report counts them (`unknown_ports`) and lists the first (`unknown`); either may be a list.
  const listed = [value["unknown"], value["unknown_ports"]].find(Array.isArray) ?? [];
  const unknownList = listed.filter((item): item is string => typeof item === "string");
  return {
    samples: count(value["samples"]),
    unknownPorts: count(value["unknown_ports"]) ?? unknownList.length,
    unknownList,
  };
}

/** A frame's `leaf_matrix`, or null when absent or malformed (no groups, more than 64, no bytes). */
export function parseLeafMatrix(value: unknown): LeafMatrixData | null {
  if (!isRecord(value)) {
    return null;
  }
  const { groups, values } = value;
  const scaleBytes = finite(value["scale_bytes"]);
  if (
    !Array.isArray(groups) ||
    groups.length === 0 ||
    groups.length > MAX_LEAF_GROUPS ||
    !groups.every((name) => typeof name === "string") ||
    scaleBytes === null ||
    scaleBytes < 0 ||
    !isFrameBytes(values)
  ) {
    return null;
  }
  return { groups: groups as string[], scaleBytes, values };
}

/** A FRAME, or null when it lacks the window or the utilisation bytes. */
export function parseFrame(value: unknown): Frame | null {
  if (!isRecord(value)) {
    return null;
  }
  const tS = finite(value["t_s"]);
  const utilization = value["utilization"];
  if (tS === null || !isFrameBytes(utilization)) {
    return null;
  }
  const totals = isRecord(value["totals"]) ? value["totals"] : {};
  const top = value["top"];
  return {
    source: typeof value["source"] === "string" ? value["source"] : "",
    tS,
    tEndS: finite(value["t_end_s"]) ?? tS,
    links: count(value["links"]) ?? 0,
    utilization,
    congestion: isFrameBytes(value["congestion"]) ? value["congestion"] : null,
    top: Array.isArray(top) ? top.flatMap(parseFrameLink) : [],
    activeCount: count(value["active_count"]),
    eventsDone: count(value["events_done"]),
    eventsTotal: count(value["events_total"]),
    totals: {
      bytes: finite(totals["bytes"]),
      meanUtilization: finite(totals["mean_utilization"]),
      maxUtilization: finite(totals["max_utilization"]),
      maxCongestion: finite(totals["max_congestion"]),
    },
    telemetry: parseTelemetryReport(value["telemetry"]),
    snapshot: count(value["snapshot"]),
    leafMatrix: parseLeafMatrix(value["leaf_matrix"]),
  };
}

/** The frame's per-link utilisation, one value per link of the frame (NaN where undecodable). */
export function frameUtilisation(frame: Frame): Float32Array | null {
  return decodeUtilisation(frame.utilization, frame.links > 0 ? frame.links : undefined);
}

/**
 * Whether a frame describes other links than a map of `linkCount` links (of
 * `snapshot`, when known) draws: frames follow their snapshot's link order, so
 * its bytes would land on the wrong links.
 */
export function frameMismatch(frame: Frame, linkCount: number | undefined, snapshot?: unknown): "snapshot" | "links" | null {
  if (frame.snapshot !== null && typeof snapshot === "number" && frame.snapshot !== snapshot) {
    return "snapshot";
  }
  return linkCount !== undefined && frame.links > 0 && frame.links !== linkCount ? "links" : null;
}

/**
 * The frame endpoint's answer: `{"index", "frame"}` (twin/runs/api.py), or a
 * bare FRAME. `index` is null when the answer does not say.
 */
export function parseFrameAnswer(value: unknown): { index: number | null; frame: Frame } | null {
  if (isRecord(value) && isRecord(value["frame"])) {
    const frame = parseFrame(value["frame"]);
    return frame === null ? null : { index: count(value["index"]), frame };
  }
  const frame = parseFrame(value);
  return frame === null ? null : { index: isRecord(value) ? count(value["index"]) : null, frame };
}

/** Why a frame is not drawn on a map of `model` (another snapshot, other links), or null when it fits. */
export function mismatchNote(frame: Frame, model: { readonly linkCount: number; readonly snapshot?: unknown } | undefined, t: Translate): string | null {
  switch (frameMismatch(frame, model?.linkCount, model?.snapshot)) {
    case "snapshot":
      return t("frames.otherSnapshot", { frame: String(frame.snapshot), map: String(model?.snapshot) });
    case "links":
      return t("frames.mismatch", { frame: frame.links, map: model?.linkCount ?? 0 });
    default:
      return null;
  }
}

// ---- websocket messages -----------------------------------------------------

function parseJson(data: string): Json | null {
  let message: unknown;
  try {
    message = JSON.parse(data) as unknown;
  } catch {
    return null;
  }
  return isRecord(message) ? message : null;
}

export interface ReplayState {
  readonly playing: boolean;
  /** 0.25 .. 64, or 0 for "as fast as possible". */
  readonly speed: number;
  readonly loop: boolean;
  readonly index: number;
  readonly frames: number;
}

export type ReplayMessage =
  | { readonly type: "state"; readonly state: ReplayState }
  | { readonly type: "frame"; readonly seq: number; readonly index: number; readonly frame: Frame }
  | { readonly type: "error"; readonly detail: string }
  /** A binary frame message of a layout this page does not know (a newer server): nothing to draw. */
  | { readonly type: "unsupported"; readonly version: number };

export function parseReplayState(value: unknown): ReplayState | null {
  if (!isRecord(value)) {
    return null;
  }
  const { playing, loop } = value;
  const speed = finite(value["speed"]);
  const index = count(value["index"]);
  const frames = count(value["frames"]);
  if (typeof playing !== "boolean" || speed === null || speed < 0 || index === null || frames === null) {
    return null;
  }
  return { playing, speed, loop: loop === true, index, frames };
}

/**
 * A message of the replay socket, text (JSON) or binary (a frame message), or
 * null for anything else (unknown types, malformed JSON or bytes).
 */
export function parseReplayMessage(data: string | ArrayBuffer): ReplayMessage | null {
  let message: Json | null;
  if (typeof data === "string") {
    message = parseJson(data);
  } else {
    const decoded = decodeFrameMessage(data);
    if (decoded.kind === "unsupported") {
      return { type: "unsupported", version: decoded.version };
    }
    message = decoded.kind === "message" ? decoded.message : null;
  }
  if (message === null) {
    return null;
  }
  switch (message["type"]) {
    case "replay.state": {
      const state = parseReplayState(message["state"]);
      return state === null ? null : { type: "state", state };
    }
    case "replay.frame": {
      const seq = message["seq"];
      const index = count(message["index"]);
      const frame = parseFrame(message["frame"]);
      return Number.isSafeInteger(seq) && index !== null && frame !== null ? { type: "frame", seq: seq as number, index, frame } : null;
    }
    case "replay.error": {
      const detail = message["detail"];
      return { type: "error", detail: typeof detail === "string" ? detail : "" };
    }
    default:
      return null;
  }
}

export interface TelemetryMessage {
  readonly seq: number;
  readonly frame: Frame;
}

/** A "fabric.telemetry" message of the fabric socket, or null. */
export function parseTelemetryMessage(data: string): TelemetryMessage | null {
  const message = parseJson(data);
  if (message === null || message["type"] !== "fabric.telemetry" || !Number.isSafeInteger(message["seq"])) {
    return null;
  }
  const frame = parseFrame(message["frame"]);
  return frame === null ? null : { seq: message["seq"] as number, frame };
}

/**
 * Keeps the highest seq applied. Frames are complete snapshots, so a late or
 * duplicate one is skipped without loss: `accept` says whether to apply it.
 */
export class SeqGate {
  private last = Number.NEGATIVE_INFINITY;

  accept(seq: number): boolean {
    if (seq <= this.last) {
      return false;
    }
    this.last = seq;
    return true;
  }

  /** Forgets the history, e.g. after the server restarted its numbering. */
  reset(): void {
    this.last = Number.NEGATIVE_INFINITY;
  }
}
