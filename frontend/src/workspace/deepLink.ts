// Deep links into the fabric workspace: the page's query holds what is shown
// (the fabric is the path: /fabrics/<id>/), e.g.
//   /fabrics/3/?snapshot=7&run=42&frame=120&node=leaf-07
// or, with a link picked on the map instead of a node, ...&link=1093 (its index in the layout).
// Opening it restores the same view; every change is written back with
// history.replaceState, so the address bar can be copied at any time.

export interface ViewLink {
  readonly snapshot: number | null;
  readonly run: number | null;
  /** Replay frame, 0-based as the frames API counts. */
  readonly frame: number | null;
  /** The selected node's id (as the layout names it). */
  readonly node: string | null;
  /** The picked link: its index in the snapshot's layout (as failures name links, `link:<i>`). */
  readonly link: number | null;
}

export const EMPTY_LINK: ViewLink = { snapshot: null, run: null, frame: null, node: null, link: null };

const KEYS = ["snapshot", "run", "frame", "node", "link"] as const;
const MAX_NODE_ID = 200;

function wholeNumber(text: string | null, min: number): number | null {
  if (text === null || !/^\d{1,12}$/.test(text)) {
    return null;
  }
  const value = Number(text);
  return value >= min ? value : null;
}

export function parseViewLink(search: string): ViewLink {
  const query = new URLSearchParams(search);
  const node = query.get("node");
  return {
    snapshot: wholeNumber(query.get("snapshot"), 1),
    run: wholeNumber(query.get("run"), 1),
    frame: wholeNumber(query.get("frame"), 0),
    node: node !== null && node !== "" && node.length <= MAX_NODE_ID ? node : null,
    link: wholeNumber(query.get("link"), 0),
  };
}

/** `search` with the link's values written (null removes one); other parameters (compare, page…) are kept. */
export function writeViewLink(search: string, link: ViewLink): string {
  const query = new URLSearchParams(search);
  for (const key of KEYS) {
    const value = link[key];
    if (value === null) {
      query.delete(key);
    } else {
      query.set(key, String(value));
    }
  }
  const text = query.toString();
  return text === "" ? "" : `?${text}`;
}

export interface ViewLinkWriter {
  readonly current: ViewLink;
  /** Changes some of the link's values and writes the address bar (only when it changed). */
  update(change: Partial<ViewLink>): void;
}

export type ReplaceUrl = (url: string) => void;

/** Keeps `location`'s query in step with the view; `replace` is history.replaceState's URL half. */
export function viewLinkWriter(location: Pick<Location, "pathname" | "search" | "hash">, replace: ReplaceUrl): ViewLinkWriter {
  let current = parseViewLink(location.search);
  let search = location.search;
  return {
    get current() {
      return current;
    },
    update(change) {
      const next: ViewLink = { ...current, ...change };
      // A run other than the one the frame was of: its frame means nothing.
      current = change.run !== undefined && change.run !== current.run && change.frame === undefined ? { ...next, frame: null } : next;
      const written = writeViewLink(search, current);
      if (written !== search) {
        search = written;
        replace(`${location.pathname}${written}${location.hash}`);
      }
    },
  };
}
