// @vitest-environment happy-dom
import { describe, expect, it, vi } from "vitest";
import { submitOnChange } from "./dom";

describe("submitOnChange", () => {
  it("sends the form of a marked menu when it changes, and leaves other menus alone", () => {
    document.body.innerHTML = `
      <form id="language"><select name="language" data-submit-on-change><option>en</option><option>zh-hans</option></select></form>
      <form id="other"><select name="sort"><option>a</option><option>b</option></select></form>`;
    const [language, other] = document.querySelectorAll("form");
    const sent = { language: vi.fn(), other: vi.fn() };
    language!.submit = sent.language;
    other!.submit = sent.other;
    submitOnChange(document);
    for (const select of document.querySelectorAll("select")) {
      select.dispatchEvent(new Event("change"));
    }
    expect(sent.language).toHaveBeenCalledOnce();
    expect(sent.other).not.toHaveBeenCalled();
  });
});
