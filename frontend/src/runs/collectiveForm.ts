// DOM wiring for <form id="collective-form" data-runs-url data-snapshot
// data-kind="collective">: reads the controls, checks the size before
// anything is sent, starts the run through the shared launcher and puts the
// server's field errors next to their controls.

import { collectiveFieldErrors, readCollectiveForm, type CollectiveFormValues } from "./collective";
import { HttpError } from "../core/http";
import type { RunListener, RunWidgetContext } from "./runWidget";
import { runLauncher, snapshotId } from "./startRun";
import { fieldErrorList } from "../upload/uploadRender";

const FIELDS = ["collective", "size", "algorithm", "protocol", "ecmp", "channels", "in_switch_reduction"] as const;

function control(form: HTMLFormElement, name: string): HTMLInputElement | HTMLSelectElement | null {
  const found = form.querySelector(`[name="${name}"]`);
  return found instanceof HTMLInputElement || found instanceof HTMLSelectElement ? found : null;
}

export function wireCollectiveForm(form: HTMLFormElement, slot: HTMLElement, context: RunWidgetContext, onRun?: RunListener): void {
  const { doc, t } = context;
  const launcher = runLauncher(form.dataset["runsUrl"] ?? "", slot, context, onRun);
  const kind = form.dataset["kind"] ?? "collective";
  const snapshot = snapshotId(form.dataset["snapshot"]);

  const clearErrors = (): void => {
    for (const stale of form.querySelectorAll(".field-error")) {
      stale.remove();
    }
    for (const invalid of form.querySelectorAll("[aria-invalid]")) {
      invalid.removeAttribute("aria-invalid");
    }
  };

  /** Messages next to their controls; those for controls the form lacks are left to the slot's detail. */
  const showErrors = (errors: ReadonlyMap<string, readonly string[]>): void => {
    for (const [name, messages] of errors) {
      const field = control(form, name);
      if (field !== null) {
        field.setAttribute("aria-invalid", "true");
        field.after(fieldErrorList(doc, messages));
      }
    }
  };

  const setBusy = (busy: boolean): void => {
    if (busy) {
      form.setAttribute("aria-busy", "true");
    } else {
      form.removeAttribute("aria-busy");
    }
    for (const button of form.querySelectorAll<HTMLButtonElement>("button")) {
      button.disabled = busy;
    }
  };

  const submit = async (): Promise<void> => {
    clearErrors();
    const values = Object.fromEntries(FIELDS.map((name) => [name, control(form, name)?.value ?? ""])) as CollectiveFormValues;
    const reading = readCollectiveForm(values);
    if ("errors" in reading) {
      showErrors(new Map([...reading.errors].map(([name, key]) => [name, [t(key)]])));
      control(form, [...reading.errors.keys()][0] ?? "")?.focus();
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
