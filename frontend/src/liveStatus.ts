// Decides what the #live-status banner says, from /api/health/ checks made on
// load, whenever a websocket drops or comes back, and with backoff while a
// problem lasts (so the banner also clears on pages without websockets).

import { backoffDelay } from "./backoff";
import type { Fetch } from "./http";
import type { MessageKey } from "./i18n";
import type { Timers } from "./timers";

export type HealthCheckResult =
  | { readonly reachable: true; readonly report: unknown }
  | { readonly reachable: false };

export type BannerMessage = Extract<MessageKey, `banner.${string}`>;

/**
 * GET the health URL. The body is read whatever the status code, since a
 * health endpoint may well answer 503 with the very report we need.
 */
export async function fetchHealth(fetchImpl: Fetch, url: string): Promise<HealthCheckResult> {
  let response: Response;
  try {
    response = await fetchImpl(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
  } catch {
    return { reachable: false };
  }
  try {
    return { reachable: true, report: (await response.json()) as unknown };
  } catch {
    return { reachable: true, report: undefined };
  }
}

/** The banner a health check calls for, or null when everything is fine. */
export function bannerForHealth(check: HealthCheckResult): BannerMessage | null {
  if (!check.reachable) {
    return "banner.serverUnreachable";
  }
  const report = check.report;
  const redis = typeof report === "object" && report !== null ? (report as Record<string, unknown>)["redis"] : undefined;
  if (redis === undefined) {
    return "banner.serverUnreachable";
  }
  return redis === "ok" ? null : "banner.brokerDown";
}

/** The banner for a socket the server closed for good (FINAL_CLOSE_CODES). */
export function bannerForRejection(code: number): BannerMessage {
  return code === 4401 ? "banner.loggedOut" : "banner.gone";
}

export interface LiveStatusOptions {
  readonly checkHealth: () => Promise<HealthCheckResult>;
  readonly showBanner: (message: BannerMessage | null) => void;
  readonly timers: Timers;
  readonly random?: () => number;
}

export class LiveStatusMonitor {
  private inFlight = false;
  /** A trigger that arrived mid-check: the answer in flight may predate it. */
  private recheckRequested = false;
  private retryTimer: number | null = null;
  private failedChecks = 0;
  /** Set once a socket is refused for good: no later health check can make it right. */
  private rejection: BannerMessage | null = null;

  constructor(private readonly options: LiveStatusOptions) {}

  /** A socket was closed with a final code: say why, for the rest of the page's life. */
  rejected(code: number): void {
    this.rejection = bannerForRejection(code);
    this.options.showBanner(this.rejection);
  }

  /** Checks health now (or right after the check in flight). */
  check(): void {
    if (this.inFlight) {
      this.recheckRequested = true;
      return;
    }
    if (this.retryTimer !== null) {
      this.options.timers.clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    this.inFlight = true;
    void this.options.checkHealth().then(
      (result) => this.settle(bannerForHealth(result)),
      () => this.settle("banner.serverUnreachable"),
    );
  }

  private settle(banner: BannerMessage | null): void {
    this.inFlight = false;
    this.options.showBanner(this.rejection ?? banner);
    if (this.recheckRequested) {
      this.recheckRequested = false;
      this.check();
      return;
    }
    if (banner === null) {
      this.failedChecks = 0;
      return;
    }
    const delay = backoffDelay(this.failedChecks, this.options.random);
    this.failedChecks += 1;
    this.retryTimer = this.options.timers.setTimeout(() => {
      this.retryTimer = null;
      this.check();
    }, delay);
  }
}

export interface ConnectionReporter {
  onConnected(): void;
  onDisconnected(): void;
  onRejected(code: number): void;
}

/**
 * Socket callbacks that keep the banner current: a check on every drop, one
 * more when a dropped socket is back, and the reason when the server refused
 * the socket for good. The page already checked on load, so a first connect
 * needs none.
 */
export function connectionReporter(monitor: Pick<LiveStatusMonitor, "check" | "rejected">): ConnectionReporter {
  let wasDisconnected = false;
  return {
    onConnected: () => {
      if (wasDisconnected) {
        wasDisconnected = false;
        monitor.check();
      }
    },
    onDisconnected: () => {
      wasDisconnected = true;
      monitor.check();
    },
    onRejected: (code) => monitor.rejected(code),
  };
}
