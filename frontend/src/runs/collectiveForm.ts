// DOM wiring for <form id="collective-form" data-runs-url data-snapshot
// data-kind="collective">: reads the controls, checks the size before
// anything is sent, starts the run through the shared launcher and puts the
// server's field errors next to their controls.

import { collectiveFieldErrors, readCollectiveForm, type CollectiveFormValues } from "./collective";
import { HttpError } from "../core/http";
import type { RunListener, RunWidgetContext } from "./runWidget";
import { formFeedback, namedControl } from "./formFeedback";
import { runLauncher, snapshotId } from "./startRun";

const FIELDS = ["collective", "size", "algorithm", "protocol", "ecmp", "channels", "in_switch_reduction"] as const;

export function wireCollectiveForm(form: HTMLFormElement, slot: HTMLElement, context: RunWidgetContext, onRun?: RunListener): void {
  const { doc, t } = context;
  const launcher = runLauncher(form.dataset["runsUrl"] ?? "", slot, context, onRun);
  const kind = form.dataset["kind"] ?? "collective";
  const snapshot = snapshotId(form.dataset["snapshot"]);
  const { clearErrors, showErrors, setBusy } = formFeedback(form, doc);
  const control = (name: string) => namedControl(form, name);

  const submit = async (): Promise<void> => {
    clearErrors();
    const values = Object.fromEntries(FIELDS.map((name) => [name, control(name)?.value ?? ""])) as CollectiveFormValues;
    const reading = readCollectiveForm(values);
    if ("errors" in reading) {
      showErrors(new Map([...reading.errors].map(([name, key]) => [name, [t(key)]])));
      control([...reading.errors.keys()][0] ?? "")?.focus();
      return;
    }
    setBusy(true);
    const outcome = await launcher.start({ kind, snapshot, params: reading.params });
    setBusy(false);
    if (!outcome.ok && outcome.error instanceof HttpError && outcome.error.status === 400) {
      showErrors(collectiveFieldErrors(outcome.error.body));
    }
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void submit();
  });
}
