// Reading JSON from the server defensively: one definition of "an object" and "a number".

export type Json = Record<string, unknown>;

/** A JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value if it is a finite number, else null. */
export function finite(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The value if it is a non-empty string, else null: an empty name is no name. */
export function text(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
