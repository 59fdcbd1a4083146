// The fabric workspace: the docks (dock.ts), the user's layout saved on the
// server, the deep link in the address bar (deepLink.ts), and what a run in
// one of the panels does to the rest of the view: its result drawn on the map
// (a collective's utilisation, a placement's best strategy, the worst failure,
// hop statistics as each card's hops from one card),
// a replay's player in the bottom dock, its id and frame in the URL.

import type { JsonClient } from "../core/http";
import type { Translate } from "../core/i18n";
import type { Timers } from "../core/timers";
import { parseFailuresResult } from "../runs/failures";
import { parsePlacementResult } from "../runs/placement";
import type { RunMapMarks } from "../runs/runMarks";
import type { RunOverlay } from "../runs/runOverlay";
import type { Run } from "../runs/runState";
import type { RunListener } from "../runs/runWidget";
import { viewLinkWriter, type ReplaceUrl, type ViewLinkWriter } from "./deepLink";
import { mountDock, type Dock } from "./dock";
import { parseLayout } from "./layout";

export interface WorkspaceContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly http: JsonClient;
  readonly timers: Timers;
  readonly location: Pick<Location, "pathname" | "search" | "hash">;
  readonly replaceUrl: ReplaceUrl;
}

/** What the workspace draws with; each is absent when the page lacks it. */
export interface WorkspaceDrawing {
  readonly overlay?: RunOverlay | undefined;
  readonly marks?: RunMapMarks | undefined;
  /** Colours the map's cards by their hops from one card; resolves to the sentence for the run's result. */
  readonly showHops?: (() => Promise<string>) | undefined;
  /** Mounts the replay player of `run` in `host` (replacing any other), opening at `startFrame`. */
  readonly showReplay?: ((host: HTMLElement, startFrame: number | null) => void) | undefined;
}

export interface Workspace {
  readonly dock: Dock;
  readonly link: ViewLinkWriter;
  /** For the map: the selected node goes into the URL and the details panel opens. */
  onSelect(id: string | null): void;
  /** For the map: the picked link (layout index) goes into the URL and the details panel opens. */
  onSelectLink(link: number | null): void;
  /** For the run widgets of the panels. */
  readonly onRun: RunListener;
  /** For the replay player: the frame shown goes into the URL (at most every FRAME_WRITE_MS while playing). */
  onFrame(index: number): void;
  /** The deep link's frame for the replay player of run `runId`, once; null for any other run. */
  startFrameFor(runId: number | null): number | null;
}

/** A playing replay shows up to 10 frames a second; browsers refuse history updates that come that fast for long. */
export const FRAME_WRITE_MS = 300;

export function mountWorkspace(root: HTMLElement, context: WorkspaceContext, drawing: WorkspaceDrawing): Workspace {
  const { doc } = context;
  const layoutUrl = root.dataset["layoutUrl"] ?? "";
  let storedLayout: unknown = null;
  try {
    storedLayout = JSON.parse(root.dataset["layout"] ?? "null");
  } catch {
    storedLayout = null; // a broken value: the defaults
  }
  const dock = mountDock(root, {
    doc,
    t: context.t,
    timers: context.timers,
    layout: parseLayout(storedLayout),
    // The layout is a convenience: a failed save leaves the page as it is, and the next change tries again.
    save: (layout) => void context.http.put(layoutUrl, { value: layout }).catch(() => undefined),
  });
  doc.defaultView?.addEventListener("pagehide", () => dock.flush());

  const link = viewLinkWriter(context.location, context.replaceUrl);
  const linkedRun = link.current.run;
  const snapshot = Number.parseInt(root.dataset["snapshot"] ?? "", 10);
  if (Number.isSafeInteger(snapshot)) {
    link.update({ snapshot });
  }

  // The deep link's run is rendered by the server in its kind's panel: open that panel.
  for (const widget of root.querySelectorAll<HTMLElement>(".run-widget")) {
    const panel = widget.closest<HTMLElement>("[data-panel]")?.dataset["panel"];
    if (panel !== undefined) {
      dock.reveal(panel);
    }
  }
  if (doc.getElementById("replay-player") !== null) {
    dock.reveal("player");
  }

  let frameShown: number | null = null;
  let frameTimer: number | null = null;
  const seen = new Set<number>();
  const drawn = new Set<number>();
  let frameGiven = false;

  /** The sentence a mark on the map answers, in the run's result (its "Show on map" status line). */
  const sayInResult = (runUrl: string, sentence: string): void => {
    const status = root.querySelector<HTMLElement>(`.run-widget[data-run-url="${CSS.escape(runUrl)}"] .marks-status`);
    if (status !== null) {
      status.textContent = sentence;
      status.hidden = false;
    }
  };

  const draw = (run: Run, runUrl: string): void => {
    switch (run.kind) {
      case "collective":
        drawing.overlay?.offer(run, runUrl);
        break;
      case "placement": {
        const best = parsePlacementResult(run.result)?.best ?? null;
        if (best !== null && drawing.marks !== undefined) {
          void drawing.marks.showPlacement(runUrl, best).then((sentence) => sayInResult(runUrl, sentence));
        }
        break;
      }
      case "failures": {
        const worst = parseFailuresResult(run.result)?.worst ?? null;
        if (worst !== null && drawing.marks !== undefined) {
          void drawing.marks.showFailure(worst.elements).then((sentence) => sayInResult(runUrl, sentence));
        }
        break;
      }
      case "replay":
        showReplayOf(run);
        break;
      case "hop_stats":
        void drawing.showHops?.().then((sentence) => sayInResult(runUrl, sentence));
        break;
      default:
        break;
    }
  };

  const showReplayOf = (run: Run): void => {
    const existing = doc.getElementById("replay-player");
    // The server rendered this run's player (a deep link): it mounts itself when the run succeeds.
    if (existing !== null && existing.dataset["ws"] === `/ws/replays/${String(run.id)}/`) {
      return;
    }
    const body = doc.getElementById("panel-player-body");
    if (body === null || drawing.showReplay === undefined) {
      return;
    }
    const host = doc.createElement("div");
    host.id = "replay-player";
    host.dataset["ws"] = `/ws/replays/${String(run.id)}/`;
    host.dataset["frameUrl"] = `/api/runs/${String(run.id)}/frames/`;
    host.dataset["canControl"] = String(doc.body.dataset["userRole"] === "operator" || doc.body.dataset["userRole"] === "admin");
    body.replaceChildren(host);
    drawing.showReplay(host, null);
    dock.reveal("player");
  };

  return {
    dock,
    link,
    onSelect(id) {
      link.update({ node: id });
      if (id !== null) {
        dock.reveal("details");
      }
    },
    onSelectLink(index) {
      link.update({ link: index });
      if (index !== null) {
        dock.reveal("details");
      }
    },
    onRun(run, runUrl) {
      if (!seen.has(run.id)) {
        // A run just started in a panel, or the deep link's: the URL names the newest.
        seen.add(run.id);
        link.update({ run: run.id });
      }
      if (run.status === "succeeded" && !drawn.has(run.id)) {
        drawn.add(run.id);
        draw(run, runUrl);
      }
    },
    onFrame(index) {
      frameShown = index;
      frameTimer ??= context.timers.setTimeout(() => {
        frameTimer = null;
        link.update({ frame: frameShown });
      }, FRAME_WRITE_MS);
    },
    startFrameFor(runId) {
      if (frameGiven || runId === null || runId !== linkedRun) {
        return null;
      }
      frameGiven = true;
      return link.current.frame;
    },
  };
}
