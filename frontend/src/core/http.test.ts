import { describe, expect, it } from "vitest";
import { HttpError, InvalidResponseError, NetworkError, describeRequestError, errorDetail, jsonClient, readCookie } from "./http";
import { translator } from "./i18n";

interface Recorded {
  url: string;
  init: RequestInit | undefined;
}

function recordingFetch(response: () => Response) {
  const calls: Recorded[] = [];
  const fetchImpl = (url: string, init?: RequestInit) => {
    calls.push({ url, init });
    return Promise.resolve(response());
  };
  return { calls, fetchImpl };
}

describe("readCookie", () => {
  it("finds a cookie among others and decodes it", () => {
    expect(readCookie("sessionid=abc; csrftoken=t%2Bk; theme=dark", "csrftoken")).toBe("t+k");
  });

  it("does not match on a name suffix", () => {
    expect(readCookie("xcsrftoken=nope", "csrftoken")).toBeNull();
    expect(readCookie("", "csrftoken")).toBeNull();
  });
});

describe("jsonClient", () => {
  it("POSTs JSON with the CSRF token and same-origin credentials", async () => {
    const { calls, fetchImpl } = recordingFetch(() => new Response(JSON.stringify({ id: 1 }), { status: 201 }));
    const client = jsonClient(fetchImpl, () => "token-123");
    expect(await client.post("/api/runs/", { kind: "hop_stats", snapshot: 7 })).toEqual({ id: 1 });
    const init = calls[0]?.init;
    expect(init?.method).toBe("POST");
    expect(init?.credentials).toBe("same-origin");
    expect(init?.body).toBe('{"kind":"hop_stats","snapshot":7}');
    expect(init?.headers).toMatchObject({ "Content-Type": "application/json", "X-CSRFToken": "token-123" });
  });

  it("turns a 4xx/5xx into an HttpError carrying the server's detail", async () => {
    const { fetchImpl } = recordingFetch(
      () => new Response(JSON.stringify({ detail: "The message broker is unavailable." }), { status: 503 }),
    );
    const failure = jsonClient(fetchImpl, () => null).get("/api/runs/1/");
    await expect(failure).rejects.toBeInstanceOf(HttpError);
    await expect(failure).rejects.toMatchObject({ status: 503, detail: "The message broker is unavailable." });
  });

  it("keeps the whole error body for field errors", async () => {
    const answer = { detail: "params: size_bytes: Too small.", params: { size_bytes: ["Too small."] } };
    const { fetchImpl } = recordingFetch(() => new Response(JSON.stringify(answer), { status: 400 }));
    await expect(jsonClient(fetchImpl, () => null).post("/api/runs/", {})).rejects.toMatchObject({
      status: 400,
      detail: "params: size_bytes: Too small.",
      body: answer,
    });
  });

  it("keeps the status when the error body is not JSON", async () => {
    const { fetchImpl } = recordingFetch(() => new Response("<h1>Bad Gateway</h1>", { status: 502 }));
    await expect(jsonClient(fetchImpl, () => null).get("/x")).rejects.toMatchObject({ status: 502, detail: null });
  });

  it("distinguishes network failures and non-JSON successes", async () => {
    const offline = jsonClient(() => Promise.reject(new TypeError("Failed to fetch")), () => null);
    await expect(offline.get("/x")).rejects.toBeInstanceOf(NetworkError);
    const { fetchImpl } = recordingFetch(() => new Response("ok", { status: 200 }));
    await expect(jsonClient(fetchImpl, () => null).get("/x")).rejects.toBeInstanceOf(InvalidResponseError);
  });
});

describe("describeRequestError", () => {
  const t = translator("en");

  it("prefers the server's own words", () => {
    expect(describeRequestError(new HttpError(400, "Unknown snapshot."), t)).toBe("Unknown snapshot.");
    expect(describeRequestError(new HttpError(500, null), t)).toBe("HTTP 500");
  });

  it("explains client-side failures", () => {
    expect(describeRequestError(new NetworkError(new TypeError()), t)).toBe("The server could not be reached.");
    expect(describeRequestError(new InvalidResponseError(), t)).toBe("The server sent an unexpected response.");
  });

  it("reads detail only when it is a non-empty string", () => {
    expect(errorDetail({ detail: "" })).toBeNull();
    expect(errorDetail({ detail: ["a"] })).toBeNull();
    expect(errorDetail(null)).toBeNull();
  });
});
