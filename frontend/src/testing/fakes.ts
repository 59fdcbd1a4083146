// Test doubles for the injectable seams: timers, sockets, the JSON client.
// Nothing here is bundled; only tests import it.

import { numberFormatters } from "../format";
import type { JsonClient } from "../http";
import { translator } from "../i18n";
import { LiveStatusMonitor } from "../liveStatus";
import type { OpenSocket, SocketHandlers } from "../reconnectingSocket";
import type { RunWidgetContext } from "../runWidget";
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
  /** What the client sent, parsed as JSON where it is JSON. */
  readonly sent: unknown[] = [];

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

  send(data: string): void {
    try {
      this.sent.push(JSON.parse(data) as unknown);
    } catch {
      this.sent.push(data);
    }
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

/** A JsonClient whose answers the test scripts: per URL, else the default (pending forever unless set). */
export class ScriptedApi implements JsonClient {
  readonly posts: { url: string; body: unknown }[] = [];
  readonly gets: string[] = [];
  getAnswer: Promise<unknown> = new Promise(() => undefined);
  postAnswer: Promise<unknown> = new Promise(() => undefined);
  readonly getAnswers = new Map<string, Promise<unknown>>();
  readonly postAnswers = new Map<string, Promise<unknown>>();

  get(url: string): Promise<unknown> {
    this.gets.push(url);
    return this.getAnswers.get(url) ?? this.getAnswer;
  }

  post(url: string, body: unknown): Promise<unknown> {
    this.posts.push({ url, body });
    return this.postAnswers.get(url) ?? this.postAnswer;
  }
}

/** A run widget context on fakes (English, wss://twin.example) with its API and timers. */
export function runWidgetHarness(canCancel = false) {
  const api = new ScriptedApi();
  const timers = new FakeTimers();
  let healthChecks = 0;
  const liveStatus = new LiveStatusMonitor({
    checkHealth: () => {
      healthChecks += 1;
      return Promise.resolve({ reachable: true, report: { redis: "ok" } });
    },
    showBanner: () => undefined,
    timers,
  });
  const context: RunWidgetContext = {
    doc: document,
    t: translator("en"),
    numbers: numberFormatters("en"),
    http: api,
    liveStatus,
    pageLocation: { protocol: "https:", host: "twin.example" },
    openSocket: FakeWebSocket.open,
    timers,
    canCancel,
  };
  return { api, timers, context, healthChecks: () => healthChecks };
}

/** Lets pending promise callbacks run. */
export const settle = (): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, 0));

/** A run's POST /api/runs/ answer. */
export function createdRun(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const run = runSnapshot({ status: "pending", progress: 0, ...overrides });
  return { ...run, url: `/api/runs/${String(run["id"])}/`, ws_url: `/ws/runs/${String(run["id"])}/` };
}

/** A collective result as twin/runs/handlers.py pushes it (per-link arrays kept in the run's detail). */
export const COLLECTIVE_RESULT = {
  collective: "allreduce",
  algorithm: "in_switch",
  ranks: 1024,
  size_bytes: 342e6,
  time_s: 0.008046,
  algbw_GBps: 42.506,
  busbw_GBps: 84.929,
  latency_s: 0.000012,
  bandwidth_s: 0.008034,
  bound: "bandwidth",
  bottleneck: { link_class: "card-leaf (scale-up)", domain: "scale-up", bound: "bandwidth", utilization: 0.85 },
  max_link_utilization: 0.85,
  hottest_links: [
    { link: 3, from: "card-0", to: "leaf-0", class: "card-leaf (scale-up)", bytes: 684e6, utilization: 0.85 },
    { link: 70, from: "leaf-0", to: "spine-1", class: "leaf-spine (scale-out)", bytes: 1.2e9, utilization: 0.4213 },
  ],
  phases: [{ name: "reduce up the tree", steps: 1, flows: 1024, bytes_per_flow: 342e6, slowest_rate_GBps: 42.5, step_s: 0.008046, time_s: 0.008046 }],
  settings: { ecmp: "hash", seed: 0, channels: 1, transport: {} },
  choice: {
    reason: "in_switch is the fastest (8.05 ms) for 342 MB per rank on 1024 ranks, bandwidth-bound; then ring 13.7 ms",
    candidates: { ring: 0.013671, in_switch: 0.008046, two_shot: 0.013702 },
    skipped: { one_shot: "one_shot writes directly to peers: only inside a scale-up domain" },
  },
};
