// Page bootstrap: reads the contract attributes the Django templates render
// and wires each feature that is present on the page.

import { wireCollectiveForm } from "./runs/collectiveForm";
import { submitOnChange } from "./core/dom";
import { mountFabricLive } from "./live/fabricLive";
import { numberFormatters } from "./core/format";
import { jsonClient, readCookie } from "./core/http";
import { INTL_LOCALE, resolveLanguage, translator } from "./core/i18n";
import { liveStatusForPage } from "./live/liveStatus";
import { mountLiveTelemetry } from "./live/liveTelemetry";
import { overlaySlot } from "./map/overlaySlot";
import { openBrowserSocket } from "./core/reconnectingSocket";
import { mountReplayPlayer } from "./replay/replayPlayer";
import { runMapMarks } from "./runs/runMarks";
import { runOverlay } from "./runs/runOverlay";
import { canCancelRuns } from "./runs/runState";
import { mountRunWidget, type RunListener, type RunWidgetContext } from "./runs/runWidget";
import { wireStartButton } from "./runs/startRun";
import { bindMapThresholds, thresholdStore, type ThresholdStorage } from "./replay/thresholds";
import { mountMapFromPage } from "./map/mountFromPage";
import { localizeTimes } from "./core/times";
import { browserTimers } from "./core/timers";
import { browserSendForm } from "./upload/sendForm";
import { wireUploadForm } from "./upload/uploadForm";

export function startApp(doc: Document): void {
  const language = resolveLanguage(doc.body.dataset["lang"]);
  const t = translator(language);
  const fetchImpl = window.fetch.bind(window);
  const csrfToken = () => readCookie(doc.cookie, "csrftoken");
  const http = jsonClient(fetchImpl, csrfToken);

  localizeTimes(doc);
  submitOnChange(doc);

  const liveStatus = liveStatusForPage(doc, fetchImpl, t, browserTimers);
  liveStatus.check();

  const numbers = numberFormatters(INTL_LOCALE[language]);

  // The map first: run results offer "Show on map" only when there is one.
  const fabricMap = doc.getElementById("fabric-map");
  const mapReady = fabricMap === null ? Promise.resolve(null) : mountMapFromPage(fabricMap, { doc, t, numbers, http });
  const map = () => mapReady.catch(() => null);
  // One link-utilisation overlay at a time: collective runs, live telemetry, a replay.
  const slot = overlaySlot();
  // The viewer's utilisation thresholds, for the replay player's and live telemetry's views and the map.
  const thresholds = thresholdStore(browserStorage());

  const runContext: RunWidgetContext = {
    doc,
    t,
    numbers,
    http,
    liveStatus,
    pageLocation: window.location,
    openSocket: openBrowserSocket,
    timers: browserTimers,
    canCancel: canCancelRuns(doc.body.dataset["userRole"]),
    marks: fabricMap === null ? undefined : runMapMarks({ t, numbers, http, map }),
  };
  const replayPlayer = doc.getElementById("replay-player");
  const mountPlayer = (host: HTMLElement) => mountReplayPlayer(host, { ...runContext, map, slot, thresholds });
  // A replay still being computed: its player mounts itself once the page's run has succeeded.
  let onPageRun: RunListener | undefined;
  if (replayPlayer !== null && replayPlayer.dataset["awaitRun"] === "true") {
    onPageRun = (run) => {
      if (run.status === "succeeded" && replayPlayer.dataset["awaitRun"] === "true") {
        delete replayPlayer.dataset["awaitRun"];
        replayPlayer.replaceChildren();
        mountPlayer(replayPlayer);
      }
    };
  } else if (replayPlayer !== null) {
    mountPlayer(replayPlayer);
  }
  for (const widget of doc.querySelectorAll<HTMLElement>(".run-widget")) {
    mountRunWidget(widget, runContext, undefined, onPageRun);
  }

  const startButton = doc.getElementById("start-hop-stats");
  const runSlot = doc.getElementById("run-slot");
  if (startButton instanceof HTMLButtonElement && runSlot !== null) {
    wireStartButton(startButton, runSlot, runContext);
  }

  const collectiveForm = doc.getElementById("collective-form");
  const collectiveSlot = doc.getElementById("collective-slot");
  if (collectiveForm instanceof HTMLFormElement && collectiveSlot !== null) {
    const overlay = runOverlay({ doc, t, http, map, slot });
    wireCollectiveForm(collectiveForm, collectiveSlot, runContext, overlay.offer);
  }

  const fabricLive = doc.getElementById("fabric-live");
  if (fabricLive !== null) {
    // mountMapFromPage may have replaced an old template's canvas: look the host up again.
    const mapHost = doc.getElementById("fabric-map");
    const telemetry =
      mapHost !== null && (fabricLive.dataset["fabricWs"] ?? "") !== "" ? mountLiveTelemetry(mapHost, { doc, t, map, slot, numbers, thresholds }) : null;
    mountFabricLive(fabricLive, { ...runContext, telemetry });
  }

  if (replayPlayer !== null || doc.getElementById("telemetry-toggle") !== null) {
    void map().then((found) => bindMapThresholds(thresholds, found));
  }

  const uploadForm = doc.querySelector("form[data-upload]");
  if (uploadForm instanceof HTMLFormElement) {
    wireUploadForm(uploadForm, { doc, t, numbers, sendForm: browserSendForm, csrfToken, pageUrl: window.location.href });
  }
}

/** localStorage, or null where reading it throws (storage disabled). */
function browserStorage(): ThresholdStorage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}
