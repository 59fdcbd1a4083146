import { describe, expect, it } from "vitest";
import { rejectedResponse, storedResponse } from "../testing/uploads";
import { parseStoredUpload, parseUploadRejection, placeRejection } from "./uploadResponse";

describe("parseStoredUpload", () => {
  it("reads the 201 body, keeping the server's order of counts", () => {
    expect(parseStoredUpload(storedResponse())).toEqual({
      url: "/fabrics/3/?snapshot=9",
      snapshot: 9,
      version: 2,
      format: "ibnetdiscover",
      summary: {
        nodes: 11,
        links: 11,
        nodesByKind: [
          ["card", 8],
          ["switch", 3],
        ],
        linksByState: [
          ["down", 1],
          ["up", 10],
        ],
        linksBySpeed: [
          ["200 Gb/s", 1],
          ["400 Gb/s", 10],
        ],
        warnings: ["1 link down"],
      },
    });
  });

  it("tolerates a missing or partial summary", () => {
    const stored = parseStoredUpload({ url: "/fabrics/1/?snapshot=1", snapshot: 1, version: 1, format: "twin-fabric" });
    expect(stored?.summary).toEqual({ nodes: 0, links: 0, nodesByKind: [], linksByState: [], linksBySpeed: [], warnings: [] });
    expect(
      parseStoredUpload(storedResponse({ nodes_by_kind: { card: "8", switch: 3 }, warnings: "x" }))?.summary,
    ).toMatchObject({ nodesByKind: [["switch", 3]], warnings: [] });
  });

  it("rejects bodies without a URL or version", () => {
    expect(parseStoredUpload(undefined)).toBeNull();
    expect(parseStoredUpload({ ...storedResponse(), url: "" })).toBeNull();
    expect(parseStoredUpload({ ...storedResponse(), version: "2" })).toBeNull();
    expect(parseStoredUpload([storedResponse()])).toBeNull();
  });
});

describe("parseUploadRejection", () => {
  it("reads field errors and each file's problems", () => {
    const rejection = parseUploadRejection(rejectedResponse());
    expect(rejection?.fieldErrors).toEqual([
      ["file", ["a.txt line 12: bad port (and 1 more problem)"]],
      ["default_bandwidth_gbps", ["Ensure this value is greater than or equal to 0.001."]],
    ]);
    expect(rejection?.files).toEqual([
      {
        source: "a.txt",
        problems: ["a.txt line 12: bad port; expected a port number", "a.txt line 30: bad port; expected a port number"],
        truncated: true,
      },
      { source: null, problems: ["line 1: conflicting facts; expected a port number"], truncated: false },
    ]);
  });

  it("falls back to a file's own sentence when it lists no problems", () => {
    const rejection = parseUploadRejection({ files: [{ source: "b.xml", detail: "b.xml: not UTF-8", problems: [] }] });
    expect(rejection?.files).toEqual([{ source: "b.xml", problems: ["b.xml: not UTF-8"], truncated: false }]);
  });

  it("keeps a bare detail, and gives up on bodies with nothing usable", () => {
    expect(parseUploadRejection({ detail: "Bad request" })).toEqual({ detail: "Bad request", fieldErrors: [], files: [] });
    expect(parseUploadRejection({ errors: { file: [] }, files: [{}] })).toBeNull();
    expect(parseUploadRejection("<html>")).toBeNull();
  });
});

describe("placeRejection", () => {
  const rejection = parseUploadRejection({
    ...rejectedResponse(),
    errors: { __all__: ["Pick a fabric."], file: ["Bad file."], missing: ["Gone."] },
    files: [
      { source: "a.txt", problems: [{ detail: "a.txt line 1: x" }] },
      { source: "other.txt", problems: [{ detail: "other.txt line 2: y" }] },
      { source: null, problems: [{ detail: "merge: z" }] },
      { source: "a.txt", problems: [{ detail: "a.txt line 9: w" }] },
    ],
  });

  it("puts file problems under listed files and the rest on top", () => {
    const placement = placeRejection(rejection!, new Set(["a.txt", "b.txt"]), new Set(["file", "fabric"]));
    expect(placement.byFile.get("a.txt")?.flatMap((file) => file.problems)).toEqual(["a.txt line 1: x", "a.txt line 9: w"]);
    expect(placement.byFile.has("b.txt")).toBe(false);
    expect(placement.unmatchedFiles.map((file) => file.source)).toEqual(["other.txt", null]);
  });

  it("puts the problems of an archive's members under the archive", () => {
    const members = parseUploadRejection({
      detail: "x",
      files: [
        { source: "hosts.tgz/topo/node03/nccl_topo.xml", problems: [{ detail: "hosts.tgz/topo/node03/nccl_topo.xml line 4: x" }] },
        { source: "hosts.tgz", path: "../x.xml", problems: [{ detail: "hosts.tgz (../x.xml): y" }] },
        { source: "hosts.tgz.old/node01.xml", problems: [{ detail: "z" }] },
        { source: "/node01.xml", problems: [{ detail: "w" }] },
      ],
    });
    const placement = placeRejection(members!, new Set(["hosts.tgz", "ib.txt"]), new Set());
    expect(placement.byFile.get("hosts.tgz")?.flatMap((file) => file.problems)).toEqual([
      "hosts.tgz/topo/node03/nccl_topo.xml line 4: x",
      "hosts.tgz (../x.xml): y",
    ]);
    expect(placement.unmatchedFiles.map((file) => file.source)).toEqual(["hosts.tgz.old/node01.xml", "/node01.xml"]);
  });

  it("puts field errors next to fields the form has", () => {
    const placement = placeRejection(rejection!, new Set(), new Set(["file", "fabric"]));
    expect([...placement.byField]).toEqual([["file", ["Bad file."]]]);
    expect(placement.unplaced).toEqual(["Pick a fabric.", "Gone."]);
  });
});
