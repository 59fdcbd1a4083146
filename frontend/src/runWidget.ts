// DOM wiring for `.run-widget`: feeds HTTP and websocket snapshots into a
// RunFeed and mirrors the shown run into the widget's elements and attributes.

import { element } from "./dom";
import type { JsonClient } from "./http";
import type { MessageKey } from "./i18n";
import { connectionReporter, type LiveStatusMonitor } from "./liveStatus";
import { websocketUrl, type OpenSocket } from "./reconnectingSocket";
import { RunFeed } from "./runFeed";
import { renderRunOutcome, type RenderContext } from "./runResult";
import { isTerminal, parseRun, type Run } from "./runState";
import type { Timers } from "./timers";

export interface RunWidgetContext extends RenderContext {
  readonly http: JsonClient;
  readonly liveStatus: LiveStatusMonitor;
  readonly pageLocation: Pick<Location, "protocol" | "host">;
  readonly openSocket: OpenSocket;
  readonly timers: Timers;
}

/** The same markup the server renders for an existing run. */
export function buildRunWidget(doc: Document, runUrl: string, wsPath: string): HTMLElement {
  return element(doc, "section", { class: "run-widget", "data-run-url": runUrl, "data-run-ws": wsPath }, [
    element(doc, "progress", { class: "run-progress", max: "100", value: "0" }),
    element(doc, "span", { class: "run-status" }),
    " ",
    element(doc, "span", { class: "run-message" }),
    element(doc, "div", { class: "run-result" }),
  ]);
}

/**
 * Starts keeping `widget` current. `knownRun` is a snapshot the caller already
 * holds (e.g. the POST response) so the widget is filled before any round trip.
 */
export function mountRunWidget(widget: HTMLElement, context: RunWidgetContext, knownRun?: Run): RunFeed {
  const progress = widget.querySelector<HTMLProgressElement>(".run-progress");
  const status = widget.querySelector<HTMLElement>(".run-status");
  const message = widget.querySelector<HTMLElement>(".run-message");
  const result = widget.querySelector<HTMLElement>(".run-result");
  const { runUrl, runWs } = widget.dataset;

  const show = (run: Run, framesApplied: number): void => {
    widget.dataset["status"] = run.status;
    widget.dataset["frames"] = String(framesApplied);
    if (progress !== null) {
      progress.value = run.progress * 100;
    }
    if (status !== null) {
      const label: MessageKey = `run.status.${run.status}`;
      status.textContent = context.t(label);
      status.className = `run-status badge badge-${run.status}`;
    }
    if (message !== null) {
      message.textContent = run.message;
    }
    if (result !== null && isTerminal(run.status)) {
      result.replaceChildren(renderRunOutcome(run, context));
    }
  };

  const feed = new RunFeed({
    url: websocketUrl(context.pageLocation, runWs ?? ""),
    onRun: show,
    ...connectionReporter(context.liveStatus),
    openSocket: context.openSocket,
    timers: context.timers,
  });

  widget.dataset["frames"] = "0";
  if (knownRun !== undefined) {
    feed.offerSnapshot(knownRun);
  }
  if (runWs !== undefined && runWs !== "") {
    feed.start();
  }
  if (runUrl !== undefined && runUrl !== "") {
    context.http.get(runUrl).then(
      (body) => {
        const run = parseRun(body);
        if (run !== null) {
          feed.offerSnapshot(run);
        }
      },
      // The websocket remains the source of truth and the banner already
      // reports connectivity, so a failed one-off fetch needs no UI of its own.
      () => undefined,
    );
  }
  return feed;
}
