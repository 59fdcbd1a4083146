// Page bootstrap: reads the contract attributes the Django templates render
// and wires each feature that is present on the page.

import { wireCollectiveForm } from "./collectiveForm";
import { mountFabricLive } from "./fabricLive";
import { numberFormatters } from "./format";
import { jsonClient, readCookie } from "./http";
import { INTL_LOCALE, resolveLanguage, translator } from "./i18n";
import { LiveStatusMonitor, fetchHealth } from "./liveStatus";
import { openBrowserSocket } from "./reconnectingSocket";
import { runOverlay } from "./runOverlay";
import { canCancelRuns } from "./runState";
import { mountRunWidget, type RunWidgetContext } from "./runWidget";
import { wireStartButton } from "./startRun";
import { mountMapFromPage } from "./map/mountFromPage";
import { localizeTimes } from "./times";
import { browserTimers } from "./timers";
import { browserSendForm } from "./upload/sendForm";
import { wireUploadForm } from "./upload/uploadForm";

export function startApp(doc: Document): void {
  const language = resolveLanguage(doc.body.dataset["lang"]);
  const t = translator(language);
  const fetchImpl = window.fetch.bind(window);
  const csrfToken = () => readCookie(doc.cookie, "csrftoken");
  const http = jsonClient(fetchImpl, csrfToken);

  localizeTimes(doc);

  const banner = doc.getElementById("live-status");
  const healthUrl = doc.body.dataset["healthUrl"] ?? "/api/health/";
  const liveStatus = new LiveStatusMonitor({
    checkHealth: () => fetchHealth(fetchImpl, healthUrl),
    showBanner: (message) => {
      if (banner !== null) {
        banner.textContent = message === null ? "" : t(message);
        banner.hidden = message === null;
      }
    },
    timers: browserTimers,
  });
  liveStatus.check();

  const numbers = numberFormatters(INTL_LOCALE[language]);
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
  };
  for (const widget of doc.querySelectorAll<HTMLElement>(".run-widget")) {
    mountRunWidget(widget, runContext);
  }

  const startButton = doc.getElementById("start-hop-stats");
  const runSlot = doc.getElementById("run-slot");
  if (startButton instanceof HTMLButtonElement && runSlot !== null) {
    wireStartButton(startButton, runSlot, runContext);
  }

  const fabricMap = doc.getElementById("fabric-map");
  const mapReady = fabricMap === null ? Promise.resolve(null) : mountMapFromPage(fabricMap, { doc, t, http });

  const collectiveForm = doc.getElementById("collective-form");
  const collectiveSlot = doc.getElementById("collective-slot");
  if (collectiveForm instanceof HTMLFormElement && collectiveSlot !== null) {
    const overlay = runOverlay({ doc, t, http, map: () => mapReady.catch(() => null) });
    wireCollectiveForm(collectiveForm, collectiveSlot, runContext, overlay.offer);
  }

  const fabricLive = doc.getElementById("fabric-live");
  if (fabricLive !== null) {
    mountFabricLive(fabricLive, runContext);
  }

  const uploadForm = doc.querySelector("form[data-upload]");
  if (uploadForm instanceof HTMLFormElement) {
    wireUploadForm(uploadForm, { doc, t, numbers, sendForm: browserSendForm, csrfToken, pageUrl: window.location.href });
  }
}
