// Keeps one run's view current from its websocket: filters frames by seq,
// reconnects with backoff until the run reaches a terminal status, then closes.

import { ReconnectingSocket, type OpenSocket } from "../core/reconnectingSocket";
import {
  EMPTY_TRACKER,
  applyFrame,
  applySnapshot,
  isTerminal,
  parseRunStateFrame,
  type Run,
  type RunTracker,
} from "./runState";
import type { Timers } from "../core/timers";

export interface RunFeedOptions {
  readonly url: string;
  /** Called each time the shown run changes. */
  readonly onRun: (run: Run, framesApplied: number) => void;
  readonly onConnected: () => void;
  /** Called when the socket drops (or fails to open) before the run ended. */
  readonly onDisconnected: () => void;
  /** Called when the server refuses the socket for good (not logged in, no such run). */
  readonly onRejected: (code: number) => void;
  readonly openSocket: OpenSocket;
  readonly timers: Timers;
  readonly random?: () => number;
}

export class RunFeed {
  private tracker: RunTracker = EMPTY_TRACKER;
  private readonly socket: ReconnectingSocket;

  constructor(private readonly options: RunFeedOptions) {
    this.socket = new ReconnectingSocket({
      url: options.url,
      onMessage: (data) => {
        if (typeof data === "string") {
          this.receive(data); // run states are text; the run socket sends nothing binary
        }
      },
      onConnected: options.onConnected,
      onDisconnected: options.onDisconnected,
      onRejected: options.onRejected,
      openSocket: options.openSocket,
      timers: options.timers,
      random: options.random,
    });
  }

  start(): void {
    this.socket.start();
  }

  /** Offers a snapshot obtained over HTTP (initial page data or the run URL). */
  offerSnapshot(run: Run): void {
    this.update(applySnapshot(this.tracker, run));
  }

  /** Stops for good: closes the socket and cancels any pending reconnect. */
  stop(): void {
    this.socket.stop();
  }

  private receive(data: string): void {
    const frame = parseRunStateFrame(data);
    if (frame === null) {
      return;
    }
    this.socket.markHealthy();
    this.update(applyFrame(this.tracker, frame));
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
