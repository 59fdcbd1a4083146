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
import { mountReplayPlayer, type ReplayPlayer } from "./replay/replayPlayer";
import { runMapMarks } from "./runs/runMarks";
import { runOverlay } from "./runs/runOverlay";
import { canCancelRuns } from "./runs/runState";
import { mountRunWidget, type RunListener, type RunWidgetContext } from "./runs/runWidget";
import { wirePanelForm } from "./runs/panelForm";
import { wireStartButton } from "./runs/startRun";
import { bindMapThresholds, thresholdStore, type ThresholdStorage } from "./replay/thresholds";
import { mountMapFromPage } from "./map/mountFromPage";
import type { TopologyMap } from "./map/topologyMap";
import { localizeTimes } from "./core/times";
import { browserTimers } from "./core/timers";
import { browserSendForm } from "./upload/sendForm";
import { wireUploadForm } from "./upload/uploadForm";
import { mountWorkspace, type Workspace } from "./workspace/workspace";

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

  // The workspace's docks first, so that the map measures the room it is given.
  const workspaceRoot = doc.getElementById("workspace");
  let workspace: Workspace | null = null;

  // The map first: run results offer "Show on map" only when there is one.
  const fabricMap = doc.getElementById("fabric-map");
  const mapContext = {
    doc,
    t,
    numbers,
    http,
    onSelect: (id: string | null) => workspace?.onSelect(id),
    onSelectLink: (link: number | null) => workspace?.onSelectLink(link),
  };
  let mapReady: Promise<TopologyMap | null> = Promise.resolve(null);
  const map = () => mapReady.catch(() => null);
  // One link-utilisation overlay at a time: collective runs, live telemetry, a replay.
  const slot = overlaySlot();
  // The viewer's utilisation thresholds, for the replay player's and live telemetry's views and the map.
  const thresholds = thresholdStore(browserStorage());
  const marks = fabricMap === null ? undefined : runMapMarks({ t, numbers, http, map });

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
    marks,
  };
  const overlay = fabricMap === null ? null : runOverlay({ doc, t, http, map, slot });
  // One replay player at a time: a newer replay's replaces the one shown.
  let player: ReplayPlayer | null = null;
  const showReplay = (host: HTMLElement, startFrame: number | null): void => {
    player?.stop();
    player = mountReplayPlayer(host, {
      ...runContext,
      map,
      slot,
      thresholds,
      startFrame,
      onFrame: (index) => workspace?.onFrame(index),
    });
  };
  if (workspaceRoot !== null) {
    workspace = mountWorkspace(
      workspaceRoot,
      { doc, t, http, timers: browserTimers, location: window.location, replaceUrl: (url) => window.history.replaceState(window.history.state, "", url) },
      {
        overlay: overlay ?? undefined,
        marks,
        showReplay,
        showHops: () => map().then((found) => (found?.showHopsFrom(null) ? t("hopStats.onMap") : t("marks.noMap"))),
      },
    );
  }
  if (fabricMap !== null) {
    mapReady = mountMapFromPage(fabricMap, mapContext);
  }
  const linkedNode = workspace?.link.current.node ?? null;
  const linkedLink = workspace?.link.current.link ?? null;
  if (linkedNode !== null) {
    // The deep link's node: selected and centred, its details in their panel.
    void map().then((found) => found?.selectNode(linkedNode));
  } else if (linkedLink !== null) {
    // Or its link: picked and centred, its cables in the details panel.
    void map().then((found) => found?.selectLink(linkedLink));
  }

  const replayPlayer = doc.getElementById("replay-player");
  const runOfPlayer = (host: HTMLElement): number | null => {
    const id = Number.parseInt(/\/replays\/(\d+)\//.exec(host.dataset["ws"] ?? "")?.[1] ?? "", 10);
    return Number.isSafeInteger(id) ? id : null;
  };
  const mountPlayer = (host: HTMLElement) => showReplay(host, workspace?.startFrameFor(runOfPlayer(host)) ?? null);
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
  /** Every run a page shows tells the page's player and the workspace (URL, map, player). */
  const onRun: RunListener = (run, runUrl) => {
    onPageRun?.(run, runUrl);
    workspace?.onRun(run, runUrl);
  };

  // Slots where runs are started: each keeps its own widget (a deep link's too) current.
  const launchSlots: HTMLElement[] = [];
  const startButton = doc.getElementById("start-hop-stats");
  const runSlot = doc.getElementById("run-slot");
  if (startButton instanceof HTMLButtonElement && runSlot !== null) {
    wireStartButton(startButton, runSlot, runContext, onRun);
    launchSlots.push(runSlot);
  }

  const collectiveForm = doc.getElementById("collective-form");
  const collectiveSlot = doc.getElementById("collective-slot");
  if (collectiveForm instanceof HTMLFormElement && collectiveSlot !== null) {
    // In the workspace onRun draws the utilisation; elsewhere the overlay hears the form's runs itself.
    wireCollectiveForm(collectiveForm, collectiveSlot, runContext, workspace === null && overlay !== null ? overlay.offer : onRun);
    launchSlots.push(collectiveSlot);
  }

  if (workspace !== null) {
    for (const form of doc.querySelectorAll<HTMLFormElement>("form[data-run-slot]")) {
      const formSlot = doc.getElementById(form.dataset["runSlot"] ?? "");
      if (formSlot !== null) {
        wirePanelForm(form, formSlot, runContext, onRun);
        launchSlots.push(formSlot);
      }
    }
  }
  for (const widget of doc.querySelectorAll<HTMLElement>(".run-widget")) {
    if (!launchSlots.some((owner) => owner.contains(widget))) {
      mountRunWidget(widget, runContext, undefined, onRun);
    }
  }

  const fabricLive = doc.getElementById("fabric-live");
  if (fabricLive !== null) {
    // mountMapFromPage may have replaced an old template's canvas: look the host up again.
    const mapHost = doc.getElementById("fabric-map");
    const telemetry =
      mapHost !== null && (fabricLive.dataset["fabricWs"] ?? "") !== "" ? mountLiveTelemetry(mapHost, { doc, t, map, slot, numbers, thresholds }) : null;
    mountFabricLive(fabricLive, { ...runContext, telemetry });
  }

  if (replayPlayer !== null || workspace !== null || doc.getElementById("telemetry-toggle") !== null) {
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
