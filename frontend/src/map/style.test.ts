import { describe, expect, it } from "vitest";
import { LINK_COLOURS, PATH_COLOUR } from "./style";

/** WCAG's relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const channel = (offset: number): number => {
    const value = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

describe("link colours", () => {
  it("tell degraded from down by lightness, which every colour-vision deficiency keeps", () => {
    expect(contrast(LINK_COLOURS.degraded, LINK_COLOURS.down)).toBeGreaterThanOrEqual(3);
  });

  it("never draw the path in a link state's colour", () => {
    expect(Object.values(LINK_COLOURS)).not.toContain(PATH_COLOUR);
    expect(contrast(PATH_COLOUR, LINK_COLOURS.degraded)).toBeGreaterThanOrEqual(2);
  });
});
