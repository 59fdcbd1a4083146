// SVG of the current view, generated from the visible elements (not a
// screenshot): group frames, links, markers and labels, placed as on screen
// (labelPlacement.ts) so that none overlaps another.

import { LABEL_FONT_PX, NAME_COLOUR, TITLE_COLOUR, placeLabels } from "./labelPlacement";
import type { View } from "./lod";
import type { MapModel } from "./model";
import type { StyledScene } from "./style";

export interface SvgOptions {
  /** Output size in CSS pixels (the map's size on screen). */
  readonly width: number;
  readonly height: number;
  readonly title: string;
  /** Open groups to draw as frames. */
  readonly frames: ArrayLike<number>;
  readonly background?: string;
}

export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c] ?? c);
}

const fmt = (value: number): string => (Math.round(value * 10) / 10).toString();

export function sceneToSvg(model: MapModel, styled: StyledScene, view: View, options: SvgOptions): string {
  const { width, height } = options;
  const scale = Math.min(width / Math.max(1e-9, view.x1 - view.x0), height / Math.max(1e-9, view.y1 - view.y0));
  // Centre the view rectangle in the output, as the map does.
  const offsetX = (width - (view.x1 - view.x0) * scale) / 2 - view.x0 * scale;
  const offsetY = (height - (view.y1 - view.y0) * scale) / 2 - view.y0 * scale;
  const px = (x: number): number => x * scale + offsetX;
  const py = (y: number): number => y * scale + offsetY;
  const visible = (x: number, y: number): boolean => {
    const sx = px(x);
    const sy = py(y);
    return sx >= -20 && sy >= -20 && sx <= width + 20 && sy <= height + 20;
  };
  const position = new Map(styled.nodes.map((node) => [node.item, node]));

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif">`,
    `<title>${escapeXml(options.title)}</title>`,
    `<rect width="100%" height="100%" fill="${options.background ?? "#ffffff"}"/>`,
    `<g class="frames" fill="none" stroke="#cbd5e1">`,
  ];
  for (let i = 0; i < options.frames.length; i += 1) {
    const g = options.frames[i] as number;
    const x = px(model.groupX[g] as number);
    const y = py(model.groupY[g] as number);
    const w = (model.groupW[g] as number) * scale;
    const h = (model.groupH[g] as number) * scale;
    if (x > width || y > height || x + w < 0 || y + h < 0) {
      continue;
    }
    parts.push(`<rect x="${fmt(x)}" y="${fmt(y)}" width="${fmt(w)}" height="${fmt(h)}" rx="3"/>`);
  }
  parts.push(`</g>`, `<g class="links" stroke-linecap="round">`);
  const edges = [...styled.edges].sort((left, right) => left.zIndex - right.zIndex);
  for (const edge of edges) {
    const a = position.get(edge.a);
    const b = position.get(edge.b);
    if (a === undefined || b === undefined || (!visible(a.x, a.y) && !visible(b.x, b.y))) {
      continue;
    }
    parts.push(
      `<line x1="${fmt(px(a.x))}" y1="${fmt(py(a.y))}" x2="${fmt(px(b.x))}" y2="${fmt(py(b.y))}" stroke="${edge.color}" stroke-width="${fmt(Math.max(0.5, edge.size))}"/>`,
    );
  }
  parts.push(`</g>`, `<g class="nodes">`);
  const nodes = [...styled.nodes].sort((left, right) => left.zIndex - right.zIndex);
  for (const node of nodes) {
    if (!visible(node.x, node.y)) {
      continue;
    }
    parts.push(
      `<circle cx="${fmt(px(node.x))}" cy="${fmt(py(node.y))}" r="${fmt(node.size)}" fill="${node.color}"><title>${escapeXml(node.label)}</title></circle>`,
    );
  }
  parts.push(`</g>`, `<g class="labels" font-size="${String(LABEL_FONT_PX)}" stroke="none">`);
  // No canvas to measure with: system-ui averages about 0.6 em a character.
  const measure = (text: string): number => text.length * LABEL_FONT_PX * 0.6;
  for (const label of placeLabels(model, styled.nodes, options.frames, (x, y) => ({ x: px(x), y: py(y) }), { width, height }, measure)) {
    parts.push(
      `<text x="${fmt(label.x)}" y="${fmt(label.y + LABEL_FONT_PX)}" fill="${label.kind === "title" ? TITLE_COLOUR : NAME_COLOUR}">${escapeXml(label.text)}</text>`,
    );
  }
  parts.push(`</g>`, `</svg>`);
  return parts.join("\n");
}
