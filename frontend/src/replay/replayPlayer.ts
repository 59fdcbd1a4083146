// The replay player on a finished replay's run page:
// <div id="replay-player" data-ws="/ws/replays/12/" data-frame-url="/api/runs/12/frames/"
//      data-frames="600" data-can-control="true|false">, with #fabric-map below it.
//
// Live: the replay's websocket sends the shared playback state ("replay.state")
// and, while playing, frames ("replay.frame", newest seq wins); people who may
// control it send play / pause / seek / speed / loop, others follow. The
// server pushes a frame on connect and on seek and pause too; should it not
// come while paused, the frame the state points at is fetched over HTTP.
// Without a live socket (dropped or refused) the player browses the frames
// over HTTP on its own, for everyone: slider, play at the chosen speed, loop.
//
// Each frame colours the map's links (setLinkUtilisation) and fills the
// hottest-links table, the event counts and the busiest link per frame (a line chart).

import { mountChart, type Chart } from "../charts/chart";
import { lineChartOption } from "../charts/options";
import { element } from "../core/dom";
import { formatDuration, type NumberFormatters } from "../core/format";
import { FRAME_MESSAGE_VERSION } from "./frameMessage";
import { SeqGate, frameUtilisation, mismatchNote, parseFrameAnswer, parseReplayMessage, type Frame, type ReplayState } from "./frames";
import { describeRequestError, type JsonClient } from "../core/http";
import type { Translate } from "../core/i18n";
import { connectionReporter, type LiveStatusMonitor } from "../live/liveStatus";
import type { OverlayHolder, OverlaySlot } from "../map/overlaySlot";
import { ReconnectingSocket, websocketUrl, type OpenSocket } from "../core/reconnectingSocket";
import {
  REPLAY_SPEEDS,
  clampIndex,
  frameUrl,
  isReplaySpeed,
  localPace,
  nextIndex,
} from "./replay";
import type { FrameMap } from "../map/overlaySlot";
import type { ThresholdStore } from "./thresholds";
import type { Timers } from "../core/timers";
import { layoutOfMap, mountUtilisationViews } from "./utilisationViews";

export interface ReplayPlayerContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly numbers: NumberFormatters;
  readonly http: JsonClient;
  readonly liveStatus: LiveStatusMonitor;
  readonly pageLocation: Pick<Location, "protocol" | "host">;
  readonly openSocket: OpenSocket;
  readonly timers: Timers;
  readonly random?: (() => number) | undefined;
  /** The page's map once it is drawn; null when there is none or it failed to load. */
  readonly map: () => Promise<FrameMap | null>;
  readonly slot?: OverlaySlot | undefined;
  /** The viewer's utilisation thresholds: with them, the utilisation views are drawn below the player. */
  readonly thresholds?: ThresholdStore | undefined;
  /**
   * The frame to open at (a deep link's): browsing alone, the player shows it; on the shared
   * playback one who may control it seeks there, others follow the shared position.
   */
  readonly startFrame?: number | null | undefined;
  /** Hears the index of each frame shown. */
  readonly onFrame?: ((index: number) => void) | undefined;
}

export interface ReplayPlayer {
  /** Closes the socket and stops local playback. */
  stop(): void;
}

/** How long the player waits for the socket's first state before browsing over HTTP on its own. */
export const CONNECT_GRACE_MS = 2000;
/** How long a paused live player waits for the server's pushed frame before fetching it. */
export const LIVE_FETCH_GRACE_MS = 400;

/** The speed's label: "0.25×" … "64×", or "max". */
export function speedLabel(speed: number, t: Translate): string {
  return speed === 0 ? t("replay.speedMax") : t("replay.speedValue", { speed: String(speed) });
}

export function mountReplayPlayer(host: HTMLElement, context: ReplayPlayerContext): ReplayPlayer {
  const { doc, t, numbers } = context;
  const wsPath = host.dataset["ws"] ?? "";
  const frameBase = host.dataset["frameUrl"] ?? "";
  const canControl = host.dataset["canControl"] === "true";
  const given = Number.parseInt(host.dataset["frames"] ?? "", 10);
  let frames = Number.isSafeInteger(given) && given > 0 ? given : 0;

  // ---- state ------------------------------------------------------------
  let live: ReplayState | null = null; // the server's state while a socket is live
  let connecting = wsPath !== ""; // until the first state, or until the socket gives up
  const local = { playing: false, speed: 1, loop: false };
  let shown: { index: number; frame: Frame } | null = null;
  let series = new Float32Array(frames).fill(Number.NaN);
  let fetchToken = 0;
  let pendingIndex: number | null = null;
  let playTimer: number | null = null;
  let graceTimer: number | null = null;
  let connectTimer: number | null = null;
  let dragging = false;
  let map: FrameMap | null = null;
  let startFrame = context.startFrame ?? null; // used once, by the first frame the player asks for
  const gate = new SeqGate();

  // ---- DOM --------------------------------------------------------------
  host.classList.add("replay-player");
  const playButton = element(doc, "button", { type: "button", class: "btn btn-small replay-play", "aria-keyshortcuts": "k" });
  const timeline = element(doc, "input", { type: "range", class: "replay-timeline", min: "0", step: "1", value: "0", "aria-label": t("replay.timeline") });
  const time = element(doc, "span", { class: "replay-time" });
  const position = element(doc, "span", { class: "replay-position" });
  const speedSelect = element(doc, "select", { class: "replay-speed" });
  const loopBox = element(doc, "input", { type: "checkbox", class: "replay-loop" });
  const controls = element(doc, "div", { class: "replay-controls", role: "group", "aria-label": t("replay.controls") }, [
    playButton,
    timeline,
    time,
    position,
    element(doc, "label", {}, [t("replay.speed"), " ", speedSelect]),
    element(doc, "label", {}, [loopBox, " ", t("replay.loop")]),
  ]);
  const viewerNote = element(doc, "p", { class: "muted replay-viewer-note" }, [t("replay.viewerNote")]);
  viewerNote.hidden = true;
  const modeNote = element(doc, "p", { class: "muted replay-mode" });
  modeNote.hidden = true;
  const problem = element(doc, "p", { class: "error-text replay-error", role: "alert" });
  problem.hidden = true;
  const sparkHost = element(doc, "div", { class: "replay-spark", role: "img" });
  const sparkFigure = element(doc, "figure", { class: "replay-spark-figure" }, [
    element(doc, "figcaption", { class: "muted" }, [t("replay.sparkline")]),
    sparkHost,
  ]);
  let sparkChart: Chart | null = null;
  const events = element(doc, "p", { class: "replay-events" });
  const topBody = element(doc, "tbody");
  const topTable = element(doc, "table", { class: "data replay-top" }, [
    element(doc, "caption", {}, [t("replay.topCaption")]),
    element(doc, "thead", {}, [
      element(doc, "tr", {}, [
        ...(["collective.from", "collective.to", "collective.class"] as const).map((key) => element(doc, "th", {}, [t(key)])),
        ...(["collective.utilisation", "replay.congestion"] as const).map((key) => element(doc, "th", { class: "num" }, [t(key)])),
      ]),
    ]),
    topBody,
  ]);
  topTable.hidden = true;
  const views = context.thresholds === undefined ? null : mountUtilisationViews({ doc, t, numbers, thresholds: context.thresholds });
  host.replaceChildren(controls, viewerNote, modeNote, problem, sparkFigure, events, topTable, ...(views === null ? [] : [views.element]));
  host.tabIndex = -1;

  const showProblem = (message: string | null): void => {
    problem.textContent = message ?? "";
    problem.hidden = message === null;
  };

  // ---- rendering --------------------------------------------------------
  const playing = (): boolean => (live === null ? local.playing : live.playing);
  const speed = (): number => (live === null ? local.speed : live.speed);
  const loop = (): boolean => (live === null ? local.loop : live.loop);
  /** Whether this page may act: always on its own; on the shared playback only with data-can-control. */
  const controllable = (): boolean => (live === null ? !connecting : canControl);

  const positionText = (index: number): string => t("replay.position", { index: numbers.integer(index + 1), frames: numbers.integer(frames) });

  const renderSpeeds = (): void => {
    const current = speed();
    const offered = REPLAY_SPEEDS.includes(current) ? REPLAY_SPEEDS : [...REPLAY_SPEEDS, current];
    speedSelect.replaceChildren(...offered.map((value) => element(doc, "option", { value: String(value) }, [speedLabel(value, t)])));
    speedSelect.value = String(current);
  };

  const renderControls = (): void => {
    const enabled = controllable() && frames > 0;
    playButton.textContent = playing() ? t("replay.pause") : t("replay.play");
    playButton.setAttribute("aria-pressed", String(playing()));
    for (const control of [playButton, timeline, speedSelect, loopBox]) {
      control.disabled = !enabled;
    }
    timeline.max = String(Math.max(0, frames - 1));
    loopBox.checked = loop();
    renderSpeeds();
    viewerNote.hidden = controllable();
    const index = live?.index ?? shown?.index ?? 0;
    if (!dragging && (shown === null || live !== null)) {
      timeline.value = String(index);
    }
  };

  const renderPosition = (index: number, frame: Frame | null): void => {
    const at = frame === null ? "" : t("replay.time", { time: formatDuration(frame.tS, numbers, t) });
    time.textContent = at;
    position.textContent = positionText(index);
    timeline.setAttribute("aria-valuetext", at === "" ? positionText(index) : `${positionText(index)}, ${at}`);
  };

  const renderSpark = (index: number): void => {
    const option = lineChartOption({
      title: t("replay.sparkline"),
      x: { name: t("replay.frameAxis"), format: (value) => numbers.integer(value), log: false, min: 1, max: Math.max(1, frames) },
      y: { name: t("replay.busiestAxis"), format: (value) => numbers.percent(value), log: false, min: 0, max: 1 },
      series: [{ name: t("replay.busiestSeries"), points: Array.from(series, (value, at) => [at + 1, value] as const) }],
      marker: { x: index + 1, label: positionText(index) },
    });
    if (sparkChart === null) {
      sparkChart = mountChart(sparkHost, option, "svg", 180);
    } else {
      sparkChart.update(option);
    }
  };

  const renderFrame = (index: number, frame: Frame): void => {
    if (!dragging) {
      timeline.value = String(index);
    }
    renderPosition(index, frame);
    renderSpark(index);
    const parts: string[] = [];
    if (frame.eventsDone !== null && frame.eventsTotal !== null) {
      parts.push(t("replay.eventsDone", { done: numbers.integer(frame.eventsDone), total: numbers.integer(frame.eventsTotal) }));
    }
    if (frame.activeCount !== null) {
      parts.push(t("replay.active", { count: numbers.integer(frame.activeCount) }));
    }
    if (frame.totals.maxUtilization !== null) {
      parts.push(t("replay.busiest", { utilisation: numbers.percent(frame.totals.maxUtilization) }));
    }
    events.textContent = parts.join(t("list.separator"));
    topBody.replaceChildren(
      ...frame.top.map((link) =>
        element(doc, "tr", {}, [
          element(doc, "td", {}, [link.from]),
          element(doc, "td", {}, [link.to]),
          element(doc, "td", {}, [link.linkClass]),
          element(doc, "td", { class: "num" }, [numbers.percent(link.utilization)]),
          element(doc, "td", { class: "num" }, [numbers.percent(link.congestion)]),
        ]),
      ),
    );
    topTable.hidden = frame.top.length === 0;
  };

  const draw = (): void => {
    if (map === null || shown === null) {
      return;
    }
    const mismatch = mismatchNote(shown.frame, map.model, t);
    if (mismatch !== null) {
      showProblem(mismatch);
      return;
    }
    const values = frameUtilisation(shown.frame);
    if (values === null) {
      showProblem(t("replay.unreadable"));
      return;
    }
    map.setLinkUtilisation({ values });
  };

  const apply = (index: number, frame: Frame): void => {
    if (index >= frames) {
      // A replay longer than the page was told: grow with it.
      frames = index + 1;
      const grown = new Float32Array(frames).fill(Number.NaN);
      grown.set(series);
      series = grown;
      renderControls();
    }
    shown = { index, frame };
    series[index] = frame.totals.maxUtilization ?? Number.NaN;
    renderFrame(index, frame);
    views?.show(index, frame);
    draw();
    context.onFrame?.(index);
  };

  // ---- HTTP frames ------------------------------------------------------
  /** Fetches and shows one frame; a newer fetch or a websocket frame supersedes it. Resolves whether it was shown. */
  const fetchFrame = (index: number | "last"): Promise<boolean> => {
    if (frameBase === "") {
      return Promise.resolve(false);
    }
    fetchToken += 1;
    const token = fetchToken;
    pendingIndex = index === "last" ? null : index;
    return context.http.get(frameUrl(frameBase, index)).then(
      (body) => {
        if (token !== fetchToken) {
          return false;
        }
        pendingIndex = null;
        const answer = parseFrameAnswer(body);
        if (answer === null) {
          showProblem(t("replay.unreadable"));
          return false;
        }
        const at = answer.index ?? (index === "last" ? Math.max(0, frames - 1) : index);
        showProblem(null);
        apply(at, answer.frame);
        return true;
      },
      (error: unknown) => {
        if (token === fetchToken) {
          pendingIndex = null;
          showProblem(t("replay.frameFailed", { detail: describeRequestError(error, t) }));
        }
        return false;
      },
    );
  };

  const stopGrace = (): void => {
    if (graceTimer !== null) {
      context.timers.clearTimeout(graceTimer);
      graceTimer = null;
    }
  };

  /**
   * A paused live player shows the frame the state points at: the server
   * pushes it, so HTTP is only asked when it has not come after a grace period.
   */
  const expectFrame = (index: number): void => {
    stopGrace();
    if (live === null || live.playing || shown?.index === index || pendingIndex === index) {
      return;
    }
    graceTimer = context.timers.setTimeout(() => {
      graceTimer = null;
      if (live !== null && !live.playing && shown?.index !== index && pendingIndex !== index) {
        void fetchFrame(index);
      }
    }, LIVE_FETCH_GRACE_MS);
  };

  // ---- local playback (no live socket) ----------------------------------
  const stopLocalTimer = (): void => {
    if (playTimer !== null) {
      context.timers.clearTimeout(playTimer);
      playTimer = null;
    }
  };

  const scheduleLocal = (): void => {
    stopLocalTimer();
    if (live !== null || !local.playing || shown === null) {
      return;
    }
    const { delayMs, step } = localPace(shown.frame.tEndS - shown.frame.tS, local.speed);
    playTimer = context.timers.setTimeout(() => {
      playTimer = null;
      if (live !== null || !local.playing || shown === null) {
        return;
      }
      const next = nextIndex(shown.index, step, frames, local.loop);
      if (next === null) {
        local.playing = false;
        renderControls();
        return;
      }
      void fetchFrame(next).then((ok) => {
        if (ok) {
          scheduleLocal();
        } else if (pendingIndex === null) {
          local.playing = false; // the frame failed: stop rather than hammer the server
          renderControls();
        }
      });
    }, delayMs);
  };

  const setLocalPlaying = (on: boolean): void => {
    local.playing = on && frames > 0;
    if (local.playing && (shown === null || (shown.index >= frames - 1 && !local.loop))) {
      // Nothing shown yet, or play at the end: start from the first frame.
      void fetchFrame(0).then((ok) => {
        if (ok) {
          scheduleLocal();
        }
      });
    } else {
      scheduleLocal();
    }
    renderControls();
  };

  // ---- live socket ------------------------------------------------------
  const reporter = connectionReporter(context.liveStatus);
  const stopConnectTimer = (): void => {
    if (connectTimer !== null) {
      context.timers.clearTimeout(connectTimer);
      connectTimer = null;
    }
  };

  const goLocal = (): void => {
    connecting = false;
    stopGrace();
    stopConnectTimer();
    if (shown === null && pendingIndex === null) {
      const wanted = startFrame;
      startFrame = null;
      void fetchFrame(wanted !== null ? (frames > 0 ? clampIndex(wanted, frames) : wanted) : frames > 0 ? 0 : "last");
    }
    if (live !== null) {
      local.speed = live.speed;
      local.loop = live.loop;
      local.playing = false;
      live = null;
    }
    modeNote.textContent = t("replay.localMode");
    modeNote.hidden = false;
    renderControls();
  };

  let unsupportedVersion: number | null = null;
  const socket: ReconnectingSocket | null =
    wsPath === ""
      ? null
      : new ReconnectingSocket({
          url: websocketUrl(context.pageLocation, wsPath),
          onMessage: (data) => {
            const message = parseReplayMessage(data);
            if (message === null) {
              return;
            }
            socket?.markHealthy();
            if (message.type === "error") {
              showProblem(message.detail === "" ? t("replay.serverError") : message.detail);
            } else if (message.type === "unsupported") {
              // Drawing bytes of an unknown layout would show garbage: say so instead, once in the console.
              if (unsupportedVersion !== message.version) {
                unsupportedVersion = message.version;
                console.error(`replay: binary frame layout version ${message.version}; this page reads version ${FRAME_MESSAGE_VERSION}: reload it`);
              }
              showProblem(t("replay.frameVersion", { version: message.version, known: FRAME_MESSAGE_VERSION }));
            } else if (message.type === "state") {
              if (live === null) {
                stopLocalTimer();
                local.playing = false;
                modeNote.hidden = true;
              }
              connecting = false;
              stopConnectTimer();
              showProblem(null); // a refused command is answered by an error, a carried-out one by a state
              live = message.state;
              if (message.state.frames > 0 && message.state.frames !== frames) {
                frames = message.state.frames;
                const resized = new Float32Array(frames).fill(Number.NaN);
                resized.set(series.subarray(0, frames));
                series = resized;
              }
              renderControls();
              if (shown?.index === live.index) {
                renderPosition(live.index, shown.frame);
              }
              const wanted = startFrame;
              startFrame = null;
              if (wanted !== null && canControl && frames > 0 && clampIndex(wanted, frames) !== live.index && send({ action: "seek", index: clampIndex(wanted, frames) })) {
                return; // the state that answers the seek brings its frame
              }
              expectFrame(live.index);
            } else if (gate.accept(message.seq)) {
              fetchToken += 1; // a fetch in flight is older than this frame
              pendingIndex = null;
              stopGrace();
              apply(message.index, message.frame);
            }
          },
          onConnected: () => {
            gate.reset();
            reporter.onConnected();
          },
          onDisconnected: () => {
            reporter.onDisconnected();
            goLocal();
          },
          onRejected: (code) => {
            reporter.onRejected(code);
            goLocal();
          },
          openSocket: context.openSocket,
          timers: context.timers,
          random: context.random,
        });

  /** Sends a command on the live socket; false when it could not go (the player then acts locally). */
  const send = (command: Record<string, unknown>): boolean => {
    if (live === null || socket === null) {
      return false;
    }
    if (!socket.send(JSON.stringify(command))) {
      showProblem(t("replay.notSent"));
      return false;
    }
    return true;
  };

  // ---- controls ---------------------------------------------------------
  const togglePlay = (): void => {
    if (!controllable()) {
      return;
    }
    if (live !== null) {
      send({ action: live.playing ? "pause" : "play" });
    } else {
      setLocalPlaying(!local.playing);
    }
  };

  const seek = (wanted: number): void => {
    if (!controllable() || frames === 0) {
      return;
    }
    const index = clampIndex(wanted, frames);
    if (live !== null) {
      send({ action: "seek", index });
      return;
    }
    stopLocalTimer();
    void fetchFrame(index).then((ok) => {
      if (ok) {
        scheduleLocal();
      }
    });
  };

  playButton.addEventListener("click", togglePlay);
  timeline.addEventListener("input", () => {
    dragging = true;
    position.textContent = positionText(Number(timeline.value));
  });
  timeline.addEventListener("change", () => {
    dragging = false;
    seek(Number(timeline.value));
  });
  speedSelect.addEventListener("change", () => {
    const value = Number(speedSelect.value);
    if (!isReplaySpeed(value) || !controllable()) {
      return;
    }
    if (live !== null) {
      send({ action: "speed", speed: value });
    } else {
      local.speed = value;
      scheduleLocal();
    }
  });
  loopBox.addEventListener("change", () => {
    if (!controllable()) {
      return;
    }
    if (live !== null) {
      send({ action: "loop", loop: loopBox.checked });
    } else {
      local.loop = loopBox.checked;
    }
  });
  // Keys on the player (not inside a form control): k plays / pauses, "," and "." step one frame.
  host.addEventListener("keydown", (event) => {
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement || event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    const index = shown?.index ?? live?.index ?? 0;
    const actions: Record<string, () => void> = {
      k: togglePlay,
      ",": () => seek(index - 1),
      ".": () => seek(index + 1),
    };
    const action = actions[event.key];
    if (action !== undefined) {
      event.preventDefault();
      action();
    }
  });

  // ---- start ------------------------------------------------------------
  const holder: OverlayHolder = {
    onLost: () => {
      map = null; // someone else draws now; frames keep filling the table
    },
  };
  context.slot?.claim(holder);
  void context.map().then((found) => {
    views?.setLayout(layoutOfMap(found));
    if (context.slot === undefined || context.slot.holds(holder)) {
      map = found;
      draw();
    }
  });

  renderControls();
  renderPosition(0, null);
  renderSpark(0);
  if (socket === null) {
    goLocal();
  } else {
    // The socket's opening messages carry the state and the current frame; a
    // socket that hangs must not leave the player empty.
    connectTimer = context.timers.setTimeout(() => {
      connectTimer = null;
      if (live === null) {
        goLocal();
      }
    }, CONNECT_GRACE_MS);
    socket.start();
  }

  return {
    stop() {
      stopLocalTimer();
      stopGrace();
      stopConnectTimer();
      socket?.stop();
      context.slot?.release(holder);
      views?.stop();
      sparkChart?.dispose();
      sparkChart = null;
    },
  };
}
