// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from "vitest";
import { wireCollectiveForm } from "./collectiveForm";
import { HttpError } from "../core/http";
import type { Run } from "./runState";
import { FakeWebSocket, createdRun, runStateMessage, runWidgetHarness, settle } from "../testing/fakes";

// The form as twin/templates/fabrics/fabric_detail.html renders it.
const PAGE = `
  <form id="collective-form" class="inline-form" data-runs-url="/api/runs/" data-snapshot="7" data-kind="collective">
    <label>Collective <select name="collective"><option value="allgather">allgather</option><option value="allreduce" selected>allreduce</option></select></label>
    <label>Size per rank <input name="size" value="342MB" size="8"></label>
    <label>Algorithm <select name="algorithm"><option value="auto" selected>auto (fastest)</option><option value="ring">ring</option></select></label>
    <label>Protocol <select name="protocol"><option value="auto" selected>auto (fastest)</option><option value="LL">LL</option><option value="Simple">Simple</option></select></label>
    <label>ECMP <select name="ecmp"><option value="hash">hash</option><option value="spray">spray</option></select></label>
    <label>Channels <input name="channels" type="number" value="1" min="1" max="64"></label>
    <label>In-switch reduction <select name="in_switch_reduction"><option value="" selected>as declared</option><option value="true">on</option><option value="false">off</option></select></label>
    <button class="btn btn-primary" type="submit">Simulate</button>
  </form>
  <div id="collective-slot"></div>`;

function page(onRun?: (run: Run, runUrl: string) => void) {
  document.body.innerHTML = PAGE;
  const harness = runWidgetHarness(true);
  const form = document.getElementById("collective-form") as HTMLFormElement;
  const slot = document.getElementById("collective-slot") as HTMLElement;
  wireCollectiveForm(form, slot, harness.context, onRun);
  const field = (name: string) => form.querySelector<HTMLInputElement | HTMLSelectElement>(`[name="${name}"]`) as HTMLInputElement;
  const submit = () => form.dispatchEvent(new Event("submit", { cancelable: true }));
  const button = form.querySelector("button") as HTMLButtonElement;
  const errorsOf = (name: string) =>
    [...(field(name).parentElement?.querySelectorAll(".field-error li") ?? [])].map((item) => item.textContent);
  return { ...harness, form, slot, field, submit, button, errorsOf };
}

beforeEach(() => {
  FakeWebSocket.reset();
});

describe("wireCollectiveForm", () => {
  it("POSTs the collective with the size in bytes and shows a live run widget", async () => {
    const { api, field, submit, button, slot } = page();
    field("size").value = "1GiB";
    field("algorithm").value = "ring";
    field("protocol").value = "LL";
    field("ecmp").value = "spray";
    field("channels").value = "8";
    field("in_switch_reduction").value = "false";
    api.postAnswer = Promise.resolve(createdRun({ id: 21, kind: "collective" }));

    expect(submit()).toBe(false); // the page does not navigate
    expect(button.disabled).toBe(true);
    expect(api.posts).toEqual([
      {
        url: "/api/runs/",
        body: {
          kind: "collective",
          snapshot: 7,
          params: {
            collective: "allreduce",
            size_bytes: 2 ** 30,
            algorithm: "ring",
            protocol: "LL",
            ecmp: "spray",
            channels: 8,
            in_switch_reduction: false,
          },
        },
      },
    ]);
    await settle();

    expect(button.disabled).toBe(false);
    const widget = slot.querySelector<HTMLElement>("section.run-widget");
    expect(widget?.dataset["runUrl"]).toBe("/api/runs/21/");
    expect(widget?.dataset["status"]).toBe("pending");
    expect(widget?.querySelector<HTMLButtonElement>("button.run-cancel")?.hidden).toBe(false);
    expect(FakeWebSocket.latest().url).toBe("wss://twin.example/ws/runs/21/");
  });

  it("sends the form's defaults: auto, one channel, reduction as the switches declare", () => {
    const { api, submit } = page();
    submit();
    expect(api.posts[0]?.body).toEqual({
      kind: "collective",
      snapshot: 7,
      params: { collective: "allreduce", size_bytes: 342e6, algorithm: "auto", protocol: "auto", ecmp: "hash", channels: 1, in_switch_reduction: null },
    });
  });

  it("marks an unreadable size next to the field and sends nothing", () => {
    const { api, field, submit, errorsOf, slot } = page();
    field("size").value = "342 parsecs";
    submit();
    expect(api.posts).toEqual([]);
    expect(errorsOf("size")).toEqual(["Write a size like 342MB, 1GiB or 4096."]);
    expect(field("size").getAttribute("aria-invalid")).toBe("true");
    expect(slot.childElementCount).toBe(0);

    field("size").value = "0";
    submit();
    expect(errorsOf("size")).toEqual(["The size must be more than 0 bytes."]);
  });

  it("clears old field errors on the next submit", () => {
    const { api, field, submit, errorsOf, form } = page();
    field("size").value = "nope";
    submit();
    field("size").value = "4096";
    api.postAnswer = Promise.resolve(createdRun({ kind: "collective" }));
    submit();
    expect(errorsOf("size")).toEqual([]);
    expect(form.querySelector("[aria-invalid]")).toBeNull();
    expect(api.posts).toHaveLength(1);
  });

  it("puts a 400's field errors next to the fields and its detail in the slot", async () => {
    const { api, submit, errorsOf, slot, button } = page();
    api.postAnswer = Promise.reject(
      new HttpError(400, "params: size_bytes: Ensure this value is less than or equal to 1e+15. algorithm: Not applicable.", {
        detail: "params: size_bytes: Ensure this value is less than or equal to 1e+15. algorithm: Not applicable.",
        params: { size_bytes: ["Ensure this value is less than or equal to 1e+15."], algorithm: ["Not applicable."] },
      }),
    );
    submit();
    await settle();
    expect(errorsOf("size")).toEqual(["Ensure this value is less than or equal to 1e+15."]);
    expect(errorsOf("algorithm")).toEqual(["Not applicable."]);
    expect(slot.querySelector(".error")?.textContent).toBe(
      "params: size_bytes: Ensure this value is less than or equal to 1e+15. algorithm: Not applicable.",
    );
    expect(button.disabled).toBe(false);
  });

  it("shows a 503's detail in the slot", async () => {
    const { api, submit, slot, form } = page();
    api.postAnswer = Promise.reject(new HttpError(503, "The message broker (Redis) is unavailable.", { detail: "The message broker (Redis) is unavailable." }));
    submit();
    await settle();
    expect(slot.innerHTML).toBe('<div class="error">The message broker (Redis) is unavailable.</div>');
    expect(form.querySelector(".field-error")).toBeNull();
  });

  it("replaces the previous run's widget and stops its socket", async () => {
    const { api, submit, slot } = page();
    api.postAnswer = Promise.resolve(createdRun({ id: 21, kind: "collective" }));
    submit();
    await settle();
    const first = FakeWebSocket.latest();
    api.postAnswer = Promise.resolve(createdRun({ id: 22, kind: "collective" }));
    submit();
    await settle();
    expect(first.closedByClient).toBe(true);
    expect(slot.querySelectorAll(".run-widget")).toHaveLength(1);
    expect(slot.querySelector<HTMLElement>(".run-widget")?.dataset["runUrl"]).toBe("/api/runs/22/");
  });

  it("tells the listener about the run's changes", async () => {
    const heard: [number, string, string][] = [];
    const { api, submit } = page((run, runUrl) => heard.push([run.id, run.status, runUrl]));
    api.postAnswer = Promise.resolve(createdRun({ id: 21, kind: "collective" }));
    submit();
    await settle();
    FakeWebSocket.latest().serverSends(runStateMessage(1, { id: 21, kind: "collective", status: "succeeded", progress: 1 }));
    expect(heard).toEqual([
      [21, "pending", "/api/runs/21/"],
      [21, "succeeded", "/api/runs/21/"],
    ]);
  });
});
