// Draws a finished collective run's link utilisation on the fabric map: on
// "succeeded" it fetches the run's detail (per-link arrays in the layout's link
// order) and hands them to the map, with a "Showing … — Clear" note in
// #map-overlay-note next to #fabric-map. One run at a time: a newer one replaces it.
// It shares the map's one utilisation overlay with live telemetry through the
// page's OverlaySlot: the later of the two replaces the other.

import { collectiveLinkUtilisation } from "./collective";
import { element } from "../core/dom";
import { describeRequestError, type JsonClient } from "../core/http";
import type { Translate } from "../core/i18n";
import type { OverlayHolder, OverlaySlot, UtilisationMap } from "../map/overlaySlot";
import { runSubresourceUrl, type Run } from "./runState";

export interface RunOverlayContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly http: JsonClient;
  /** The page's map once it is drawn; null when there is none or it failed to load. */
  readonly map: () => Promise<UtilisationMap | null>;
  /** The page's one utilisation overlay, shared with live telemetry. */
  readonly slot?: OverlaySlot | undefined;
}

export interface RunOverlay {
  /** A RunListener for collective run widgets. */
  offer(run: Run, runUrl: string): void;
  /** Removes the overlay and the note; a detail still on its way is ignored. */
  clear(): void;
}

export function runOverlay(context: RunOverlayContext): RunOverlay {
  const { doc, t, http } = context;
  let request = 0; // bumped per fetch, so only the newest answer is drawn
  let requestedRun: number | null = null;
  let shownOn: UtilisationMap | null = null;

  const note = (): HTMLElement | null => {
    const existing = doc.getElementById("map-overlay-note");
    if (existing !== null) {
      return existing;
    }
    const created = element(doc, "p", { id: "map-overlay-note", class: "map-overlay-note", role: "status" });
    const host = doc.getElementById("fabric-map");
    if (host === null) {
      return null;
    }
    host.after(created);
    return created;
  };

  const say = (className: string, children: readonly (Node | string)[]): void => {
    const target = note();
    if (target !== null) {
      target.className = `map-overlay-note ${className}`.trim();
      target.replaceChildren(...children);
      target.hidden = false;
    }
  };

  const hideNote = (): void => {
    const target = doc.getElementById("map-overlay-note");
    if (target !== null) {
      target.replaceChildren();
      target.hidden = true;
    }
  };

  // Telemetry took the map: forget the run (its answer in flight too); the map is redrawn by the newcomer.
  const holder: OverlayHolder = {
    onLost: () => {
      request += 1;
      requestedRun = null;
      shownOn = null;
      hideNote();
    },
  };

  const clear = (): void => {
    request += 1;
    requestedRun = null;
    context.slot?.release(holder);
    shownOn?.clearOverlay("utilisation");
    shownOn = null;
    hideNote();
  };

  /** Nothing of this run got drawn: if it had taken the map from telemetry, leave the map clear. */
  const giveBack = (): void => {
    if (shownOn === null && context.slot?.release(holder) === true) {
      void context.map().then((map) => map?.clearOverlay("utilisation"));
    }
  };

  const show = (run: Run, runUrl: string, token: number): Promise<void> =>
    context.map().then(async (map) => {
      if (map === null || token !== request) {
        return;
      }
      const values = collectiveLinkUtilisation(await http.get(runSubresourceUrl(runUrl, "detail")));
      if (token !== request) {
        return;
      }
      if (values === null) {
        giveBack();
        say("muted", [t("mapOverlay.noData", { id: run.id })]);
        return;
      }
      if (shownOn !== null && shownOn !== map) {
        shownOn.clearOverlay("utilisation");
      }
      map.setLinkUtilisation({ values });
      shownOn = map;
      const clearButton = element(doc, "button", { type: "button", class: "btn btn-small" }, [t("mapOverlay.clear")]);
      clearButton.addEventListener("click", clear);
      say("", [t("mapOverlay.showing", { id: run.id }), " ", clearButton]);
    });

  return {
    offer(run, runUrl) {
      if (run.kind !== "collective" || run.status !== "succeeded" || runUrl === "" || run.id === requestedRun) {
        return;
      }
      context.slot?.claim(holder);
      requestedRun = run.id;
      request += 1;
      const token = request;
      show(run, runUrl, token).catch((error: unknown) => {
        if (token === request) {
          giveBack();
          say("error-text", [t("mapOverlay.failed", { id: run.id, detail: describeRequestError(error, t) })]);
        }
      });
    },
    clear,
  };
}
