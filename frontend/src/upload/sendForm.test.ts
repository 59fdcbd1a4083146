import { beforeEach, describe, expect, it } from "vitest";
import { NetworkError } from "../core/http";
import { FakeXhr } from "../testing/fakes";
import { xhrSendForm } from "./sendForm";

function send(headers: Record<string, string> = { Accept: "application/json", "X-CSRFToken": "t0k" }) {
  const events: string[] = [];
  const body = new FormData();
  body.append("fabric", "pod-a");
  const answer = xhrSendForm(FakeXhr.create)("/upload/", body, headers, {
    onProgress: (loaded, total) => events.push(`${loaded}/${total}`),
    onSent: () => events.push("sent"),
  });
  return { answer, events, body, xhr: FakeXhr.latest() };
}

beforeEach(() => FakeXhr.reset());

describe("xhrSendForm", () => {
  it("POSTs the form data with the given headers", () => {
    const { xhr, body } = send();
    expect(xhr.method).toBe("POST");
    expect(xhr.url).toBe("/upload/");
    expect(xhr.headers).toEqual({ Accept: "application/json", "X-CSRFToken": "t0k" });
    expect(xhr.body).toBe(body);
  });

  it("reports upload progress, then the end of the upload, then the answer", async () => {
    const { xhr, events, answer } = send();
    xhr.uploadProgress(100, 400);
    xhr.uploadProgress(50, 0, false); // no Content-Length known: nothing to report
    xhr.uploadProgress(400, 400);
    xhr.uploadDone();
    expect(events).toEqual(["100/400", "400/400", "sent"]);
    xhr.respond(201, { url: "/fabrics/3/?snapshot=9" });
    await expect(answer).resolves.toEqual({ status: 201, body: { url: "/fabrics/3/?snapshot=9" } });
  });

  it("resolves any status, with an undefined body when it is not JSON", async () => {
    const { xhr, answer } = send();
    xhr.respond(413, "<h1>Request Entity Too Large</h1>");
    await expect(answer).resolves.toEqual({ status: 413, body: undefined });
  });

  it.each(["error", "abort", "timeout"] as const)("rejects with a NetworkError on %s", async (type) => {
    const { xhr, answer } = send();
    xhr.fail(type);
    await expect(answer).rejects.toBeInstanceOf(NetworkError);
  });
});
