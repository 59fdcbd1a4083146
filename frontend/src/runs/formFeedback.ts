// What a run form shows while it is sent and when it is refused: busy state,
// and each field's messages next to its control (aria-invalid on the control).

import { fieldErrorList } from "../upload/uploadRender";

export interface FormFeedback {
  clearErrors(): void;
  /** Messages next to their controls; those for controls the form lacks are left to the slot's detail. */
  showErrors(errors: ReadonlyMap<string, readonly string[]>): void;
  setBusy(busy: boolean): void;
}

export function namedControl(form: HTMLFormElement, name: string): HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | null {
  const found = form.querySelector(`[name="${name}"]`);
  return found instanceof HTMLInputElement || found instanceof HTMLSelectElement || found instanceof HTMLTextAreaElement ? found : null;
}

function outermostLabel(field: HTMLElement, form: HTMLFormElement): HTMLElement {
  let found: HTMLElement = field;
  for (let at = field.parentElement; at !== null && at !== form; at = at.parentElement) {
    if (at instanceof HTMLLabelElement) {
      found = at;
    }
  }
  return found;
}

export function formFeedback(form: HTMLFormElement, doc: Document): FormFeedback {
  return {
    clearErrors() {
      for (const stale of form.querySelectorAll(".field-error")) {
        stale.remove();
      }
      for (const invalid of form.querySelectorAll("[aria-invalid]")) {
        invalid.removeAttribute("aria-invalid");
      }
    },
    showErrors(errors) {
      for (const [name, messages] of errors) {
        const field = namedControl(form, name);
        if (field !== null) {
          field.setAttribute("aria-invalid", "true");
          // A group of checkboxes or radios: after the whole group's label, not inside the first box's.
          const anchor = field.type === "checkbox" || field.type === "radio" ? outermostLabel(field, form) : field;
          anchor.after(fieldErrorList(doc, messages));
        }
      }
    },
    setBusy(busy) {
      if (busy) {
        form.setAttribute("aria-busy", "true");
      } else {
        form.removeAttribute("aria-busy");
      }
      for (const button of form.querySelectorAll<HTMLButtonElement>("button")) {
        button.disabled = busy;
      }
    },
  };
}

/** The field errors of a refused form: Django's {"errors": {field: [messages]}} (what start_or_report answers). */
export function formFieldErrors(body: unknown): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  const errors = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["errors"] : undefined;
  if (typeof errors !== "object" || errors === null || Array.isArray(errors)) {
    return fields;
  }
  for (const [name, value] of Object.entries(errors)) {
    const messages = Array.isArray(value) ? value.filter((message): message is string => typeof message === "string") : [];
    if (name !== "__all__" && messages.length > 0) {
      fields.set(name, messages);
    }
  }
  return fields;
}
