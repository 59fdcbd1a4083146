import { describe, expect, it } from "vitest";
import { overlaySlot, type OverlayHolder } from "./overlaySlot";

function holder(log: string[], name: string): OverlayHolder {
  return { onLost: () => log.push(`${name} lost`) };
}

describe("overlaySlot", () => {
  it("tells the previous holder when another claims the slot", () => {
    const log: string[] = [];
    const slot = overlaySlot();
    const run = holder(log, "run");
    const telemetry = holder(log, "telemetry");
    slot.claim(run);
    slot.claim(run);
    expect(log).toEqual([]);
    slot.claim(telemetry);
    expect(log).toEqual(["run lost"]);
    expect(slot.holds(telemetry)).toBe(true);
    expect(slot.holds(run)).toBe(false);
  });

  it("is released only by its holder", () => {
    const log: string[] = [];
    const slot = overlaySlot();
    const run = holder(log, "run");
    const telemetry = holder(log, "telemetry");
    slot.claim(run);
    expect(slot.release(telemetry)).toBe(false);
    expect(slot.release(run)).toBe(true);
    expect(slot.holds(run)).toBe(false);
    slot.claim(telemetry);
    expect(log).toEqual([]);
  });
});
