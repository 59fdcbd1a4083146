// DOM wiring for the "Compute hop statistics" button: POST a new run, then
// show its live widget in #run-slot (or the server's error message).

import { element } from "./dom";
import { InvalidResponseError, describeRequestError } from "./http";
import type { RunFeed } from "./runFeed";
import { parseRun, type Run } from "./runState";
import { buildRunWidget, mountRunWidget, type RunWidgetContext } from "./runWidget";

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

export function wireStartButton(button: HTMLButtonElement, slot: HTMLElement, context: RunWidgetContext): void {
  const runsUrl = button.dataset["runsUrl"] ?? "";
  // An unparseable snapshot id is sent as null so the server's validation
  // message, not a client guess, explains the problem.
  const snapshotId = Number.parseInt(button.dataset["snapshot"] ?? "", 10);
  const snapshot = Number.isInteger(snapshotId) ? snapshotId : null;
  let currentFeed: RunFeed | null = null;

  const start = async (): Promise<void> => {
    button.disabled = true;
    try {
      const created = parseCreatedRun(await context.http.post(runsUrl, { kind: "hop_stats", snapshot }));
      if (created === null) {
        throw new InvalidResponseError();
      }
      // The replaced widget's socket would otherwise keep reconnecting unseen.
      currentFeed?.stop();
      const widget = buildRunWidget(context.doc, created.url, created.wsUrl);
      slot.replaceChildren(widget);
      currentFeed = mountRunWidget(widget, context, created.run);
    } catch (error) {
      currentFeed?.stop();
      currentFeed = null;
      slot.replaceChildren(element(context.doc, "div", { class: "error" }, [describeRequestError(error, context.t)]));
    } finally {
      button.disabled = false;
    }
  };

  button.addEventListener("click", () => void start());
}
