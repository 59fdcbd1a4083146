// Binary frame messages (docs/replay.md "Binary frame messages"): how the
// replay websocket sends a frame. Byte 0 is the layout version, bytes 4..7 the
// header's length (uint32, little-endian), then the header (UTF-8 JSON: the
// message with its frame's byte arrays left out and listed as [path, length]),
// then the arrays' bytes one after another. The arrays become views of the
// received buffer (no copy), put back where the JSON frame has its base64
// text, so the rest of the page reads either kind of frame. No DOM access.

import { isRecord, type Json } from "../core/json";

/** The only layout this page reads; a server that sends another is newer than the page. */
export const FRAME_MESSAGE_VERSION = 1;

const PREFIX_BYTES = 8;

export type DecodedFrameMessage =
  | { readonly kind: "message"; readonly message: Json }
  | { readonly kind: "unsupported"; readonly version: number }
  | { readonly kind: "malformed"; readonly reason: string };

const utf8 = new TextDecoder();

function malformed(reason: string): DecodedFrameMessage {
  return { kind: "malformed", reason };
}

/** Where the array of a dotted `path` ("switches.in") goes in `frame`, creating the objects on the way. */
function place(frame: Json, path: string, bytes: Uint8Array): void {
  const keys = path.split(".");
  const leaf = keys.pop() as string;
  let holder = frame;
  for (const key of keys) {
    const inner = holder[key];
    holder = isRecord(inner) ? inner : (holder[key] = {});
  }
  holder[leaf] = bytes;
}

/** The message a binary websocket message carries, or why it cannot be read. */
export function decodeFrameMessage(buffer: ArrayBuffer): DecodedFrameMessage {
  if (buffer.byteLength < PREFIX_BYTES) {
    return malformed(`${buffer.byteLength} bytes, shorter than the ${PREFIX_BYTES}-byte prefix`);
  }
  const prefix = new DataView(buffer, 0, PREFIX_BYTES);
  const version = prefix.getUint8(0);
  if (version !== FRAME_MESSAGE_VERSION) {
    return { kind: "unsupported", version };
  }
  const headerLength = prefix.getUint32(4, true);
  if (PREFIX_BYTES + headerLength > buffer.byteLength) {
    return malformed(`a header of ${headerLength} bytes in a message of ${buffer.byteLength}`);
  }
  let header: unknown;
  try {
    header = JSON.parse(utf8.decode(new Uint8Array(buffer, PREFIX_BYTES, headerLength)));
  } catch {
    return malformed("the header is not JSON");
  }
  if (!isRecord(header) || !isRecord(header["frame"]) || !Array.isArray(header["arrays"])) {
    return malformed("the header has no frame or no list of arrays");
  }
  const { arrays, ...message } = header;
  const frame = header["frame"];
  let offset = PREFIX_BYTES + headerLength;
  for (const entry of arrays as unknown[]) {
    const [path, length] = Array.isArray(entry) ? (entry as unknown[]) : [];
    if (typeof path !== "string" || !Number.isSafeInteger(length) || (length as number) < 0 || offset + (length as number) > buffer.byteLength) {
      return malformed(`array ${JSON.stringify(entry)} does not fit the message`);
    }
    place(frame, path, new Uint8Array(buffer, offset, length as number));
    offset += length as number;
  }
  if (offset !== buffer.byteLength) {
    return malformed(`${buffer.byteLength} bytes, the header accounts for ${offset}`);
  }
  return { kind: "message", message };
}
