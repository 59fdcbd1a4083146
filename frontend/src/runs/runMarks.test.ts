import { describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { HttpError } from "../core/http";
import { translator } from "../core/i18n";
import { runMapMarks, type MarkMap } from "./runMarks";
import { ScriptedApi } from "../testing/fakes";

/** Records what the marks ask of the map; `links: false` plays a map without setLinkMarks. */
function fakeMap(links = true) {
  const calls: unknown[] = [];
  const map: MarkMap = {
    setNodeMarks: (ids, marks) => void calls.push(["nodes", [...ids], [...marks]]),
    clearOverlay: (name) => void calls.push(["clear", name]),
    ...(links
      ? {
          setLinkMarks: (indices: readonly number[]) => {
            calls.push(["links", [...indices]]);
            return { unmatched: 0 };
          },
        }
      : {}),
  };
  return { map, calls };
}

const DETAIL = {
  ranks: {
    aware: [
      { rank: 0, card: "n0/gpu0", host: "n0", tp_group: 0 },
      { rank: 1, card: "n0/gpu1", host: "n0", tp_group: 0 },
      { rank: 2, card: "n1/gpu0", host: "n1", tp_group: 1 },
    ],
  },
};

describe("runMapMarks", () => {
  it("marks a strategy's ranks coloured by TP group, fetching the run's detail once", async () => {
    const api = new ScriptedApi();
    api.getAnswers.set("/api/runs/12/detail/", Promise.resolve(DETAIL));
    const { map, calls } = fakeMap();
    const marks = runMapMarks({ t: translator("en"), numbers: numberFormatters("en"), http: api, map: () => Promise.resolve(map) });
    expect(await marks.showPlacement("/api/runs/12/", "aware")).toBe(
      "aware: 3 ranks marked on the map, one colour per TP group (2 groups).",
    );
    expect(calls).toEqual([
      ["links", []],
      ["nodes", ["n0/gpu0", "n0/gpu1", "n1/gpu0"], ["placed:0", "placed:0", "placed:1"]],
    ]);
    expect(await marks.showPlacement("/api/runs/12/", "naive")).toBe("The run has no rank list for naive.");
    expect(api.gets).toEqual(["/api/runs/12/detail/"]);
    marks.clear();
    expect(calls.at(-1)).toEqual(["clear", "marks"]);
  });

  it("says why when the detail cannot be loaded, and tries again next time", async () => {
    const api = new ScriptedApi();
    api.getAnswers.set("/api/runs/12/detail/", Promise.reject(new HttpError(404, "Not found.")));
    const { map } = fakeMap();
    const marks = runMapMarks({ t: translator("en"), numbers: numberFormatters("en"), http: api, map: () => Promise.resolve(map) });
    expect(await marks.showPlacement("/api/runs/12/", "aware")).toBe("Could not show it on the map: Not found.");
    api.getAnswers.set("/api/runs/12/detail/", Promise.resolve(DETAIL));
    expect(await marks.showPlacement("/api/runs/12/", "aware")).toContain("3 ranks");
    expect(api.gets).toHaveLength(2);
  });

  it("marks failed switches and links", async () => {
    const { map, calls } = fakeMap();
    const marks = runMapMarks({ t: translator("en"), numbers: numberFormatters("en"), http: new ScriptedApi(), map: () => Promise.resolve(map) });
    expect(await marks.showFailure(["leaf-03", "link:12"])).toBe("Marked as failed on the map: leaf-03, link:12.");
    expect(calls).toEqual([
      ["nodes", ["leaf-03"], ["failed"]],
      ["links", [12]],
    ]);
  });

  it("marks only the switches on a map that cannot mark links", async () => {
    const { map, calls } = fakeMap(false);
    const marks = runMapMarks({ t: translator("en"), numbers: numberFormatters("en"), http: new ScriptedApi(), map: () => Promise.resolve(map) });
    expect(await marks.showFailure(["leaf-03", "link:12"])).toBe("This map cannot mark links; only the switches of leaf-03, link:12 are marked.");
    expect(calls).toEqual([["nodes", ["leaf-03"], ["failed"]]]);
  });

  it("says so when the page has no map", async () => {
    const api = new ScriptedApi();
    const marks = runMapMarks({ t: translator("en"), numbers: numberFormatters("en"), http: api, map: () => Promise.resolve(null) });
    expect(await marks.showFailure(["leaf-03"])).toBe("There is no map on this page to show it on.");
    expect(await marks.showPlacement("/api/runs/12/", "aware")).toBe("There is no map on this page to show it on.");
    expect(api.gets).toEqual([]);
  });
});
