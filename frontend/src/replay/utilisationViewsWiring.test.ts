// @vitest-environment happy-dom
import { describe, expect, it } from "vitest";
import { numberFormatters } from "../core/format";
import { parseFrame, type Frame } from "./frames";
import { translator } from "../core/i18n";
import { mountLiveTelemetry } from "../live/liveTelemetry";
import type { LinkValues } from "../map/overlay";
import { overlaySlot } from "../map/overlaySlot";
import type { FrameMap } from "../map/overlaySlot";
import { base64Bytes, chartTexts, chartsDrawn, replayFrame, settle } from "../testing/fakes";
import { thresholdStore, type UtilisationThresholds } from "./thresholds";

class ThresholdMap implements FrameMap {
  readonly thresholds: (UtilisationThresholds | null)[] = [];
  readonly model = { linkCount: 4 };
  setLinkUtilisation(_input: LinkValues): { unmatched: number } {
    return { unmatched: 0 };
  }
  clearOverlay(): void {}
  setUtilisationThresholds(thresholds: UtilisationThresholds | null): void {
    this.thresholds.push(thresholds);
  }
}

describe("live telemetry with the utilisation views", () => {
  it("shows the views while on, charts the hot links of each frame and hides them when off", async () => {
    document.body.innerHTML = `<section><div id="fabric-map"></div></section>`;
    const store = thresholdStore(null);
    const map = new ThresholdMap();
    const telemetry = mountLiveTelemetry(document.getElementById("fabric-map") as HTMLElement, {
      doc: document,
      t: translator("en"),
      map: () => Promise.resolve(map),
      slot: overlaySlot(),
      timeZone: "UTC",
      numbers: numberFormatters("en"),
      thresholds: store,
    });
    await settle();
    const views = document.querySelector<HTMLElement>(".telemetry-views")!;
    expect(views.nextElementSibling?.id).toBe("fabric-map");
    expect(views.hidden).toBe(true);
    telemetry.setOn(true);
    expect(views.hidden).toBe(false);
    const top = [{ link: 0, from: "leaf-1", to: "spine-1", utilization: 1, congestion: 1.5, class: "leaf-spine" }];
    telemetry.offer({ seq: 1, frame: parseLike(top) });
    await chartsDrawn();
    expect(chartTexts(views.querySelector(".util-series-chart"))).toContain("leaf-1 → spine-1 (peak 100.0%)");
    telemetry.setOn(false);
    expect(views.hidden).toBe(true);
    expect(views.querySelector(".util-series-chart svg")).toBeNull();
  });
});

function parseLike(top: Record<string, unknown>[]): Frame {
  return parseFrame(replayFrame({ source: "telemetry", links: 4, utilization: base64Bytes([255, 0, 0, 0]), top })) as Frame;
}
