// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { translator, type Language } from "../core/i18n";
import { FakeXhr } from "../testing/fakes";
import { UPLOAD_FORM_HTML, rejectedResponse, storedResponse } from "../testing/uploads";
import { xhrSendForm } from "./sendForm";
import { wireUploadForm } from "./uploadForm";

interface Page {
  form: HTMLFormElement;
  input: HTMLInputElement;
  dropzone: HTMLElement;
  fileList: HTMLElement;
  progress: HTMLProgressElement;
  result: HTMLElement;
  button: HTMLButtonElement;
}

function mount(
  options: { language?: Language; cookieToken?: string | null; html?: string } = {},
): Page {
  document.body.innerHTML = options.html ?? UPLOAD_FORM_HTML;
  const form = document.querySelector("form[data-upload]") as HTMLFormElement;
  const language = options.language ?? "en";
  wireUploadForm(form, {
    doc: document,
    t: translator(language),
    numbers: numberFormatters(language === "en" ? "en" : "zh-Hans"),
    sendForm: xhrSendForm(FakeXhr.create),
    csrfToken: () => (options.cookieToken === undefined ? "cookie-token" : options.cookieToken),
    pageUrl: "http://twin.test/upload/",
  });
  const get = <T extends Element>(selector: string) => form.querySelector(selector) as T;
  return {
    form,
    input: get<HTMLInputElement>('input[type="file"]'),
    dropzone: get<HTMLElement>("[data-dropzone]"),
    fileList: get<HTMLElement>("[data-file-list]"),
    progress: get<HTMLProgressElement>("[data-upload-progress]"),
    result: get<HTMLElement>("[data-upload-result]"),
    button: get<HTMLButtonElement>('button[type="submit"]'),
  };
}

function fileList(...files: File[]): FileList {
  const transfer = new DataTransfer();
  for (const file of files) {
    transfer.items.add(file);
  }
  return transfer.files;
}

const aFile = () => new File(["x".repeat(2048)], "a.txt", { type: "text/plain" });
const bFile = () => new File(["<system/>"], "b.xml", { type: "text/xml" });

function choose(page: Page, ...files: File[]): void {
  page.input.files = fileList(...files);
  page.input.dispatchEvent(new Event("change", { bubbles: true }));
}

/** A drag event carrying `files`; happy-dom's DragEvent takes no dataTransfer, so it is attached by hand. */
function dragEvent(type: string, files: File[] = []): Event {
  const event = new Event(type, { bubbles: true, cancelable: true });
  Object.defineProperty(event, "dataTransfer", { value: { files: fileList(...files), dropEffect: "none" } });
  return event;
}

function submit(page: Page): Event {
  const event = new Event("submit", { bubbles: true, cancelable: true });
  page.form.dispatchEvent(event);
  return event;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
const listed = (page: Page) => Array.from(page.fileList.querySelectorAll<HTMLElement>(":scope > li"), (item) => item.dataset["fileName"]);

beforeEach(() => FakeXhr.reset());

describe("choosing files", () => {
  it("lists files chosen with the input, with human sizes", () => {
    const page = mount();
    choose(page, aFile(), bFile());
    expect(Array.from(page.fileList.children, (item) => item.textContent)).toEqual(["a.txt 2.0 KiB", "b.xml 9 B"]);
  });

  it("highlights the dropzone while files are dragged over it, children included", () => {
    const page = mount();
    page.dropzone.dispatchEvent(dragEvent("dragenter"));
    expect(page.dropzone.classList.contains("dragover")).toBe(true);
    page.input.dispatchEvent(dragEvent("dragenter")); // onto a child
    page.dropzone.dispatchEvent(dragEvent("dragleave")); // ... which leaves the parent
    expect(page.dropzone.classList.contains("dragover")).toBe(true);
    const over = dragEvent("dragover");
    page.input.dispatchEvent(over);
    expect(over.defaultPrevented).toBe(true);
    page.input.dispatchEvent(dragEvent("dragleave"));
    expect(page.dropzone.classList.contains("dragover")).toBe(false);
  });

  it("puts dropped files into the input and lists them", () => {
    const page = mount();
    page.dropzone.dispatchEvent(dragEvent("dragenter", [aFile(), bFile()]));
    const drop = dragEvent("drop", [aFile(), bFile()]);
    page.fileList.dispatchEvent(drop);
    expect(drop.defaultPrevented).toBe(true);
    expect(page.dropzone.classList.contains("dragover")).toBe(false);
    expect(Array.from(page.input.files ?? [], (file) => file.name)).toEqual(["a.txt", "b.xml"]);
    expect(listed(page)).toEqual(["a.txt", "b.xml"]);
    expect(new FormData(page.form).getAll("file").map((file) => (file as File).name)).toEqual(["a.txt", "b.xml"]);
  });

  it("ignores a drop without files", () => {
    const page = mount();
    choose(page, aFile());
    page.dropzone.dispatchEvent(dragEvent("drop"));
    expect(listed(page)).toEqual(["a.txt"]);
  });
});

describe("submitting", () => {
  it("sends the form with progress, then waits for the server, then shows the stored snapshot", async () => {
    const page = mount();
    choose(page, aFile(), bFile());
    (page.form.elements.namedItem("fabric") as HTMLInputElement).value = "pod-a";
    expect(submit(page).defaultPrevented).toBe(true);

    const xhr = FakeXhr.latest();
    expect(xhr.method).toBe("POST");
    expect(xhr.url).toBe(document.location.href); // the form names no action: post where the page is
    expect(xhr.headers).toEqual({ Accept: "application/json", "X-CSRFToken": "cookie-token" });
    expect(xhr.body?.getAll("file").map((file) => (file as File).name)).toEqual(["a.txt", "b.xml"]);
    expect(xhr.body?.get("fabric")).toBe("pod-a");
    expect(xhr.body?.get("csrfmiddlewaretoken")).toBe("form-token");
    expect(page.button.disabled).toBe(true);
    expect(page.progress.hidden).toBe(false);
    expect(page.result.textContent).toBe("Uploading… 0.0%");
    expect(page.form.getAttribute("aria-busy")).toBe("true");

    xhr.uploadProgress(512, 2048);
    expect(page.progress.value).toBe(25);
    expect(page.result.textContent).toBe("Uploading… 25.0%");

    xhr.uploadProgress(2048, 2048);
    expect(page.progress.hasAttribute("value")).toBe(false); // indeterminate
    expect(page.result.textContent).toBe("Parsing and storing…");
    expect(page.result.querySelector(".upload-status")?.hasAttribute("aria-hidden")).toBe(false);
    xhr.uploadProgress(2048, 2048); // late events change nothing
    xhr.uploadDone();
    expect(page.progress.hasAttribute("value")).toBe(false);
    expect(page.button.disabled).toBe(true);

    xhr.respond(201, storedResponse());
    await settle();
    expect(page.result.querySelector("p")?.textContent).toBe("Stored as v2 (detected format: ibnetdiscover)");
    expect(page.result.querySelector("#upload-open")?.getAttribute("href")).toBe("/fabrics/3/?snapshot=9");
    expect(page.result.querySelectorAll("ul.warnings li")).toHaveLength(1);
    expect(page.button.disabled).toBe(false);
    expect(page.progress.hidden).toBe(true);
    expect(page.form.hasAttribute("aria-busy")).toBe(false);
  });

  it("shows the processing state when the upload ends without progress events", async () => {
    const page = mount({ language: "zh-hans" });
    choose(page, aFile());
    submit(page);
    FakeXhr.latest().uploadDone();
    expect(page.result.textContent).toBe("正在解析并保存…");
    FakeXhr.latest().respond(201, storedResponse());
    await settle();
    expect(page.result.querySelector("#upload-open")?.textContent).toBe("打开该网络");
  });

  it("posts to the form's action when it has one", () => {
    const page = mount({ html: UPLOAD_FORM_HTML.replace("<form ", '<form action="/upload/?next=x" ') });
    submit(page);
    expect(FakeXhr.latest().url).toBe(new URL("/upload/?next=x", document.location.href).href);
  });

  it("falls back to the form's CSRF token when the cookie cannot be read", () => {
    const page = mount({ cookieToken: null });
    submit(page);
    expect(FakeXhr.latest().headers["X-CSRFToken"]).toBe("form-token");
  });

  it("sends one request at a time", () => {
    const page = mount();
    submit(page);
    submit(page);
    expect(FakeXhr.instances).toHaveLength(1);
  });
});

describe("a rejected upload", () => {
  async function rejected(page: Page): Promise<void> {
    choose(page, aFile(), bFile());
    submit(page);
    FakeXhr.latest().respond(400, rejectedResponse());
    await settle();
  }

  it("shows each file's problems under that file", async () => {
    const page = mount();
    await rejected(page);
    const [a, b] = Array.from(page.fileList.children);
    expect(Array.from(a?.querySelectorAll("ul.errorlist li") ?? [], (item) => item.textContent)).toEqual([
      "a.txt line 12: bad port; expected a port number",
      "a.txt line 30: bad port; expected a port number",
      "… and more (only the first problems are listed)",
    ]);
    expect(b?.querySelector("ul.errorlist")).toBeNull();
  });

  it("puts problems of no listed file at the top of the result", async () => {
    const page = mount();
    await rejected(page);
    const top = page.result.firstElementChild;
    expect(top?.className).toBe("upload-problems");
    expect(top?.querySelector("h3")?.textContent).toBe("Upload");
    expect(top?.querySelector("li")?.textContent).toBe("line 1: conflicting facts; expected a port number");
    expect(page.result.querySelector("div.error")?.textContent).toBe(
      "Nothing was stored; see the problems marked in the form.",
    );
  });

  it("shows field errors right after their inputs", async () => {
    const page = mount();
    await rejected(page);
    const bandwidth = page.form.querySelector('[name="default_bandwidth_gbps"]');
    expect(bandwidth?.nextElementSibling?.className).toBe("errorlist field-error");
    expect(bandwidth?.nextElementSibling?.textContent).toBe("Ensure this value is greater than or equal to 0.001.");
    expect(page.input.nextElementSibling?.classList.contains("field-error")).toBe(true);
    expect(page.form.querySelectorAll(".field-error")).toHaveLength(2);
  });

  it("clears the old errors when the form is sent again", async () => {
    const page = mount();
    await rejected(page);
    submit(page);
    expect(page.form.querySelectorAll(".field-error")).toHaveLength(0);
    expect(page.fileList.querySelectorAll("ul.errorlist")).toHaveLength(0);
    expect(page.result.querySelector(".upload-problems")).toBeNull();
    FakeXhr.latest().respond(201, storedResponse());
    await settle();
    expect(page.result.querySelector("#upload-open")).not.toBeNull();
  });

  it("also clears errors the server rendered for a post made without the script", () => {
    const page = mount({
      html: UPLOAD_FORM_HTML.replace(
        "<ul class=\"file-list\" data-file-list></ul>\n  </div>",
        '<ul class="file-list" data-file-list></ul>\n  </div><ul class="errorlist"><li>Bad file.</li></ul>' +
          '<div class="upload-problems" id="upload-problems"><h3>a.txt</h3><ul class="errorlist"><li>x</li></ul></div>',
      ),
    });
    expect(page.form.querySelectorAll("ul.errorlist")).toHaveLength(2);
    submit(page);
    expect(page.form.querySelectorAll("ul.errorlist, #upload-problems")).toHaveLength(0);
  });

  it("shows errors of fields the form lacks, and non-field errors, in the result", async () => {
    const page = mount();
    submit(page);
    FakeXhr.latest().respond(400, { detail: "x", errors: { __all__: ["Choose a role."], colour: ["Unknown field."] }, files: [] });
    await settle();
    expect(page.result.querySelector("div.error")?.textContent).toBe("Choose a role. Unknown field.");
  });
});

describe("a failed upload", () => {
  it("shows the server's detail for other statuses", async () => {
    const page = mount();
    submit(page);
    FakeXhr.latest().respond(413, { detail: "The upload is larger than the 64 MB limit." });
    await settle();
    expect(page.result.querySelector("div.error")?.textContent).toBe("The upload is larger than the 64 MB limit.");
    expect(page.button.disabled).toBe(false);
    expect(page.progress.hidden).toBe(true);
  });

  it("names the status when the body is not JSON", async () => {
    const page = mount();
    submit(page);
    FakeXhr.latest().respond(500, "<h1>Server Error</h1>");
    await settle();
    expect(page.result.querySelector("div.error")?.textContent).toBe("HTTP 500");
  });

  it("treats a 400 without the expected shape like any other error", async () => {
    const page = mount();
    submit(page);
    FakeXhr.latest().respond(400, "<h1>Bad Request</h1>");
    await settle();
    expect(page.result.querySelector("div.error")?.textContent).toBe("HTTP 400");
  });

  it("says the server could not be reached on a network failure", async () => {
    const page = mount();
    submit(page);
    FakeXhr.latest().uploadProgress(10, 100);
    FakeXhr.latest().fail();
    await settle();
    expect(page.result.querySelector("div.error")?.textContent).toBe("The server could not be reached.");
    expect(page.button.disabled).toBe(false);
  });

  it("reports a success body it cannot read", async () => {
    const page = mount();
    submit(page);
    FakeXhr.latest().respond(200, "<html>login</html>");
    await settle();
    expect(page.result.querySelector("div.error")?.textContent).toBe("The server sent an unexpected response.");
  });
});

describe("without a result area", () => {
  it("leaves the plain form alone", () => {
    const page = mount({ html: UPLOAD_FORM_HTML.replace("<div data-upload-result></div>", "") });
    expect(submit(page).defaultPrevented).toBe(false);
    expect(FakeXhr.instances).toHaveLength(0);
  });
});
