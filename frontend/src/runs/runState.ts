// The run model shared by the HTTP API and the websocket, plus the pure rules
// for deciding which snapshot the page should show.

import type { Language } from "../core/i18n";
import { isRecord } from "../core/json";

export type RunStatus = "pending" | "running" | "succeeded" | "failed" | "cancelled";

export interface Run {
  readonly id: number;
  readonly kind: string;
  readonly status: RunStatus;
  /** 0..1 */
  readonly progress: number;
  /** The progress message in the language the server answered in (an HTTP request's). */
  readonly message: string;
  /** The message in each language of the site: one websocket frame serves every viewer. */
  readonly messages: Readonly<Record<string, string>>;
  readonly result: unknown;
  /** Why it failed or was cancelled, in the language the server answered in. */
  readonly error: string | null;
  /** The error in each language of the site, like `messages`. */
  readonly errors: Readonly<Record<string, string>>;
  readonly created_at: string | null;
  readonly started_at: string | null;
  readonly finished_at: string | null;
}

export interface RunStateFrame {
  readonly seq: number;
  readonly run: Run;
}

const RUN_STATUSES: ReadonlySet<string> = new Set<RunStatus>(["pending", "running", "succeeded", "failed", "cancelled"]);

export function isTerminal(status: RunStatus): boolean {
  return status === "succeeded" || status === "failed" || status === "cancelled";
}

/** Whether the page's user may cancel runs: `<body data-user-role>` is "operator" or "admin". */
export function canCancelRuns(role: string | undefined): boolean {
  return role === "operator" || role === "admin";
}

/** A run's sub-resource URL from its own: "/api/runs/12/" + "cancel" -> "/api/runs/12/cancel/". */
export function runSubresourceUrl(runUrl: string, name: string): string {
  return `${runUrl.endsWith("/") ? runUrl : `${runUrl}/`}${name}/`;
}

function optionalString(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function stringsByKey(value: unknown): Record<string, string> {
  if (!isRecord(value)) {
    return {};
  }
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}

/** The run's progress message in the page's language (else as the server sent it). */
export function runMessage(run: Run, language: Language): string {
  return run.messages[language] ?? run.message;
}

/** Why the run failed or was cancelled, in the page's language (else as the server sent it). */
export function runError(run: Run, language: Language): string | null {
  return run.errors[language] ?? run.error;
}

/** Validates a RUN object from either transport; null when it is not one. */
export function parseRun(value: unknown): Run | null {
  if (!isRecord(value)) {
    return null;
  }
  const { id, kind, status, progress } = value;
  if (typeof id !== "number" || typeof kind !== "string" || typeof status !== "string" || !RUN_STATUSES.has(status)) {
    return null;
  }
  return {
    id,
    kind,
    status: status as RunStatus,
    progress: typeof progress === "number" && Number.isFinite(progress) ? Math.min(Math.max(progress, 0), 1) : 0,
    message: optionalString(value["message"]) ?? "",
    messages: stringsByKey(value["messages"]),
    result: value["result"] ?? null,
    error: optionalString(value["error"]),
    errors: stringsByKey(value["errors"]),
    created_at: optionalString(value["created_at"]),
    started_at: optionalString(value["started_at"]),
    finished_at: optionalString(value["finished_at"]),
  };
}

/** Parses one websocket message; anything that is not a well-formed run.state frame yields null. */
export function parseRunStateFrame(data: string): RunStateFrame | null {
  let message: unknown;
  try {
    message = JSON.parse(data);
  } catch {
    return null;
  }
  if (!isRecord(message) || message["type"] !== "run.state" || !Number.isInteger(message["seq"])) {
    return null;
  }
  const run = parseRun(message["run"]);
  return run === null ? null : { seq: message["seq"] as number, run };
}

export interface RunTracker {
  readonly run: Run | null;
  /** Highest websocket seq applied so far; -Infinity before the first frame. */
  readonly lastSeq: number;
  /** Websocket frames applied (HTTP snapshots are not frames). */
  readonly framesApplied: number;
}

export const EMPTY_TRACKER: RunTracker = { run: null, lastSeq: Number.NEGATIVE_INFINITY, framesApplied: 0 };

/**
 * Applies a websocket frame if it is newer than anything applied before.
 * Returns the same tracker object when the frame is ignored.
 *
 * Frames are complete snapshots, so skipping a late or duplicate one loses
 * nothing. A terminal run is final: nothing may replace it, which also covers
 * a stale frame arriving after the HTTP snapshot already showed the outcome.
 */
export function applyFrame(tracker: RunTracker, frame: RunStateFrame): RunTracker {
  if (frame.seq <= tracker.lastSeq || (tracker.run !== null && isTerminal(tracker.run.status))) {
    return tracker;
  }
  return { run: frame.run, lastSeq: frame.seq, framesApplied: tracker.framesApplied + 1 };
}

/**
 * Applies a snapshot fetched over HTTP. It carries no seq, so it is only
 * trusted where it cannot move the view backwards: when nothing is shown yet,
 * or when it reports the outcome the view has not reached.
 */
export function applySnapshot(tracker: RunTracker, run: Run): RunTracker {
  const showsNothing = tracker.run === null;
  const addsOutcome = isTerminal(run.status) && tracker.run !== null && !isTerminal(tracker.run.status);
  return showsNothing || addsOutcome ? { ...tracker, run } : tracker;
}
