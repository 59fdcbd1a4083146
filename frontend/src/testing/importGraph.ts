// The import graph of the frontend's modules, for the test that keeps it free of
// cycles. Type-only imports count too: a cycle of types still ties the modules'
// designs together.

/** Static, re-export, side-effect and dynamic imports of relative modules. */
const IMPORT_SPECIFIER = /(?:\bimport\s[^;]*?\bfrom\s*|\bexport\s[^;]*?\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;

export function relativeImports(source: string): string[] {
  return [...source.matchAll(IMPORT_SPECIFIER)].map((match) => match[1] ?? "");
}

/** Resolves `specifier` from module `from` ("runs/runWidget.ts") among `modules`; null when it names no module there (JSON, CSS). */
export function resolveImport(from: string, specifier: string, modules: ReadonlySet<string>): string | null {
  const parts = from.split("/").slice(0, -1);
  for (const part of specifier.split("/")) {
    if (part === "..") {
      parts.pop();
    } else if (part !== ".") {
      parts.push(part);
    }
  }
  const path = parts.join("/");
  for (const candidate of [path, `${path}.ts`, `${path}/index.ts`]) {
    if (modules.has(candidate)) {
      return candidate;
    }
  }
  return null;
}

/** Every import cycle (a strongly connected component of two or more modules, or a module importing itself), each sorted. */
export function importCycles(sources: ReadonlyMap<string, string>): string[][] {
  const modules = new Set(sources.keys());
  const edges = new Map<string, string[]>();
  for (const [module, source] of sources) {
    const targets = relativeImports(source)
      .map((specifier) => resolveImport(module, specifier, modules))
      .filter((target): target is string => target !== null);
    edges.set(module, targets);
  }
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (module: string): void => {
    index.set(module, index.size);
    low.set(module, index.get(module) ?? 0);
    stack.push(module);
    onStack.add(module);
    for (const target of edges.get(module) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(module, Math.min(low.get(module) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(module, Math.min(low.get(module) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(module) === index.get(module)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member !== undefined) {
          onStack.delete(member);
          component.push(member);
        }
      } while (member !== undefined && member !== module);
      if (component.length > 1 || (edges.get(module) ?? []).includes(module)) {
        cycles.push(component.sort());
      }
    }
  };
  for (const module of [...modules].sort()) {
    if (!index.has(module)) {
      visit(module);
    }
  }
  return cycles;
}
