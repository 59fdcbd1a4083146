// A tiny element builder so rendering code reads as structure, not as
// createElement/setAttribute noise. Text always goes through text nodes, never
// innerHTML, because names and messages come from the server.

export type Child = Node | string | null;

export function element<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  attributes: Readonly<Record<string, string>> = {},
  children: readonly Child[] = [],
): HTMLElementTagNameMap[K] {
  const node = doc.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null) {
      node.append(child);
    }
  }
  return node;
}

// Menus that take effect as soon as they change (the language menu) send their form then; the
// Content-Security-Policy forbids the inline onchange handler that would otherwise do it.
export function submitOnChange(doc: Document): void {
  for (const select of doc.querySelectorAll<HTMLSelectElement>("select[data-submit-on-change]")) {
    select.addEventListener("change", () => select.form?.submit());
  }
}
