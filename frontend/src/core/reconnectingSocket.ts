// One websocket kept open across drops: reconnects with backoff, ignores events
// from sockets it has replaced, and gives up for good on the close codes that
// say a retry cannot succeed. The run feed and the fabric notices share it.

import { backoffDelay } from "./backoff";
import type { Timers } from "./timers";

export interface SocketHandlers {
  onOpen(): void;
  /** Text messages as strings, binary ones (replay frames) as the whole received buffer. */
  onMessage(data: string | ArrayBuffer): void;
  /** `code` is the close frame's code (1006 when the connection just died). */
  onClose(code: number): void;
}

export interface SocketConnection {
  close(): void;
  /** Sends a text message; only called once the socket has opened. */
  send(data: string): void;
}

/** Opens a socket to `url` and reports its events; a seam so tests need no network. */
export type OpenSocket = (url: string, handlers: SocketHandlers) => SocketConnection;

export const openBrowserSocket: OpenSocket = (url, handlers) => {
  const socket = new WebSocket(url);
  socket.binaryType = "arraybuffer"; // binary frames are read with typed arrays, at once (a Blob would need an await)
  socket.onopen = () => handlers.onOpen();
  socket.onmessage = (event: MessageEvent<unknown>) => {
    if (typeof event.data === "string" || event.data instanceof ArrayBuffer) {
      handlers.onMessage(event.data);
    }
  };
  // Every failure ends in "close" (an "error" event is always followed by one).
  socket.onclose = (event: CloseEvent) => handlers.onClose(event.code);
  return socket;
};

/** Resolves a websocket path from the page contract against the page's own origin. */
export function websocketUrl(pageLocation: Pick<Location, "protocol" | "host">, path: string): string {
  if (/^wss?:\/\//.test(path)) {
    return path;
  }
  return (pageLocation.protocol === "https:" ? "wss://" : "ws://") + pageLocation.host + path;
}

/**
 * Close codes after which retrying is pointless (twin/common/websocket.py):
 * 4401 not logged in, 4404 no such run or fabric. 4503 (broker down) is retried.
 */
export const FINAL_CLOSE_CODES: ReadonlySet<number> = new Set([4401, 4404]);

export interface ReconnectingSocketOptions {
  readonly url: string;
  readonly onMessage: (data: string | ArrayBuffer) => void;
  readonly onConnected: () => void;
  /** The socket dropped (or failed to open); a retry is scheduled. */
  readonly onDisconnected: () => void;
  /** The server closed with one of FINAL_CLOSE_CODES; nothing more will happen. Owners say why. */
  readonly onRejected: (code: number) => void;
  /**
   * For sockets the server may leave silent for long: once a connection has
   * stayed open this long, the next drop retries from the shortest delay
   * again. Without it, only markHealthy() resets the schedule.
   */
  readonly stableAfterMs?: number | undefined;
  readonly openSocket: OpenSocket;
  readonly timers: Timers;
  readonly random?: (() => number) | undefined;
}

export class ReconnectingSocket {
  private connection: SocketConnection | null = null;
  /** Identifies the live connection so events from a replaced socket are ignored. */
  private connectionToken: object | null = null;
  private retryTimer: number | null = null;
  private stableTimer: number | null = null;
  private failedAttempts = 0;
  private stopped = false;
  private open = false;

  constructor(private readonly options: ReconnectingSocketOptions) {}

  start(): void {
    if (!this.stopped && this.connectionToken === null && this.retryTimer === null) {
      this.connect();
    }
  }

  /**
   * The server proved the connection useful, so the next drop retries from the
   * shortest delay. Owners call it on a valid message, not on open: a socket
   * that opens and is closed at once must not retry every second forever.
   */
  markHealthy(): void {
    this.failedAttempts = 0;
  }

  /**
   * Sends on the open connection; false (nothing sent) while connecting or
   * disconnected: the owner decides whether that matters.
   */
  send(data: string): boolean {
    if (!this.open || this.connection === null) {
      return false;
    }
    try {
      this.connection.send(data);
      return true;
    } catch {
      return false;
    }
  }

  /** Stops for good: closes the socket and cancels any pending reconnect. */
  stop(): void {
    this.stopped = true;
    this.open = false;
    this.clearTimer("retryTimer");
    this.clearTimer("stableTimer");
    const connection = this.connection;
    this.connection = null;
    this.connectionToken = null;
    connection?.close();
  }

  private clearTimer(name: "retryTimer" | "stableTimer"): void {
    const handle = this[name];
    if (handle !== null) {
      this.options.timers.clearTimeout(handle);
      this[name] = null;
    }
  }

  private connect(): void {
    const token = {};
    this.connectionToken = token;
    const isCurrent = () => this.connectionToken === token;
    try {
      this.connection = this.options.openSocket(this.options.url, {
        onOpen: () => {
          if (isCurrent()) {
            this.opened();
          }
        },
        onMessage: (data) => {
          if (isCurrent()) {
            this.options.onMessage(data);
          }
        },
        onClose: (code) => {
          if (isCurrent()) {
            this.closed(code);
          }
        },
      });
    } catch {
      // The constructor throws on malformed URLs; retrying keeps the banner logic uniform.
      this.closed(1006);
    }
  }

  private opened(): void {
    this.open = true;
    const stableAfterMs = this.options.stableAfterMs;
    if (stableAfterMs !== undefined) {
      this.clearTimer("stableTimer");
      this.stableTimer = this.options.timers.setTimeout(() => {
        this.stableTimer = null;
        this.markHealthy();
      }, stableAfterMs);
    }
    this.options.onConnected();
  }

  private closed(code: number): void {
    this.open = false;
    this.connection = null;
    this.connectionToken = null;
    this.clearTimer("stableTimer");
    if (this.stopped) {
      return;
    }
    if (FINAL_CLOSE_CODES.has(code)) {
      this.stopped = true;
      this.options.onRejected(code);
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
}
