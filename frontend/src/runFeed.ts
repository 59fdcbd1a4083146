// Keeps one run's view current from its websocket: filters frames by seq,
// reconnects with backoff until the run reaches a terminal status, then closes.

import { backoffDelay } from "./backoff";
import {
  EMPTY_TRACKER,
  applyFrame,
  applySnapshot,
  isTerminal,
  parseRunStateFrame,
  type Run,
  type RunTracker,
} from "./runState";
import type { Timers } from "./timers";

export interface SocketHandlers {
  onOpen(): void;
  onMessage(data: string): void;
  onClose(): void;
}

export interface SocketConnection {
  close(): void;
}

/** Opens a socket to `url` and reports its events; a seam so tests need no network. */
export type OpenSocket = (url: string, handlers: SocketHandlers) => SocketConnection;

export const openBrowserSocket: OpenSocket = (url, handlers) => {
  const socket = new WebSocket(url);
  socket.onopen = () => handlers.onOpen();
  socket.onmessage = (event: MessageEvent<unknown>) => {
    if (typeof event.data === "string") {
      handlers.onMessage(event.data);
    }
  };
  // Every failure ends in "close" (an "error" event is always followed by one).
  socket.onclose = () => handlers.onClose();
  return socket;
};

/** Resolves a websocket path from the page contract against the page's own origin. */
export function websocketUrl(pageLocation: Pick<Location, "protocol" | "host">, path: string): string {
  if (/^wss?:\/\//.test(path)) {
    return path;
  }
  return (pageLocation.protocol === "https:" ? "wss://" : "ws://") + pageLocation.host + path;
}

export interface RunFeedOptions {
  readonly url: string;
  /** Called each time the shown run changes. */
  readonly onRun: (run: Run, framesApplied: number) => void;
  readonly onConnected: () => void;
  /** Called when the socket drops (or fails to open) before the run ended. */
  readonly onDisconnected: () => void;
  readonly openSocket: OpenSocket;
  readonly timers: Timers;
  readonly random?: () => number;
}

export class RunFeed {
  private tracker: RunTracker = EMPTY_TRACKER;
  private connection: SocketConnection | null = null;
  /** Identifies the live connection so events from a replaced socket are ignored. */
  private connectionToken: object | null = null;
  private retryTimer: number | null = null;
  private failedAttempts = 0;
  private finished = false;

  constructor(private readonly options: RunFeedOptions) {}

  start(): void {
    if (!this.finished && this.connectionToken === null && this.retryTimer === null) {
      this.connect();
    }
  }

  /** Offers a snapshot obtained over HTTP (initial page data or the run URL). */
  offerSnapshot(run: Run): void {
    this.update(applySnapshot(this.tracker, run));
  }

  /** Stops for good: closes the socket and cancels any pending reconnect. */
  stop(): void {
    this.finished = true;
    if (this.retryTimer !== null) {
      this.options.timers.clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    const connection = this.connection;
    this.connection = null;
    this.connectionToken = null;
    connection?.close();
  }

  private connect(): void {
    const token = {};
    this.connectionToken = token;
    const isCurrent = () => this.connectionToken === token;
    try {
      this.connection = this.options.openSocket(this.options.url, {
        onOpen: () => {
          if (isCurrent()) {
            this.options.onConnected();
          }
        },
        onMessage: (data) => {
          if (isCurrent()) {
            this.receive(data);
          }
        },
        onClose: () => {
          if (isCurrent()) {
            this.dropped();
          }
        },
      });
    } catch {
      // The constructor throws on malformed URLs; retrying keeps the banner logic uniform.
      this.dropped();
    }
  }

  private receive(data: string): void {
    const frame = parseRunStateFrame(data);
    if (frame === null) {
      return;
    }
    // Reset only once the server has proved the connection useful: a socket
    // that opens and is closed at once must not retry every second forever.
    this.failedAttempts = 0;
    this.update(applyFrame(this.tracker, frame));
  }

  private dropped(): void {
    this.connection = null;
    this.connectionToken = null;
    if (this.finished) {
      return;
    }
    this.options.onDisconnected();
    const delay = backoffDelay(this.failedAttempts, this.options.random);
    this.failedAttempts += 1;
    this.retryTimer = this.options.timers.setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  private update(next: RunTracker): void {
    if (next === this.tracker || next.run === null) {
      return;
    }
    this.tracker = next;
    this.options.onRun(next.run, next.framesApplied);
    if (isTerminal(next.run.status)) {
      this.stop();
    }
  }
}
