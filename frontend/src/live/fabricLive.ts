// The #fabric-live banner on a fabric's page: listens on the fabric's
// websocket and says when someone stores a new snapshot, with a link to it.
// The same socket carries live telemetry frames, handed to a TelemetryListener.

import { RECONNECT_BACKOFF } from "../core/backoff";
import { element } from "../core/dom";
import { parseTelemetryMessage, type TelemetryMessage } from "../replay/frames";
import type { MessageKey, Translate } from "../core/i18n";
import { connectionReporter, type LiveStatusMonitor } from "./liveStatus";
import { ReconnectingSocket, websocketUrl, type OpenSocket } from "../core/reconnectingSocket";
import type { Timers } from "../core/timers";

/** The fields of a "fabric.snapshot" message the banner uses. */
export interface SnapshotAnnouncement {
  readonly id: number;
  readonly version: number;
  readonly role: string;
  readonly sourceFormat: string;
  readonly createdBy: string | null;
}

/** A "fabric.snapshot" message, or null for anything else (unknown types, malformed JSON). */
export function parseFabricMessage(data: string): SnapshotAnnouncement | null {
  let message: unknown;
  try {
    message = JSON.parse(data) as unknown;
  } catch {
    return null;
  }
  if (typeof message !== "object" || message === null) {
    return null;
  }
  const { type, snapshot } = message as Record<string, unknown>;
  if (type !== "fabric.snapshot" || typeof snapshot !== "object" || snapshot === null) {
    return null;
  }
  const { id, version, role, source_format: sourceFormat, created_by: createdBy } = snapshot as Record<string, unknown>;
  if (!Number.isInteger(id) || !Number.isInteger(version) || typeof role !== "string") {
    return null;
  }
  return {
    id: id as number,
    version: version as number,
    role,
    sourceFormat: typeof sourceFormat === "string" ? sourceFormat : "",
    createdBy: typeof createdBy === "string" && createdBy !== "" ? createdBy : null,
  };
}

const ROLE_LABELS: Readonly<Record<string, MessageKey>> = {
  discovered: "fabricLive.role.discovered",
  plan: "fabricLive.role.plan",
};

/** "New snapshot v2 (discovered) from ibnetdiscover uploaded by alice." */
export function announcementText(snapshot: SnapshotAnnouncement, t: Translate): string {
  const roleKey = ROLE_LABELS[snapshot.role];
  const params = {
    version: snapshot.version,
    role: roleKey === undefined ? snapshot.role : t(roleKey),
    format: snapshot.sourceFormat,
  };
  return snapshot.createdBy === null
    ? t("fabricLive.snapshot", params)
    : t("fabricLive.snapshotBy", { ...params, user: snapshot.createdBy });
}

/** The fabric page showing one snapshot. */
export function snapshotPageUrl(fabricUrl: string, snapshotId: number): string {
  return `${fabricUrl}${fabricUrl.includes("?") ? "&" : "?"}snapshot=${snapshotId}`;
}

/** Hears the socket's "fabric.telemetry" frames (liveTelemetry.ts). */
export interface TelemetryListener {
  offer(message: TelemetryMessage): void;
  /** A (re)connected socket: the server may number its frames afresh. */
  connected(): void;
}

export interface FabricLiveContext {
  readonly doc: Document;
  readonly t: Translate;
  readonly liveStatus: LiveStatusMonitor;
  readonly pageLocation: Pick<Location, "protocol" | "host">;
  readonly openSocket: OpenSocket;
  readonly timers: Timers;
  readonly random?: () => number;
  readonly telemetry?: TelemetryListener | null | undefined;
}

/** Starts listening; returns the socket (for stop()), or null when the banner names no socket. */
export function mountFabricLive(banner: HTMLElement, context: FabricLiveContext): ReconnectingSocket | null {
  const wsPath = banner.dataset["fabricWs"] ?? "";
  const fabricUrl = banner.dataset["fabricUrl"] ?? "";
  if (wsPath === "") {
    return null;
  }
  // Announced politely to screen readers when it appears.
  banner.setAttribute("role", "status");
  const reporter = connectionReporter(context.liveStatus);
  const telemetry = context.telemetry ?? null;
  const socket: ReconnectingSocket = new ReconnectingSocket({
    url: websocketUrl(context.pageLocation, wsPath),
    onMessage: (data) => {
      if (typeof data !== "string") {
        return; // the fabric socket's messages are text (telemetry frames included)
      }
      const snapshot = parseFabricMessage(data);
      if (snapshot === null) {
        const frame = telemetry === null ? null : parseTelemetryMessage(data);
        if (frame !== null) {
          socket.markHealthy();
          telemetry?.offer(frame);
        }
        return;
      }
      socket.markHealthy();
      banner.replaceChildren(
        announcementText(snapshot, context.t),
        " ",
        element(context.doc, "a", { href: snapshotPageUrl(fabricUrl, snapshot.id) }, [context.t("fabricLive.show")]),
      );
      banner.hidden = false;
    },
    onConnected: () => {
      reporter.onConnected();
      telemetry?.connected();
    },
    onDisconnected: reporter.onDisconnected,
    onRejected: reporter.onRejected,
    // The server sends nothing until a snapshot lands, so a connection that
    // has simply stayed up for the longest retry delay counts as healthy.
    stableAfterMs: RECONNECT_BACKOFF.capMs,
    openSocket: context.openSocket,
    timers: context.timers,
    random: context.random,
  });
  socket.start();
  return socket;
}
