// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { localizeTimes } from "./times";

describe("localizeTimes", () => {
  it("rewrites <time datetime> into local time and keeps the ISO value as title", () => {
    document.body.innerHTML = `
      <p>Started <time datetime="2026-11-30T08:15:02Z">2026-11-30T08:15:02Z</time></p>
      <p><time datetime="garbage">as sent</time> <time>no attribute</time></p>`;
    localizeTimes(document, "Asia/Shanghai");
    const [good, bad, bare] = document.querySelectorAll("time");
    expect(good?.textContent).toBe("2026-11-30 16:15:02");
    expect(good?.title).toBe("2026-11-30T08:15:02Z");
    expect(bad?.textContent).toBe("as sent");
    expect(bare?.textContent).toBe("no attribute");
  });
});
