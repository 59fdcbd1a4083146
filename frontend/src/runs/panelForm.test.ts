// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { HttpError } from "../core/http";
import { createdRun, FakeWebSocket, runWidgetHarness, settle } from "../testing/fakes";
import { formFieldErrors } from "./formFeedback";
import { wirePanelForm } from "./panelForm";

function render(slotContent = "") {
  document.body.innerHTML = `
    <form method="post" action="/snapshots/7/failures/" id="failure-form" data-run-slot="failures-slot">
      <input type="hidden" name="csrfmiddlewaretoken" value="tok">
      <label>Elements <input name="elements" value="leaf-07"></label>
      <label>Size <input name="size" value="lots"></label>
      <label>Strategies <div><label><input type="checkbox" name="strategies" value="naive" checked> naive</label><label><input type="checkbox" name="strategies" value="aware"> aware</label></div></label>
      <button type="submit">Evaluate</button>
    </form>
    <div id="failures-slot">${slotContent}</div>`;
  const form = document.getElementById("failure-form") as HTMLFormElement;
  const slot = document.getElementById("failures-slot") as HTMLElement;
  return { form, slot };
}

const submit = (form: HTMLFormElement) => form.dispatchEvent(new Event("submit", { cancelable: true }));

beforeEach(() => FakeWebSocket.reset());

describe("wirePanelForm", () => {
  it("posts the form as it is and shows the run's live widget in the slot", async () => {
    const { form, slot } = render();
    const { api, context } = runWidgetHarness();
    const heard: number[] = [];
    api.postAnswer = Promise.resolve(createdRun({ id: 40, kind: "failures" }));
    wirePanelForm(form, slot, context, (run) => heard.push(run.id));
    const event = new Event("submit", { cancelable: true });
    form.dispatchEvent(event);
    expect(event.defaultPrevented).toBe(true); // no navigation to the run's page
    expect(form.getAttribute("aria-busy")).toBe("true");
    await settle();
    expect(api.forms).toHaveLength(1);
    expect(new URL(api.forms[0]?.url ?? "", "http://page/").pathname).toBe("/snapshots/7/failures/"); // the form's own action
    expect(api.forms[0]?.fields).toEqual({ csrfmiddlewaretoken: "tok", elements: "leaf-07", size: "lots", strategies: "naive" });
    expect(slot.querySelector(".run-widget")?.getAttribute("data-run-url")).toBe("/api/runs/40/");
    expect(FakeWebSocket.latest().url).toBe("wss://twin.example/ws/runs/40/");
    expect(heard).toContain(40);
    expect(form.hasAttribute("aria-busy")).toBe(false);
  });

  it("puts a refused form's messages next to their controls and its detail in the slot", async () => {
    const { form, slot } = render();
    const { api, context } = runWidgetHarness();
    const body = { detail: "size: Expected a size.", errors: { size: ["Expected a size like 1GiB."], strategies: ["Choose one."], __all__: ["Not both."] } };
    api.postAnswer = Promise.reject(new HttpError(400, body.detail, body));
    wirePanelForm(form, slot, context);
    submit(form);
    await settle();
    await settle();
    const size = form.querySelector("[name=size]") as HTMLInputElement;
    expect(size.getAttribute("aria-invalid")).toBe("true");
    expect(size.nextElementSibling?.textContent).toBe("Expected a size like 1GiB.");
    // A group's message follows the whole group, not the first box.
    const group = form.querySelector("[name=strategies]")?.closest("div")?.parentElement as HTMLElement;
    expect(group.nextElementSibling?.textContent).toBe("Choose one.");
    expect(slot.querySelector(".error")?.textContent).toBe("size: Expected a size.");
    // Sent again, the old messages go.
    api.postAnswer = new Promise(() => undefined);
    submit(form);
    expect(form.querySelectorAll(".field-error")).toHaveLength(0);
    expect(size.hasAttribute("aria-invalid")).toBe(false);
  });

  it("keeps a deep link's widget, already in the slot, current and replaces it with the next run", async () => {
    const { form, slot } = render('<section class="run-widget" data-run-url="/api/runs/12/" data-run-ws="/ws/runs/12/"><div class="run-result"></div></section>');
    const { api, context } = runWidgetHarness();
    wirePanelForm(form, slot, context);
    const first = FakeWebSocket.latest();
    expect(first.url).toBe("wss://twin.example/ws/runs/12/");
    expect(api.gets).toContain("/api/runs/12/");
    api.postAnswer = Promise.resolve(createdRun({ id: 13, kind: "failures" }));
    submit(form);
    await settle();
    expect(first.closedByClient).toBe(true);
    expect(slot.querySelectorAll(".run-widget")).toHaveLength(1);
    expect(slot.querySelector(".run-widget")?.getAttribute("data-run-url")).toBe("/api/runs/13/");
  });
});

describe("formFieldErrors", () => {
  it("reads Django's field errors and leaves the form-wide ones to the detail", () => {
    expect([...formFieldErrors({ errors: { size: ["Bad."], tp: [], __all__: ["Both."], dp: "x" } })]).toEqual([["size", ["Bad."]]]);
    expect(formFieldErrors({ detail: "no" }).size).toBe(0);
    expect(formFieldErrors(null).size).toBe(0);
  });
});
