// The frontend is split by feature (core, live, map, runs, replay, upload, charts): the
// folders may depend on each other, but no chain of imports may come back to where it
// started.

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { importCycles, relativeImports } from "./testing/importGraph";

const SRC = new URL(".", import.meta.url).pathname;

function moduleSources(directory: string): Map<string, string> {
  const sources = new Map<string, string>();
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) {
      const path = join(entry.parentPath, entry.name);
      sources.set(relative(directory, path), readFileSync(path, "utf8"));
    }
  }
  return sources;
}

describe("import graph", () => {
  it("reads static, type-only, re-export, side-effect and dynamic imports", () => {
    const source = [
      'import { a } from "./a";',
      'import type {\n  B,\n} from "../b";',
      'export { c } from "./c";',
      'import "./d.css";',
      'const e = await import("./e");',
      'import Sigma from "sigma";',
    ].join("\n");
    expect(relativeImports(source)).toEqual(["./a", "../b", "./c", "./d.css", "./e"]);
  });

  it("finds a cycle through a type-only import, and a module importing itself", () => {
    const sources = new Map([
      ["runs/runResult.ts", 'import { renderFailures } from "./failuresResult";'],
      ["runs/failuresResult.ts", 'import type { RenderContext } from "./runResult";'],
      ["core/dom.ts", 'import { x } from "./dom";'],
      ["app.ts", 'import { renderRunOutcome } from "./runs/runResult";\nimport "./core/dom";'],
    ]);
    expect(importCycles(sources)).toEqual([["runs/failuresResult.ts", "runs/runResult.ts"], ["core/dom.ts"]]);
  });

  it("has no cycle in src/", () => {
    const sources = moduleSources(SRC);
    expect(sources.size).toBeGreaterThan(50);
    expect(importCycles(sources)).toEqual([]);
  });
});
