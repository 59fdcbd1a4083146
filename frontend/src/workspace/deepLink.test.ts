import { describe, expect, it } from "vitest";
import { EMPTY_LINK, parseViewLink, viewLinkWriter, writeViewLink } from "./deepLink";

describe("parseViewLink", () => {
  it("reads snapshot, run, frame, node and link", () => {
    expect(parseViewLink("?snapshot=7&run=42&frame=0&node=leaf-07")).toEqual({ snapshot: 7, run: 42, frame: 0, node: "leaf-07", link: null });
    expect(parseViewLink("?snapshot=7&link=0")).toMatchObject({ snapshot: 7, link: 0 });
    expect(parseViewLink("?link=1093")).toMatchObject({ link: 1093 });
    expect(parseViewLink("?node=0x248a07030012ab%2F1")).toMatchObject({ node: "0x248a07030012ab/1" });
  });

  it("ignores what is not a view: junk numbers, an empty or overlong node, other parameters", () => {
    expect(parseViewLink("")).toEqual(EMPTY_LINK);
    expect(parseViewLink("?snapshot=0&run=-3&frame=1.5&node=")).toEqual(EMPTY_LINK);
    expect(parseViewLink("?snapshot=7x&run=1e3&frame=abc&link=-1")).toEqual(EMPTY_LINK);
    expect(parseViewLink("?link=2.5")).toEqual(EMPTY_LINK);
    expect(parseViewLink(`?node=${"n".repeat(201)}&compare=3&page=2`)).toEqual(EMPTY_LINK);
  });
});

describe("writeViewLink", () => {
  it("writes the view and keeps the page's other parameters", () => {
    expect(writeViewLink("?compare=3", { snapshot: 7, run: 42, frame: 120, node: "leaf-07", link: null })).toBe("?compare=3&snapshot=7&run=42&frame=120&node=leaf-07");
    expect(writeViewLink("?snapshot=7&run=42&frame=3", { ...EMPTY_LINK, snapshot: 7 })).toBe("?snapshot=7");
    expect(writeViewLink("?run=4", EMPTY_LINK)).toBe("");
  });

  it("round-trips through parseViewLink", () => {
    const link = { snapshot: 2, run: 9, frame: 599, node: "card 0005/äö", link: 31 };
    expect(parseViewLink(writeViewLink("", link))).toEqual(link);
  });
});

describe("viewLinkWriter", () => {
  const location = { pathname: "/fabrics/3/", search: "?snapshot=7&compare=2", hash: "#map" };

  it("replaces the URL when the view changes, and only then", () => {
    const written: string[] = [];
    const writer = viewLinkWriter(location, (url) => written.push(url));
    writer.update({ snapshot: 7 });
    writer.update({ run: 42 });
    writer.update({ node: "leaf-07" });
    writer.update({ node: "leaf-07" });
    expect(written).toEqual(["/fabrics/3/?snapshot=7&compare=2&run=42#map", "/fabrics/3/?snapshot=7&compare=2&run=42&node=leaf-07#map"]);
    expect(writer.current).toEqual({ snapshot: 7, run: 42, frame: null, node: "leaf-07", link: null });
  });

  it("forgets the frame when another run is shown, and the node when it is unselected", () => {
    const written: string[] = [];
    const writer = viewLinkWriter({ ...location, search: "?run=4&frame=30&node=spine-01" }, (url) => written.push(url));
    writer.update({ run: 5 });
    writer.update({ node: null });
    expect(writer.current).toEqual({ snapshot: null, run: 5, frame: null, node: null, link: null });
    expect(written.at(-1)).toBe("/fabrics/3/?run=5#map");
    writer.update({ frame: 12 });
    expect(written.at(-1)).toBe("/fabrics/3/?run=5&frame=12#map");
    writer.update({ link: 40 });
    expect(written.at(-1)).toBe("/fabrics/3/?run=5&frame=12&link=40#map");
    writer.update({ link: null });
    expect(written.at(-1)).toBe("/fabrics/3/?run=5&frame=12#map");
  });
});
