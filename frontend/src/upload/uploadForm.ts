// DOM wiring for the upload page's <form data-upload>: drag and drop into the
// dropzone, a list of the chosen files, and a submit sent with upload progress
// whose JSON answer is shown in place. Without this script the form still
// posts normally and the server renders the same information.

import { element } from "../core/dom";
import { HttpError, InvalidResponseError, describeRequestError, errorDetail } from "../core/http";
import type { RenderContext } from "../runs/resultDom";
import type { FormResponse, SendForm } from "./sendForm";
import {
  parseStoredUpload,
  parseUploadRejection,
  placeRejection,
  type UploadRejection,
} from "./uploadResponse";
import {
  fieldErrorList,
  fileListItems,
  problemList,
  renderStored,
  unmatchedProblems,
} from "./uploadRender";

export interface UploadContext extends RenderContext {
  readonly sendForm: SendForm;
  /** The csrftoken cookie; the form's own hidden token is used when it is unreadable. */
  readonly csrfToken: () => string | null;
  /** Where to post when the form names no action. */
  readonly pageUrl: string;
}

/** Highlights the dropzone while files are dragged over it and hands dropped files to `input`. */
export function wireDropzone(dropzone: HTMLElement, input: HTMLInputElement): void {
  // dragenter/dragleave fire for every child crossed: count to know when the pointer really left.
  let depth = 0;
  const highlight = (on: boolean): void => {
    dropzone.classList.toggle("dragover", on);
  };
  dropzone.addEventListener("dragenter", (event) => {
    event.preventDefault();
    depth += 1;
    highlight(true);
  });
  dropzone.addEventListener("dragover", (event) => {
    // Cancelling dragover is what allows a drop here.
    event.preventDefault();
    if (event.dataTransfer) {
      event.dataTransfer.dropEffect = "copy";
    }
  });
  dropzone.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) {
      highlight(false);
    }
  });
  dropzone.addEventListener("drop", (event) => {
    // Otherwise the browser would navigate away to show the file.
    event.preventDefault();
    depth = 0;
    highlight(false);
    const files = event.dataTransfer?.files;
    if (files === undefined || files.length === 0) {
      return;
    }
    try {
      input.files = files;
    } catch {
      return; // a browser that cannot set files: the input's own picker still works
    }
    input.dispatchEvent(new Event("change", { bubbles: true }));
  });
}

export function wireUploadForm(form: HTMLFormElement, context: UploadContext): void {
  const { doc, t, numbers } = context;
  const result = form.querySelector<HTMLElement>("[data-upload-result]");
  if (result === null) {
    return; // nowhere to show the answer: leave the plain form alone
  }
  const dropzone = form.querySelector<HTMLElement>("[data-dropzone]");
  const fileInput = (dropzone ?? form).querySelector<HTMLInputElement>('input[type="file"]');
  const fileList = form.querySelector<HTMLElement>("[data-file-list]");
  const progress = form.querySelector<HTMLProgressElement>("[data-upload-progress]");
  result.setAttribute("aria-live", "polite");

  const listFiles = (): void => {
    if (fileList !== null && fileInput !== null) {
      fileList.replaceChildren(...fileListItems(fileInput.files ?? [], context));
    }
  };
  if (fileInput !== null) {
    fileInput.addEventListener("change", listFiles);
    if (dropzone !== null) {
      wireDropzone(dropzone, fileInput);
    }
    listFiles(); // a browser may keep the choice across a back navigation
  }

  const setBusy = (busy: boolean): void => {
    if (busy) {
      form.setAttribute("aria-busy", "true");
    } else {
      form.removeAttribute("aria-busy");
    }
    for (const button of form.querySelectorAll<HTMLButtonElement | HTMLInputElement>(
      'button[type="submit"], button:not([type]), input[type="submit"]',
    )) {
      button.disabled = busy;
    }
  };

  // Ours, and any the server rendered for a post made before this script ran.
  const clearErrors = (): void => {
    for (const stale of form.querySelectorAll("ul.errorlist, .field-error, #upload-problems")) {
      stale.remove();
    }
    result.replaceChildren();
  };

  const showRejection = (rejection: UploadRejection): void => {
    const entries = Array.from(fileList?.querySelectorAll<HTMLElement>("li[data-file-name]") ?? []);
    const fields = new Map<string, Element>();
    for (const control of Array.from(form.elements)) {
      const name = control.getAttribute("name");
      if (name !== null && name !== "" && !fields.has(name)) {
        fields.set(name, control);
      }
    }
    const placement = placeRejection(
      rejection,
      new Set(entries.map((entry) => entry.dataset["fileName"] ?? "")),
      new Set(fields.keys()),
    );
    for (const entry of entries) {
      for (const file of placement.byFile.get(entry.dataset["fileName"] ?? "") ?? []) {
        entry.append(problemList(doc, file, t));
      }
    }
    for (const [field, messages] of placement.byField) {
      fields.get(field)?.after(fieldErrorList(doc, messages));
    }
    const shownElsewhere = placement.byFile.size > 0 || placement.byField.size > 0 || placement.unmatchedFiles.length > 0;
    const summary =
      placement.unplaced.length > 0
        ? placement.unplaced.join(" ")
        : shownElsewhere
          ? t("upload.rejected")
          : (rejection.detail ?? t("upload.rejected"));
    result.replaceChildren(
      ...(placement.unmatchedFiles.length > 0 ? [unmatchedProblems(doc, placement.unmatchedFiles, t)] : []),
      element(doc, "div", { class: "error" }, [summary]),
    );
  };

  const showResponse = ({ status, body }: FormResponse): void => {
    if (status >= 200 && status < 300) {
      const stored = parseStoredUpload(body);
      if (stored === null) {
        throw new InvalidResponseError();
      }
      result.replaceChildren(renderStored(stored, context));
      return;
    }
    const rejection = status === 400 ? parseUploadRejection(body) : null;
    if (rejection === null) {
      throw new HttpError(status, errorDetail(body));
    }
    showRejection(rejection);
  };

  let busy = false;
  const upload = async (): Promise<void> => {
    busy = true;
    const body = new FormData(form);
    clearErrors();
    setBusy(true);
    // Hidden from screen readers while it counts: the progress bar says the same without a flood of announcements.
    const status = element(doc, "p", { class: "upload-status muted", "aria-hidden": "true" });
    result.replaceChildren(status);
    let sent = false;
    const showSending = (fraction: number): void => {
      if (progress !== null) {
        progress.hidden = false;
        progress.value = fraction * 100;
      }
      status.textContent = t("upload.sending", { percent: numbers.percent(fraction) });
    };
    // The server parses only once it has every byte; without a value the bar is indeterminate.
    const showProcessing = (): void => {
      if (!sent) {
        sent = true;
        progress?.removeAttribute("value");
        status.removeAttribute("aria-hidden");
        status.textContent = t("upload.processing");
      }
    };
    showSending(0);

    const headers: Record<string, string> = { Accept: "application/json" };
    const token =
      context.csrfToken() ?? form.querySelector<HTMLInputElement>('input[name="csrfmiddlewaretoken"]')?.value ?? "";
    if (token !== "") {
      headers["X-CSRFToken"] = token;
    }
    const url = form.action !== "" ? form.action : context.pageUrl;
    try {
      const response = await context.sendForm(url, body, headers, {
        onProgress: (loaded, total) => {
          if (!sent && total > 0) {
            showSending(Math.min(loaded / total, 1));
            if (loaded >= total) {
              showProcessing();
            }
          }
        },
        onSent: showProcessing,
      });
      showResponse(response);
    } catch (error) {
      result.replaceChildren(element(doc, "div", { class: "error" }, [describeRequestError(error, t)]));
    } finally {
      busy = false;
      setBusy(false);
      if (progress !== null) {
        progress.hidden = true;
      }
    }
  };

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!busy) {
      void upload();
    }
  });
}
