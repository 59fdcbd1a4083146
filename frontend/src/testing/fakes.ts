// Test doubles for the injectable seams: timers, sockets, the JSON client.
// Nothing here is bundled; only tests import it.

import { MIN_DRAW_INTERVAL_MS } from "../charts/chart";
import { numberFormatters } from "../core/format";
import type { JsonClient } from "../core/http";
import { translator } from "../core/i18n";
import { LiveStatusMonitor } from "../live/liveStatus";
import type { OpenSocket, SocketHandlers } from "../core/reconnectingSocket";
import type { RunWidgetContext } from "../runs/runWidget";
import type { Timers } from "../core/timers";
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

  /** Strings and ArrayBuffers (binary messages) as they are, anything else as JSON text. */
  serverSends(message: unknown): void {
    this.handlers.onMessage(typeof message === "string" || message instanceof ArrayBuffer ? message : JSON.stringify(message));
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

  /** PUTs are recorded and answered with their body, as the preferences API does. */
  readonly puts: { url: string; body: unknown }[] = [];

  put(url: string, body: unknown): Promise<unknown> {
    this.puts.push({ url, body });
    return Promise.resolve(body);
  }

  /** Forms are answered like posts to the same URL. */
  readonly forms: { url: string; fields: Record<string, string> }[] = [];

  postForm(url: string, form: FormData): Promise<unknown> {
    const fields: Record<string, string> = {};
    form.forEach((value, name) => {
      fields[name] = typeof value === "string" ? value : value.name;
    });
    this.forms.push({ url, fields });
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
  protocol: "Simple",
  protocol_times: { Simple: 0.008046 },
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
    { link: 3, from: "card:ib:0c42a10300860100", to: "ib:b8599f0300a01240", from_name: "node01/mlx5_0", to_name: "leaf01", class: "card-leaf (scale-up)", bytes: 684e6, utilization: 0.85 },
    { link: 70, from: "leaf-0", to: "spine-1", class: "leaf-spine (scale-out)", bytes: 1.2e9, utilization: 0.4213 },
  ],
  phases: [{ name: "reduce up the tree", steps: 1, flows: 1024, bytes_per_flow: 342e6, slowest_rate_GBps: 42.5, step_s: 0.008046, time_s: 0.008046 }],
  settings: { ecmp: "hash", seed: 0, channels: 1, transport: {} },
  choice: {
    reason: "in_switch (Simple) is the fastest (8.05 ms) for 342 MB per rank on 1024 ranks, bandwidth-bound; then ring 13.7 ms",
    candidates: { ring: 0.013671, in_switch: 0.008046, two_shot: 0.013702 },
    skipped: { one_shot: "one_shot writes directly to peers: only inside a scale-up domain" },
  },
};

/** Base64 of the given bytes, as the server encodes frames. */
export function base64Bytes(bytes: readonly number[]): string {
  return btoa(String.fromCharCode(...bytes));
}

/**
 * A message with a JSON FRAME as the server sends it over the replay socket:
 * a binary frame message (twin/replay/encoding.py encode_frame_message), its
 * base64 arrays raw. `version` other than 1 makes one a page cannot read.
 */
export function binaryFrameMessage(message: { readonly frame: Record<string, unknown> } & Record<string, unknown>, version = 1): ArrayBuffer {
  const frame: Record<string, unknown> = { ...message.frame };
  const arrays: [string, number][] = [];
  const blocks: Uint8Array[] = [];
  for (const path of ["utilization", "congestion", "switches.in", "switches.out", "switches.max", "leaf_matrix.values"]) {
    const keys = path.split(".");
    const leaf = keys.pop() as string;
    let holder: Record<string, unknown> | undefined = frame;
    for (const key of keys) {
      const inner: unknown = holder?.[key];
      holder = holder !== undefined && typeof inner === "object" && inner !== null ? (holder[key] = { ...(inner as Record<string, unknown>) }) : undefined;
    }
    const text = holder?.[leaf];
    if (holder !== undefined && typeof text === "string") {
      const block = Uint8Array.from(atob(text), (character) => character.charCodeAt(0));
      delete holder[leaf];
      arrays.push([path, block.length]);
      blocks.push(block);
    }
  }
  const header = new TextEncoder().encode(JSON.stringify({ ...message, frame, arrays }));
  const total = 8 + header.length + blocks.reduce((sum, block) => sum + block.length, 0);
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint8(0, version);
  view.setUint32(4, header.length, true);
  out.set(header, 8);
  let offset = 8 + header.length;
  for (const block of blocks) {
    out.set(block, offset);
    offset += block.length;
  }
  return out.buffer;
}

/** A replay FRAME (docs/replay.md) over 4 links. */
export function replayFrame(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    seq: 0,
    source: "replay",
    t_s: 0.41,
    t_end_s: 0.42,
    links: 4,
    utilization: base64Bytes([0, 51, 255, 128]),
    congestion: base64Bytes([0, 51, 255, 255]),
    switches: { in: base64Bytes([1]), out: base64Bytes([2]), max: base64Bytes([3]) },
    top: [
      { link: 2, from: "spine-04", to: "leaf-29", utilization: 1.0, congestion: 1.5547, class: "leaf-spine (scale-up)" },
      { link: 3, from: "card:ib:0c42", to: "ib:b859", from_name: "card-0", to_name: "leaf-0", utilization: 0.502, congestion: 0.6, class: "card-leaf (scale-up)" },
    ],
    active: [7, 8],
    active_count: 2,
    events_done: 24576,
    events_total: 24592,
    totals: { bytes: 1.5e9, mean_utilization: 0.3, max_utilization: 1.0, max_congestion: 1.5547 },
    ...overrides,
  };
}

/** twin/replay/summary.py replay_summary, trimmed. */
export const REPLAY_SUMMARY = {
  fabric: "sn-1024",
  trace: "step-175B",
  duration_s: 0.4213,
  events: { total: 24592, collectives: 24000, flows: 592, stretched: 1230, distinct_operations: 6464, cache_hit_rate: 0.947 },
  operations: {
    allreduce: { count: 24000, bytes: 3.2e12, time_s: 812.5, solo_s: 650, stretch: 1.25, algorithms: { ring: 20000, in_switch: 4000 } },
    flow: { count: 592, bytes: 4.1e9, time_s: 1.2, solo_s: 1.2, stretch: 1.0, algorithms: { flow: 592 } },
  },
  busiest_links: [{ link: 1939, from: "spine-04", to: "leaf-29", class: "leaf-spine (scale-up)", bytes: 8.8e11, utilization: 0.93 }],
  peak_congestion: { congestion: 1.5547, t_s: 0.2051, link: 1939, from: "spine-04", to: "leaf-29", class: "leaf-spine (scale-up)" },
  link_classes: {
    "card-leaf (scale-up)": { links: 1024, bytes: 1.1e12, mean_utilization: 0.41, max_utilization: 0.8 },
    "leaf-spine (scale-up)": { links: 1024, bytes: 2.2e12, mean_utilization: 0.62, max_utilization: 0.93 },
  },
};

const dimension = (collective: string, algorithm: string, groups: number, size: number, time: number, bottleneck: unknown = null) => ({
  collective,
  algorithm,
  groups,
  group_size: size,
  calls_per_step: 1,
  bytes_per_call: 1e9,
  time_per_call_s: time,
  time_s: time,
  latency_s: 0,
  bandwidth_s: time,
  busbw_GBps: 180.5,
  mean_switch_hops: 1.25,
  max_switch_hops: 3,
  crosses_scale_out: size > 8,
  bottleneck,
  hottest_links: [],
});

/** compare_placements as a placement run's result (ranks moved to the detail). */
export const PLACEMENT_RESULT = {
  job: { tp: 8, pp: 2, dp: 4, ep: 1, world: 64, model_params: 175e9 },
  best: "aware",
  ranking: ["aware", "naive", "random"],
  results: {
    naive: {
      strategy: "naive",
      job: {},
      communication_time_s: 0.05,
      dimensions: { tp: dimension("allreduce", "ring", 8, 8, 0.02), pp: dimension("sendrecv", "chain", 32, 2, 0.01), dp: dimension("allreduce", "ring", 16, 4, 0.02) },
      bottleneck_links: [],
      warnings: [],
    },
    random: {
      strategy: "random",
      job: {},
      communication_time_s: 0.09,
      dimensions: { tp: dimension("allreduce", "ring", 8, 8, 0.06), pp: dimension("sendrecv", "chain", 32, 2, 0.01), dp: dimension("allreduce", "ring", 16, 4, 0.02) },
      bottleneck_links: [],
      warnings: [],
    },
    aware: {
      strategy: "aware",
      job: {},
      communication_time_s: 0.03,
      dimensions: {
        tp: dimension("allreduce", "ring", 8, 8, 0.01, { link: 3, from: "card-0", to: "leaf-0", class: "card-leaf (scale-up)", bytes: 2e9, utilization: 0.91 }),
        pp: dimension("sendrecv", "chain", 32, 2, 0.005),
        dp: dimension("allreduce", "ring", 16, 4, 0.015),
      },
      bottleneck_links: [{ link: 3, from: "card-0", to: "leaf-0", class: "card-leaf (scale-up)", bytes: 2e9, utilization: 0.91 }],
      warnings: ["2 TP groups span two leaves"],
    },
  },
};

/** A failure outcome (evaluate_failure). */
export function failureOutcome(elements: string[], overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    elements,
    links_down: 9,
    cards_cut_off_count: 8,
    cards_cut_off: ["card-0", "card-1"],
    degraded_pairs: 120,
    disconnected_pairs: 500,
    blast_radius: { [elements[0] ?? ""]: { cards_attached: 8, cards_cut_off: 8 } },
    workload: {
      collective: "allreduce",
      size_bytes: 1073741824,
      algorithm: "ring",
      ranks: null,
      before: { time_s: 0.01, busbw_GBps: 100 },
      after: { time_s: 0.0152, busbw_GBps: 66 },
      time_change: 1.52,
      busbw_change: 0.66,
      ranks_lost: 8,
      after_bottleneck: null,
    },
    ...overrides,
  };
}

/** worst_failure + link_impact as a failures run's result. */
export const FAILURES_RESULT = {
  kind: "leaf",
  workload: { collective: "allreduce", size_bytes: 1073741824, algorithm: "ring", ranks: null },
  worst: failureOutcome(["leaf-03"]),
  ranking: [
    failureOutcome(["leaf-03"]),
    failureOutcome(["link:12"], { links_down: 1, cards_cut_off_count: 0, cards_cut_off: [], degraded_pairs: 7, blast_radius: {}, workload: { before: { time_s: 0.01, busbw_GBps: 100 }, after: { time_s: 0.011, busbw_GBps: 91 }, time_change: 1.1, busbw_change: 0.91, ranks_lost: 0 } }),
  ],
  evaluated: 16,
  link_impact: [{ link: 12, a: "leaf-03", a_port: "1", b: "spine-00", b_port: "4", bytes: 4e9, cards_cut_off: 0, cards_routed: 64, impact: 2.56e11 }],
};

/** Waits until charts have drawn their updates (at most one draw every MIN_DRAW_INTERVAL_MS). */
export function chartsDrawn(): Promise<void> {
  return new Promise((resolve) => {
    setTimeout(resolve, MIN_DRAW_INTERVAL_MS + 50);
  });
}

/** The texts a chart under `root` draws (axis names, tick labels, legend), in drawing order. */
export function chartTexts(root: Element | null | undefined): string[] {
  return [...(root?.querySelectorAll("svg text") ?? [])].map((text) => text.textContent ?? "").filter((text) => text !== "");
}
