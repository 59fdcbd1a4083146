// Test doubles for the injectable seams: timers and sockets. Nothing here is
// bundled; only tests import it.

import type { OpenSocket, SocketHandlers } from "../reconnectingSocket";
import type { Timers } from "../timers";
import type { XhrHandler, XhrLike } from "../upload/sendForm";

interface PendingTimer {
  readonly handle: number;
  readonly callback: () => void;
  readonly delayMs: number;
}

/** Records scheduled callbacks; tests fire them explicitly, in order. */
export class FakeTimers implements Timers {
  private nextHandle = 1;
  pending: PendingTimer[] = [];
  /** Every delay ever requested, in order, including cleared ones. */
  readonly requestedDelays: number[] = [];

  setTimeout(callback: () => void, delayMs: number): number {
    const handle = this.nextHandle++;
    this.pending.push({ handle, callback, delayMs });
    this.requestedDelays.push(delayMs);
    return handle;
  }

  clearTimeout(handle: number): void {
    this.pending = this.pending.filter((timer) => timer.handle !== handle);
  }

  /** Runs the oldest pending callback; fails the test if there is none. */
  fireNext(): void {
    const timer = this.pending.shift();
    if (timer === undefined) {
      throw new Error("no timer pending");
    }
    timer.callback();
  }
}

/** Stands in for the browser WebSocket: tests drive its lifecycle by hand. */
export class FakeWebSocket {
  static instances: FakeWebSocket[] = [];
  closedByClient = false;

  constructor(
    readonly url: string,
    private readonly handlers: SocketHandlers,
  ) {
    FakeWebSocket.instances.push(this);
  }

  static readonly open: OpenSocket = (url, handlers) => new FakeWebSocket(url, handlers);

  static reset(): void {
    FakeWebSocket.instances = [];
  }

  static latest(): FakeWebSocket {
    const socket = FakeWebSocket.instances.at(-1);
    if (socket === undefined) {
      throw new Error("no socket opened");
    }
    return socket;
  }

  close(): void {
    this.closedByClient = true;
  }

  serverOpens(): void {
    this.handlers.onOpen();
  }

  serverSends(message: unknown): void {
    this.handlers.onMessage(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** The connection ends; 1006 is what a browser reports when it just died. */
  serverDrops(code = 1006): void {
    this.handlers.onClose(code);
  }
}

/** Stands in for XMLHttpRequest: records the request; tests play the upload and the answer. */
export class FakeXhr implements XhrLike {
  static instances: FakeXhr[] = [];
  method = "";
  url = "";
  readonly headers: Record<string, string> = {};
  body: FormData | null = null;
  status = 0;
  responseText = "";
  readonly upload: { onprogress: XhrHandler; onload: XhrHandler } = { onprogress: null, onload: null };
  onload: XhrHandler = null;
  onerror: XhrHandler = null;
  onabort: XhrHandler = null;
  ontimeout: XhrHandler = null;

  static readonly create = (): FakeXhr => {
    const xhr = new FakeXhr();
    FakeXhr.instances.push(xhr);
    return xhr;
  };

  static reset(): void {
    FakeXhr.instances = [];
  }

  static latest(): FakeXhr {
    const xhr = FakeXhr.instances.at(-1);
    if (xhr === undefined) {
      throw new Error("no request sent");
    }
    return xhr;
  }

  open(method: string, url: string): void {
    this.method = method;
    this.url = url;
  }

  setRequestHeader(name: string, value: string): void {
    this.headers[name] = value;
  }

  send(body: FormData): void {
    this.body = body;
  }

  private static event(type: string, loaded = 0, total = 0, lengthComputable = true): ProgressEvent {
    return { type, loaded, total, lengthComputable } as ProgressEvent;
  }

  uploadProgress(loaded: number, total: number, lengthComputable = true): void {
    this.upload.onprogress?.(FakeXhr.event("progress", loaded, total, lengthComputable));
  }

  uploadDone(): void {
    this.upload.onload?.(FakeXhr.event("load"));
  }

  /** The server answers; `body` is sent as JSON unless it is already a string. */
  respond(status: number, body: unknown): void {
    this.status = status;
    this.responseText = typeof body === "string" ? body : JSON.stringify(body);
    this.onload?.(FakeXhr.event("load"));
  }

  fail(type: "error" | "abort" | "timeout" = "error"): void {
    const handler = { error: this.onerror, abort: this.onabort, timeout: this.ontimeout }[type];
    handler?.(FakeXhr.event(type));
  }
}

export function runSnapshot(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 12,
    kind: "hop_stats",
    status: "running",
    progress: 0.25,
    message: "Computing",
    result: null,
    error: null,
    created_at: "2026-11-30T08:00:00Z",
    started_at: "2026-11-30T08:00:01Z",
    finished_at: null,
    ...overrides,
  };
}

export function runStateMessage(seq: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: "run.state", seq, run: runSnapshot(overrides) };
}

export const HOP_STATS_RESULT = {
  cards: 1024,
  switches: 48,
  links: 2048,
  pairs: 1000,
  histogram: { "1": 100, "3": 600, "5": 250 },
  mean_hops: 3.3,
  diameter: 5,
  unreachable_pairs: 50,
};
