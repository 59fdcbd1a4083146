// POSTs a FormData with XMLHttpRequest, because fetch() reports no upload
// progress. Behind the SendForm seam so tests drive a fake request.

import { NetworkError } from "../core/http";

export interface UploadProgress {
  /** Request body bytes sent so far. */
  onProgress(loaded: number, total: number): void;
  /** The whole body is sent; the server is now working on it. */
  onSent(): void;
}

/** Any status: what the body means is the caller's business. `body` is undefined unless it is JSON. */
export interface FormResponse {
  readonly status: number;
  readonly body: unknown;
}

/** Sends `body` to `url`; rejects with NetworkError only when no answer arrives at all. */
export type SendForm = (
  url: string,
  body: FormData,
  headers: Readonly<Record<string, string>>,
  progress: UploadProgress,
) => Promise<FormResponse>;

export type XhrHandler = ((event: ProgressEvent) => void) | null;

/** The slice of XMLHttpRequest used here. */
export interface XhrLike {
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body: FormData): void;
  readonly status: number;
  readonly responseText: string;
  readonly upload: { onprogress: XhrHandler; onload: XhrHandler };
  onload: XhrHandler;
  onerror: XhrHandler;
  onabort: XhrHandler;
  ontimeout: XhrHandler;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export function xhrSendForm(createXhr: () => XhrLike): SendForm {
  return (url, body, headers, progress) =>
    new Promise((resolve, reject) => {
      const xhr = createXhr();
      xhr.open("POST", url);
      for (const [name, value] of Object.entries(headers)) {
        xhr.setRequestHeader(name, value);
      }
      xhr.upload.onprogress = (event) => {
        if (event.lengthComputable) {
          progress.onProgress(event.loaded, event.total);
        }
      };
      xhr.upload.onload = () => progress.onSent();
      xhr.onload = () => resolve({ status: xhr.status, body: parseJson(xhr.responseText) });
      xhr.onerror = xhr.onabort = xhr.ontimeout = (event) => reject(new NetworkError(event.type));
      xhr.send(body);
    });
}

export const browserSendForm: SendForm = xhrSendForm(() => new XMLHttpRequest());
