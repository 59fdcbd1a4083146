// Decides what the #live-status banner says, from /api/health/ checks made on
// load, whenever a websocket drops or comes back, and with backoff while a
// problem lasts (so the banner also clears on pages without websockets).
// Pages without a signed-in user (the login page) check nothing: the health
// endpoint answers only signed-in users, like the rest of the API.

import { backoffDelay } from "../core/backoff";
import type { Fetch } from "../core/http";
import type { MessageKey, Translate } from "../core/i18n";
import type { Timers } from "../core/timers";

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
  /** Null where the page has no health URL to check (no signed-in user). */
  readonly checkHealth: (() => Promise<HealthCheckResult>) | null;
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
    const checkHealth = this.options.checkHealth;
    if (checkHealth === null) {
      return;
    }
    if (this.inFlight) {
      this.recheckRequested = true;
      return;
    }
    if (this.retryTimer !== null) {
      this.options.timers.clearTimeout(this.retryTimer);
      this.retryTimer = null;
    }
    this.inFlight = true;
    void checkHealth().then(
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

/**
 * The page's monitor, showing its answers in the #live-status banner. The
 * templates give <body> a data-health-url only for a signed-in user.
 */
export function liveStatusForPage(doc: Document, fetchImpl: Fetch, t: Translate, timers: Timers): LiveStatusMonitor {
  const banner = doc.getElementById("live-status");
  const healthUrl = doc.body.dataset["healthUrl"];
  return new LiveStatusMonitor({
    checkHealth: healthUrl === undefined ? null : () => fetchHealth(fetchImpl, healthUrl),
    showBanner: (message) => {
      if (banner !== null) {
        banner.textContent = message === null ? "" : t(message);
        banner.hidden = message === null;
      }
    },
    timers,
  });
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
