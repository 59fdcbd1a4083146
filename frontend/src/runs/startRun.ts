// Starting runs: one path for the "Compute hop statistics" button and the
// collective form. POST a new run, then show its live widget in the slot (or
// the server's error message there).

import { element } from "../core/dom";
import { InvalidResponseError, describeRequestError } from "../core/http";
import type { RunFeed } from "./runFeed";
import { parseRun, type Run } from "./runState";
import { buildRunWidget, mountRunWidget, type RunListener, type RunWidgetContext } from "./runWidget";

interface CreatedRun {
  readonly run: Run;
  readonly url: string;
  readonly wsUrl: string;
}

function parseCreatedRun(body: unknown): CreatedRun | null {
  const run = parseRun(body);
  if (run === null) {
    return null;
  }
  const { url, ws_url: wsUrl } = body as Record<string, unknown>;
  return typeof url === "string" && typeof wsUrl === "string" ? { run, url, wsUrl } : null;
}

/**
 * The snapshot id from a `data-snapshot` attribute. An unparseable one is sent
 * as null so the server's validation message, not a client guess, explains it.
 */
export function snapshotId(value: string | undefined): number | null {
  const id = Number.parseInt(value ?? "", 10);
  return Number.isInteger(id) ? id : null;
}

/** The body of POST /api/runs/. */
export interface RunRequest {
  readonly kind: string;
  readonly snapshot: number | null;
  readonly params?: object;
}

export type StartOutcome = { readonly ok: true; readonly run: Run } | { readonly ok: false; readonly error: unknown };

export interface RunLauncher {
  /**
   * POSTs the run and shows its live widget in the slot, replacing (and
   * stopping) the one shown before; on failure the slot shows why. Never rejects.
   */
  start(request: RunRequest): Promise<StartOutcome>;
  /** The same, for a run that `create` starts (e.g. a server-rendered form posted as it is) and answers as POST /api/runs/ does. */
  launch(create: () => Promise<unknown>): Promise<StartOutcome>;
}

/** The widget a slot already shows (a deep link's run, rendered by the server), for the launcher to keep current and replace. */
function shownWidget(slot: HTMLElement): HTMLElement | null {
  return slot.querySelector<HTMLElement>(".run-widget");
}

export function runLauncher(runsUrl: string, slot: HTMLElement, context: RunWidgetContext, onRun?: RunListener): RunLauncher {
  const shown = shownWidget(slot);
  let currentFeed: RunFeed | null = shown === null ? null : mountRunWidget(shown, context, undefined, onRun);
  const launch = async (create: () => Promise<unknown>): Promise<StartOutcome> => {
    try {
      const created = parseCreatedRun(await create());
      if (created === null) {
        throw new InvalidResponseError();
      }
      // The replaced widget's socket would otherwise keep reconnecting unseen.
      currentFeed?.stop();
      const widget = buildRunWidget(context.doc, created.url, created.wsUrl);
      slot.replaceChildren(widget);
      currentFeed = mountRunWidget(widget, context, created.run, onRun);
      return { ok: true, run: created.run };
    } catch (error) {
      currentFeed?.stop();
      currentFeed = null;
      slot.replaceChildren(element(context.doc, "div", { class: "error" }, [describeRequestError(error, context.t)]));
      return { ok: false, error };
    }
  };
  return {
    start: (request) => launch(() => context.http.post(runsUrl, request)),
    launch,
  };
}

export function wireStartButton(button: HTMLButtonElement, slot: HTMLElement, context: RunWidgetContext, onRun?: RunListener): void {
  const launcher = runLauncher(button.dataset["runsUrl"] ?? "", slot, context, onRun);
  const snapshot = snapshotId(button.dataset["snapshot"]);

  button.addEventListener("click", () => {
    button.disabled = true;
    void launcher.start({ kind: "hop_stats", snapshot }).finally(() => {
      button.disabled = false;
    });
  });
}
