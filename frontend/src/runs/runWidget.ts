// DOM wiring for `.run-widget`: feeds HTTP and websocket snapshots into a
// RunFeed and mirrors the shown run into the widget's elements and attributes.
// For operators it adds a Cancel button while the run is pending or running.

import { element } from "../core/dom";
import { describeRequestError, type JsonClient } from "../core/http";
import { resolveLanguage, type MessageKey } from "../core/i18n";
import { connectionReporter, type LiveStatusMonitor } from "../live/liveStatus";
import { websocketUrl, type OpenSocket } from "../core/reconnectingSocket";
import { RunFeed } from "./runFeed";
import type { RenderContext } from "./resultDom";
import { renderRunOutcome } from "./runResult";
import { isTerminal, parseRun, runMessage, runSubresourceUrl, type Run } from "./runState";
import type { Timers } from "../core/timers";

export interface RunWidgetContext extends RenderContext {
  readonly http: JsonClient;
  readonly liveStatus: LiveStatusMonitor;
  readonly pageLocation: Pick<Location, "protocol" | "host">;
  readonly openSocket: OpenSocket;
  readonly timers: Timers;
  /**
   * Whether the user may cancel runs (operators and admins: `canCancelRuns`); a widget with
   * data-can-cancel="false" is a run this user may not cancel (an operator's, not their own).
   */
  readonly canCancel: boolean;
}

/** Called with the run each time a widget's shown run changes, and the widget's run URL. */
export type RunListener = (run: Run, runUrl: string) => void;

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
 * The Cancel button: POSTs to the run's cancel URL and offers the answer (the
 * cancelled run) to `accept`; the server's reason is shown when it refuses.
 */
function cancelButton(widget: HTMLElement, runUrl: string, context: RunWidgetContext, accept: (run: Run) => void): HTMLButtonElement {
  const { doc, t } = context;
  const button = element(doc, "button", { type: "button", class: "btn btn-small run-cancel" }, [t("run.cancel")]);
  button.hidden = true;
  const problem = element(doc, "span", { class: "run-cancel-error", role: "alert" });
  problem.hidden = true;
  button.addEventListener("click", () => {
    button.disabled = true;
    problem.hidden = true;
    context.http
      .post(runSubresourceUrl(runUrl, "cancel"), {})
      .then(
        (body) => {
          const run = parseRun(body);
          if (run !== null) {
            accept(run);
          }
        },
        (error: unknown) => {
          problem.textContent = t("run.cancelFailed", { detail: describeRequestError(error, t) });
          problem.hidden = false;
        },
      )
      .finally(() => {
        button.disabled = false;
      });
  });
  const result = widget.querySelector(".run-result");
  if (result === null) {
    widget.append(button, problem);
  } else {
    result.before(button, problem);
  }
  return button;
}

/**
 * Starts keeping `widget` current. `knownRun` is a snapshot the caller already
 * holds (e.g. the POST response) so the widget is filled before any round trip;
 * `onRun` hears every change of the shown run.
 */
export function mountRunWidget(widget: HTMLElement, context: RunWidgetContext, knownRun?: Run, onRun?: RunListener): RunFeed {
  const progress = widget.querySelector<HTMLProgressElement>(".run-progress");
  const status = widget.querySelector<HTMLElement>(".run-status");
  const message = widget.querySelector<HTMLElement>(".run-message");
  const result = widget.querySelector<HTMLElement>(".run-result");
  const { runUrl, runWs } = widget.dataset;
  const language = resolveLanguage(context.doc.body.dataset["lang"]);
  const cancel =
    context.canCancel && widget.dataset["canCancel"] !== "false" && runUrl !== undefined && runUrl !== ""
      ? cancelButton(widget, runUrl, context, (run) => feed.offerSnapshot(run))
      : null;

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
      message.textContent = runMessage(run, language);
    }
    if (cancel !== null) {
      cancel.hidden = run.status !== "pending" && run.status !== "running";
    }
    if (result !== null && isTerminal(run.status)) {
      result.replaceChildren(renderRunOutcome(run, context, runUrl ?? ""));
    }
    onRun?.(run, runUrl ?? "");
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
