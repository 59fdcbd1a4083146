// JSON over fetch with Django's conventions: same-origin cookies, the CSRF
// token echoed in a header, and errors shaped as {"detail": "..."}.

import type { Translate } from "./i18n";

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/**
 * The API answered, but not with 2xx. `detail` is the server's own message,
 * when it sent one; `body` the whole parsed answer (e.g. a 400's field errors).
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | null,
    readonly body: unknown = undefined,
  ) {
    super(detail ?? `HTTP ${status}`);
    this.name = "HttpError";
  }
}

/** fetch() itself failed: offline, DNS, connection refused, aborted. */
export class NetworkError extends Error {
  constructor(cause: unknown) {
    super("network error", { cause });
    this.name = "NetworkError";
  }
}

/** A 2xx response whose body is not JSON. */
export class InvalidResponseError extends Error {
  constructor() {
    super("invalid response");
    this.name = "InvalidResponseError";
  }
}

export function readCookie(cookieHeader: string, name: string): string | null {
  for (const pair of cookieHeader.split(";")) {
    const separator = pair.indexOf("=");
    if (separator !== -1 && pair.slice(0, separator).trim() === name) {
      return decodeURIComponent(pair.slice(separator + 1).trim());
    }
  }
  return null;
}

export function errorDetail(body: unknown): string | null {
  if (typeof body === "object" && body !== null && "detail" in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === "string" && detail !== "") {
      return detail;
    }
  }
  return null;
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

export interface JsonClient {
  get(url: string): Promise<unknown>;
  post(url: string, body: unknown): Promise<unknown>;
  put(url: string, body: unknown): Promise<unknown>;
  /** Posts a server-rendered form as it is (files included), asking for a JSON answer. */
  postForm(url: string, form: FormData): Promise<unknown>;
}

export function jsonClient(fetchImpl: Fetch, csrfToken: () => string | null): JsonClient {
  async function send(url: string, init: RequestInit): Promise<unknown> {
    let response: Response;
    try {
      response = await fetchImpl(url, { credentials: "same-origin", ...init });
    } catch (cause) {
      throw new NetworkError(cause);
    }
    const body = await readJson(response);
    if (!response.ok) {
      throw new HttpError(response.status, errorDetail(body), body);
    }
    if (body === undefined) {
      throw new InvalidResponseError();
    }
    return body;
  }

  const writeHeaders = (contentType: string | null): Record<string, string> => {
    const headers: Record<string, string> = { Accept: "application/json" };
    if (contentType !== null) {
      headers["Content-Type"] = contentType;
    }
    const token = csrfToken();
    if (token !== null) {
      headers["X-CSRFToken"] = token;
    }
    return headers;
  };

  return {
    get: (url) => send(url, { method: "GET", headers: { Accept: "application/json" } }),
    post: (url, body) => send(url, { method: "POST", headers: writeHeaders("application/json"), body: JSON.stringify(body) }),
    put: (url, body) => send(url, { method: "PUT", headers: writeHeaders("application/json"), body: JSON.stringify(body) }),
    // No Content-Type: the browser writes multipart/form-data with its boundary.
    postForm: (url, form) => send(url, { method: "POST", headers: writeHeaders(null), body: form }),
  };
}

/** The sentence to show a person for a failed request. */
export function describeRequestError(error: unknown, t: Translate): string {
  if (error instanceof HttpError) {
    return error.detail ?? t("http.status", { status: error.status });
  }
  if (error instanceof NetworkError) {
    return t("http.networkError");
  }
  return t("http.invalidResponse");
}
