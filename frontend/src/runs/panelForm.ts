// The fabric page's server-rendered run forms (placement, failures, what-if,
// replay) posted from their panel: the form goes as it is (files included)
// with fetch, the server answers the run in JSON (twin/runs/views.py
// start_or_report), and its live widget, then its result view, show in the
// form's slot (data-run-slot) without leaving the map. Without scripts the
// form posts normally and opens the run's page.

import { HttpError } from "../core/http";
import { formFeedback, formFieldErrors } from "./formFeedback";
import type { RunListener, RunWidgetContext } from "./runWidget";
import { runLauncher } from "./startRun";

export function wirePanelForm(form: HTMLFormElement, slot: HTMLElement, context: RunWidgetContext, onRun?: RunListener): void {
  const launcher = runLauncher("", slot, context, onRun);
  const feedback = formFeedback(form, context.doc);

  const submit = async (): Promise<void> => {
    feedback.clearErrors();
    feedback.setBusy(true);
    const outcome = await launcher.launch(() => context.http.postForm(form.action, new FormData(form)));
    feedback.setBusy(false);
    if (!outcome.ok && outcome.error instanceof HttpError && outcome.error.status === 400) {
      feedback.showErrors(formFieldErrors(outcome.error.body));
    }
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submit();
  });
}
