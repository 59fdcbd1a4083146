// The search box's keyboard model: a list of results and an active row,
// moved by the arrow keys, chosen with Enter, dismissed with Escape. Pure, so
// the rules are tested without a DOM.

export interface SearchResult {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  readonly tier: string | null;
  readonly host: string | null;
  readonly match: string;
}

export interface SearchState {
  readonly results: readonly SearchResult[];
  /** Index of the active row, -1 for none. */
  readonly active: number;
  readonly open: boolean;
}

export const CLOSED: SearchState = { results: [], active: -1, open: false };

export type SearchKeyOutcome =
  | { readonly kind: "move"; readonly state: SearchState }
  | { readonly kind: "choose"; readonly result: SearchResult; readonly state: SearchState }
  | { readonly kind: "close"; readonly state: SearchState }
  | { readonly kind: "ignore" };

export function withResults(results: readonly SearchResult[]): SearchState {
  return { results, active: results.length > 0 ? 0 : -1, open: true };
}

/** What a key does in the search box; "ignore" lets the browser handle it (typing). */
export function searchKey(state: SearchState, key: string): SearchKeyOutcome {
  const count = state.results.length;
  switch (key) {
    case "ArrowDown":
      if (count === 0) {
        return { kind: "ignore" };
      }
      return { kind: "move", state: { ...state, open: true, active: state.open ? (state.active + 1) % count : 0 } };
    case "ArrowUp":
      if (count === 0) {
        return { kind: "ignore" };
      }
      return {
        kind: "move",
        state: { ...state, open: true, active: state.open ? (state.active - 1 + count) % count : count - 1 },
      };
    case "Home":
    case "End":
      if (!state.open || count === 0) {
        return { kind: "ignore" };
      }
      return { kind: "move", state: { ...state, active: key === "Home" ? 0 : count - 1 } };
    case "Enter": {
      const result = state.results[state.active >= 0 ? state.active : 0];
      if (!state.open || result === undefined) {
        return { kind: "ignore" };
      }
      return { kind: "choose", result, state: { ...state, open: false } };
    }
    case "Escape":
      return state.open ? { kind: "close", state: { ...state, open: false } } : { kind: "ignore" };
    default:
      return { kind: "ignore" };
  }
}

/** Parses the search endpoint's answer, dropping malformed rows. */
export function parseSearchResults(value: unknown): SearchResult[] {
  const results = (value as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) {
    return [];
  }
  return results.flatMap((row): SearchResult[] => {
    if (typeof row !== "object" || row === null) {
      return [];
    }
    const { id, name, kind, tier, host, match } = row as Record<string, unknown>;
    if (typeof id !== "string") {
      return [];
    }
    return [
      {
        id,
        name: typeof name === "string" ? name : id,
        kind: typeof kind === "string" ? kind : "",
        tier: typeof tier === "string" ? tier : null,
        host: typeof host === "string" ? host : null,
        match: typeof match === "string" ? match : "name",
      },
    ];
  });
}

/** Local search over the layout's names and ids (used when the page has no search endpoint). */
export function searchLocally(
  ids: readonly string[],
  names: readonly string[],
  kinds: readonly string[],
  tiers: readonly (string | null)[],
  query: string,
  limit = 20,
): SearchResult[] {
  const needle = query.trim().toLowerCase();
  if (needle === "") {
    return [];
  }
  const exact: SearchResult[] = [];
  const partial: SearchResult[] = [];
  for (let i = 0; i < ids.length && exact.length < limit; i += 1) {
    const name = names[i] ?? "";
    const id = ids[i] ?? "";
    const lowerName = name.toLowerCase();
    const hit = lowerName.includes(needle) ? "name" : id.toLowerCase().includes(needle) ? "guid" : null;
    if (hit === null) {
      continue;
    }
    const result = { id, name, kind: kinds[i] ?? "", tier: tiers[i] ?? null, host: null, match: hit };
    (lowerName === needle || id.toLowerCase() === needle ? exact : partial).push(result);
  }
  return [...exact, ...partial].slice(0, limit);
}
