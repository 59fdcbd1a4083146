// The map shows one link-utilisation overlay at a time. Whoever draws one (a
// collective run's result, live telemetry, a replay) claims the slot first;
// the previous holder hears that it lost it and puts its controls back to
// "off" (the newcomer draws over the map, so nobody needs to clear it).

import type { MapModel } from "./model";
import type { TopologyMap } from "./topologyMap";

export interface OverlayHolder {
  /** Another holder took the slot: stop drawing and reset the controls. */
  onLost(): void;
}

export interface OverlaySlot {
  /** Takes the slot for `holder`; the previous holder (if another) hears onLost first. */
  claim(holder: OverlayHolder): void;
  /** Gives the slot up if `holder` has it; says whether it did. */
  release(holder: OverlayHolder): boolean;
  holds(holder: OverlayHolder): boolean;
}

export function overlaySlot(): OverlaySlot {
  let current: OverlayHolder | null = null;
  return {
    claim(holder) {
      const previous = current;
      current = holder;
      if (previous !== null && previous !== holder) {
        previous.onLost();
      }
    },
    release(holder) {
      if (current !== holder) {
        return false;
      }
      current = null;
      return true;
    },
    holds: (holder) => current === holder,
  };
}

/** The part of the map this needs; tests pass a fake. */
export type UtilisationMap = Pick<TopologyMap, "setLinkUtilisation" | "clearOverlay">;

/** A map frames are drawn on: its layout's link count (when known) tells whether a frame fits it. */
export type FrameMap = UtilisationMap & {
  /** The layout: the whole MapModel on the real map (the utilisation views read it), its link count on fakes. */
  readonly model?: { readonly linkCount: number; readonly snapshot?: unknown } | MapModel;
  /** Banded colours under the viewer's thresholds (absent on fakes). */
  readonly setUtilisationThresholds?: TopologyMap["setUtilisationThresholds"];
};
