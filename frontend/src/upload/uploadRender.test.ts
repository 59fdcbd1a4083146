// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { translator, type Language } from "../core/i18n";
import type { RenderContext } from "../runs/resultDom";
import { storedResponse } from "../testing/uploads";
import { fieldErrorList, fileListItems, problemList, renderStored, unmatchedProblems } from "./uploadRender";
import { parseStoredUpload, type StoredUpload } from "./uploadResponse";

function context(language: Language = "en"): RenderContext {
  return { doc: document, t: translator(language), numbers: numberFormatters(language === "en" ? "en" : "zh-Hans") };
}

const texts = (root: ParentNode, selector: string) => Array.from(root.querySelectorAll(selector), (node) => node.textContent);

function stored(summary: Record<string, unknown> = {}): StoredUpload {
  return parseStoredUpload(storedResponse(summary)) as StoredUpload;
}

describe("fileListItems", () => {
  it("lists each file with its size and name for matching", () => {
    const items = fileListItems(
      [new File(["x".repeat(1536)], "fabric.ibnd"), new File([""], "plan <1>.csv")],
      context(),
    );
    expect(items.map((item) => item.textContent)).toEqual(["fabric.ibnd 1.5 KiB", "plan <1>.csv 0 B"]);
    expect(items.map((item) => item.dataset["fileName"])).toEqual(["fabric.ibnd", "plan <1>.csv"]);
    expect(items[0]?.querySelector(".file-size")?.className).toBe("file-size muted");
  });
});

describe("renderStored", () => {
  it("shows version, detected format, counts, warnings and the link", () => {
    const view = renderStored(stored(), context());
    expect(view.querySelector("p")?.textContent).toBe("Stored as v2 (detected format: ibnetdiscover)");
    expect(texts(view, "dt")).toEqual(["Nodes", "Links", "Speeds"]);
    expect(texts(view, "dd")).toEqual([
      "11 (Card: 8, Switch: 3)",
      "11 (down: 1, up: 10)",
      "1 × 200 Gb/s, 10 × 400 Gb/s",
    ]);
    expect(texts(view, "ul.warnings li")).toEqual(["1 link down"]);
    const open = view.querySelector<HTMLAnchorElement>("a#upload-open");
    expect(open?.getAttribute("href")).toBe("/fabrics/3/?snapshot=9");
    expect(open?.className).toBe("btn btn-primary");
    expect(open?.textContent).toBe("Open the fabric");
  });

  it("speaks Simplified Chinese", () => {
    const view = renderStored(stored(), context("zh-hans"));
    expect(view.querySelector("p")?.textContent).toBe("已保存为 v2（识别的格式：ibnetdiscover）");
    expect(texts(view, "dd")).toEqual(["11（加速卡：8，交换机：3）", "11（中断：1，正常：10）", "1 × 200 Gb/s，10 × 400 Gb/s"]);
    expect(view.querySelector("#upload-open")?.textContent).toBe("打开该网络");
  });

  it("shows unknown kinds as sent and leaves out what is empty", () => {
    const view = renderStored(
      stored({ nodes: 2, links: 0, nodes_by_kind: { gpu: 2 }, links_by_state: {}, links_by_speed: {}, warnings: [] }),
      context(),
    );
    expect(texts(view, "dd")).toEqual(["2 (gpu: 2)", "0"]);
    expect(view.querySelector("ul.warnings")).toBeNull();
  });
});

describe("problem lists", () => {
  it("lists problems and says when the list was cut short", () => {
    const list = problemList(document, { source: "a.txt", problems: ["line 1: x", "line 2: y"], truncated: true }, translator("en"));
    expect(list.className).toBe("errorlist");
    expect(texts(list, "li")).toEqual(["line 1: x", "line 2: y", "… and more (only the first problems are listed)"]);
  });

  it("titles unmatched problems with their source, or Upload", () => {
    const block = unmatchedProblems(
      document,
      [
        { source: "c.txt", problems: ["c.txt: z"], truncated: false },
        { source: null, problems: ["merge: w"], truncated: false },
      ],
      translator("en"),
    );
    expect(texts(block, "h3")).toEqual(["c.txt", "Upload"]);
    expect(texts(block, "ul.errorlist li")).toEqual(["c.txt: z", "merge: w"]);
  });

  it("marks field errors for removal on resubmit", () => {
    expect(fieldErrorList(document, ["Required."]).className).toBe("errorlist field-error");
  });
});
