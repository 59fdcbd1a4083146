// The upload page's JSON answers, parsed defensively, and where a rejection's
// problems belong in the form. Pure: no DOM access.

import { isRecord, text, type Json } from "../core/json";

/** A label and its count, in the order the server sent them. */
export type Count = readonly [label: string, count: number];

export interface UploadSummary {
  readonly nodes: number;
  readonly links: number;
  readonly nodesByKind: readonly Count[];
  readonly linksByState: readonly Count[];
  readonly linksBySpeed: readonly Count[];
  readonly warnings: readonly string[];
}

/** 201: the snapshot the upload created. */
export interface StoredUpload {
  readonly url: string;
  readonly snapshot: number;
  readonly version: number;
  readonly format: string;
  readonly summary: UploadSummary;
}

/** One file's problems; `source` is the file name (null when the problem is not one file's). */
export interface FileProblems {
  readonly source: string | null;
  readonly problems: readonly string[];
  readonly truncated: boolean;
}

/** 400: nothing was stored, and why. */
export interface UploadRejection {
  readonly detail: string | null;
  /** Form field name (or "__all__") with its messages. */
  readonly fieldErrors: readonly (readonly [field: string, messages: readonly string[]])[];
  readonly files: readonly FileProblems[];
}

function asObject(value: unknown): Json | null {
  return isRecord(value) ? value : null;
}

function asCounts(value: unknown): Count[] {
  return Object.entries(asObject(value) ?? {}).flatMap(([label, count]): Count[] =>
    typeof count === "number" && Number.isFinite(count) ? [[label, count]] : [],
  );
}

function asCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function asStrings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string" && item !== "") : [];
}

export function parseStoredUpload(body: unknown): StoredUpload | null {
  const json = asObject(body);
  if (json === null) {
    return null;
  }
  const { url, snapshot, version, format } = json;
  if (typeof url !== "string" || url === "" || !Number.isInteger(snapshot) || !Number.isInteger(version)) {
    return null;
  }
  const summary = asObject(json["summary"]) ?? {};
  return {
    url,
    snapshot: snapshot as number,
    version: version as number,
    format: typeof format === "string" ? format : "",
    summary: {
      nodes: asCount(summary["nodes"]),
      links: asCount(summary["links"]),
      nodesByKind: asCounts(summary["nodes_by_kind"]),
      linksByState: asCounts(summary["links_by_state"]),
      linksBySpeed: asCounts(summary["links_by_speed"]),
      warnings: asStrings(summary["warnings"]),
    },
  };
}

function parseFileProblems(value: unknown): FileProblems | null {
  const json = asObject(value);
  if (json === null) {
    return null;
  }
  const problems = (Array.isArray(json["problems"]) ? json["problems"] : []).flatMap((problem: unknown) => {
    const detailText = text(asObject(problem)?.["detail"]);
    return detailText === null ? [] : [detailText];
  });
  // Every IngestError carries at least one problem; fall back to its sentence all the same.
  const detail = text(json["detail"]);
  if (problems.length === 0 && detail !== null) {
    problems.push(detail);
  }
  if (problems.length === 0) {
    return null;
  }
  return { source: text(json["source"]), problems, truncated: json["truncated"] === true };
}

/** The 400 body, or null when it has none of the expected parts (then only a status is known). */
export function parseUploadRejection(body: unknown): UploadRejection | null {
  const json = asObject(body);
  if (json === null) {
    return null;
  }
  const fieldErrors = Object.entries(asObject(json["errors"]) ?? {}).flatMap(
    ([field, messages]): [string, string[]][] => {
      const texts = asStrings(messages);
      return texts.length === 0 ? [] : [[field, texts]];
    },
  );
  const files = (Array.isArray(json["files"]) ? json["files"] : []).flatMap((file: unknown) => {
    const parsed = parseFileProblems(file);
    return parsed === null ? [] : [parsed];
  });
  const detail = text(json["detail"]);
  if (fieldErrors.length === 0 && files.length === 0 && detail === null) {
    return null;
  }
  return { detail, fieldErrors, files };
}

export interface RejectionPlacement {
  /** Problems to show under the file list entry of that name (an archive's include its members'). */
  readonly byFile: ReadonlyMap<string, readonly FileProblems[]>;
  /** Problems of no listed file (merge conflicts, unknown names): shown above the result. */
  readonly unmatchedFiles: readonly FileProblems[];
  /** Messages to show after the input of that name. */
  readonly byField: ReadonlyMap<string, readonly string[]>;
  /** Non-field errors and errors of fields the form does not have. */
  readonly unplaced: readonly string[];
}

/**
 * The listed file a problem belongs to: the file itself, or the archive that a member named
 * `<archive>/<member path>` came from (file names from a browser never hold a slash).
 */
function listedFileOf(source: string, fileNames: ReadonlySet<string>): string | null {
  if (fileNames.has(source)) {
    return source;
  }
  const slash = source.indexOf("/");
  const archive = slash > 0 ? source.slice(0, slash) : null;
  return archive !== null && fileNames.has(archive) ? archive : null;
}

/** Decides where each part of a rejection goes, given the listed file names and the form's field names. */
export function placeRejection(
  rejection: UploadRejection,
  fileNames: ReadonlySet<string>,
  fieldNames: ReadonlySet<string>,
): RejectionPlacement {
  const byFile = new Map<string, FileProblems[]>();
  const unmatchedFiles: FileProblems[] = [];
  for (const file of rejection.files) {
    const listed = file.source === null ? null : listedFileOf(file.source, fileNames);
    if (listed !== null) {
      byFile.set(listed, [...(byFile.get(listed) ?? []), file]);
    } else {
      unmatchedFiles.push(file);
    }
  }
  const byField = new Map<string, string[]>();
  const unplaced: string[] = [];
  for (const [field, messages] of rejection.fieldErrors) {
    if (fieldNames.has(field)) {
      byField.set(field, [...messages]);
    } else {
      unplaced.push(...messages);
    }
  }
  return { byFile, unmatchedFiles, byField, unplaced };
}
