// "Live telemetry" on a fabric's page: a toggle (#telemetry-toggle, off by
// default) next to #fabric-map. While on, every newer "fabric.telemetry"
// frame from the fabric's socket colours the map's links, with a note saying
// when the last sample was taken; off clears the overlay. It shares the map's
// one utilisation overlay with collective runs through the page's OverlaySlot.

import { element } from "../core/dom";
import { formatLocalDateTime } from "../core/format";
import { SeqGate, frameUtilisation, mismatchNote, type Frame, type TelemetryMessage } from "../replay/frames";
import type { TelemetryListener } from "./fabricLive";
import type { Translate } from "../core/i18n";
import type { OverlayHolder, OverlaySlot } from "../map/overlaySlot";
import type { FrameMap } from "../map/overlaySlot";
import type { NumberFormatters } from "../core/format";
import type { ThresholdStore } from "../replay/thresholds";
import { layoutOfMap, mountUtilisationViews } from "../replay/utilisationViews";

/** "Live: last sample at 2026-11-30 09:00:01, 2 unknown ports" (the window's end, in the viewer's time zone). */
export function telemetryNote(frame: Frame, t: Translate, timeZone?: string): string {
  const instant = new Date(frame.tEndS * 1000);
  const time = Number.isNaN(instant.getTime()) ? String(frame.tEndS) : (formatLocalDateTime(instant.toISOString(), timeZone) ?? "");
  const unknown = frame.telemetry?.unknownPorts ?? 0;
  if (unknown === 0) {
    return t("telemetry.note", { time });
  }
  return t(unknown === 1 ? "telemetry.noteOneUnknown" : "telemetry.noteUnknown", { time, count: unknown });
}

export interface LiveTelemetryContext {
  readonly doc: Document;
  readonly t: Translate;
  /** The page's map once it is drawn; null when there is none or it failed to load. */
  readonly map: () => Promise<FrameMap | null>;
  readonly slot: OverlaySlot;
  /** For tests; the viewer's own by default. */
  readonly timeZone?: string | undefined;
  /** With both, the utilisation views (thresholds, heatmap, hottest links) follow the live frames while on. */
  readonly numbers?: NumberFormatters | undefined;
  readonly thresholds?: ThresholdStore | undefined;
}

export interface LiveTelemetry extends TelemetryListener {
  setOn(on: boolean): void;
  readonly button: HTMLButtonElement;
}

/** Puts the toggle and its note just before the map host and returns the socket's listener. */
export function mountLiveTelemetry(mapHost: HTMLElement, context: LiveTelemetryContext): LiveTelemetry {
  const { doc, t } = context;
  const button = element(doc, "button", { type: "button", id: "telemetry-toggle", class: "btn btn-small", "aria-pressed": "false" }, [
    t("telemetry.toggle"),
  ]);
  const note = element(doc, "span", { id: "telemetry-note", class: "muted", role: "status" });
  note.hidden = true;
  mapHost.before(element(doc, "div", { class: "map-live-bar" }, [button, " ", note]));
  const views =
    context.numbers === undefined || context.thresholds === undefined
      ? null
      : mountUtilisationViews({ doc, t, numbers: context.numbers, thresholds: context.thresholds });
  if (views !== null) {
    views.element.hidden = true;
    views.element.classList.add("telemetry-views");
    mapHost.before(views.element);
  }

  const gate = new SeqGate();
  let on = false;
  let latest: Frame | null = null;
  let map: FrameMap | null = null;
  let latestSeq = 0;

  const showNote = (text: string, className = "muted"): void => {
    note.textContent = text;
    note.className = className;
    note.hidden = false;
  };

  const draw = (): void => {
    if (!on) {
      return;
    }
    if (latest === null) {
      showNote(t("telemetry.waiting"));
      return;
    }
    const mismatch = map === null ? null : mismatchNote(latest, map.model, t);
    if (map !== null && mismatch !== null) {
      // Telemetry is mapped onto the fabric's latest snapshot; this page may show another one.
      map.clearOverlay("utilisation");
      showNote(mismatch, "error-text");
      return;
    }
    const values = frameUtilisation(latest);
    if (values === null) {
      showNote(t("telemetry.unreadable"), "error-text");
      return;
    }
    map?.setLinkUtilisation({ values });
    views?.show(latestSeq, latest);
    showNote(telemetryNote(latest, t, context.timeZone));
  };

  const holder: OverlayHolder = {
    onLost: () => {
      on = false;
      button.setAttribute("aria-pressed", "false");
      note.hidden = true;
      hideViews();
    },
  };

  function hideViews(): void {
    if (views !== null) {
      views.element.hidden = true;
      views.reset();
    }
  }

  const setOn = (wanted: boolean): void => {
    if (wanted === on) {
      return;
    }
    on = wanted;
    button.setAttribute("aria-pressed", String(on));
    if (on) {
      context.slot.claim(holder);
      if (views !== null) {
        views.element.hidden = false;
      }
      draw();
    } else {
      context.slot.release(holder);
      map?.clearOverlay("utilisation");
      note.hidden = true;
      hideViews();
    }
  };

  button.addEventListener("click", () => setOn(!on));
  void context.map().then((found) => {
    map = found;
    views?.setLayout(layoutOfMap(found));
    draw();
  });

  return {
    button,
    setOn,
    offer(message: TelemetryMessage) {
      if (!gate.accept(message.seq)) {
        return;
      }
      latest = message.frame;
      latestSeq = message.seq;
      draw();
    },
    connected() {
      gate.reset();
    },
  };
}
