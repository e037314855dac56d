import type { Stream, StreamCloseEvent, StreamMessageEvent } from "@libp2p/interface";
import { P2pError } from "./errors.ts";

/**
 * Length-prefixed frames on a libp2p stream: a 4-byte big-endian length, then that many bytes.
 * Every request/response protocol here sends one frame each way and half-closes.
 *
 * We read with our own listener rather than `for await (… of stream)`: libp2p 3's stream iterator
 * ends only on the 'close' or 'remoteCloseWrite' events, which may already have fired when the
 * iteration starts (the peer answered and closed before we began reading), and then it waits
 * forever. Here the listener is attached as soon as the stream exists and `readableEnded` covers
 * the end that came first.
 */
export const FRAME_HEADER_BYTES = 4;

const MAX_FRAME_BYTES = 0xffff_ffff;

export function encodeFrame(payload: Uint8Array): Uint8Array {
  if (payload.byteLength > MAX_FRAME_BYTES) {
    throw new P2pError("message_too_large", `frame of ${payload.byteLength} bytes exceeds 4 GiB`);
  }
  const frame = new Uint8Array(FRAME_HEADER_BYTES + payload.byteLength);
  new DataView(frame.buffer).setUint32(0, payload.byteLength);
  frame.set(payload, FRAME_HEADER_BYTES);
  return frame;
}

/** Queues one frame and waits until the stream can take more (backpressure). */
export async function writeFrame(stream: Stream, payload: Uint8Array, signal: AbortSignal): Promise<void> {
  if (!stream.send(encodeFrame(payload))) await stream.onDrain({ signal });
}

/** Buffers what a stream delivers, bounded, and hands it out as frames. */
export class StreamReader {
  private readonly stream: Stream;
  private readonly maxBufferedBytes: number;
  private chunks: Uint8Array[] = [];
  private buffered = 0;
  private ended = false;
  private error: Error | undefined;
  private wake: (() => void) | undefined;

  /** `maxBufferedBytes`: more unread bytes than this abort the stream (the peer sends too much). */
  constructor(stream: Stream, maxBufferedBytes: number) {
    this.stream = stream;
    this.maxBufferedBytes = maxBufferedBytes;
    stream.addEventListener("message", this.onMessage);
    stream.addEventListener("end", this.onEnd);
    stream.addEventListener("close", this.onClose);
    if (stream.readableEnded) this.ended = true;
  }

  /** Detaches the listeners; call when done with the stream. */
  dispose(): void {
    this.stream.removeEventListener("message", this.onMessage);
    this.stream.removeEventListener("end", this.onEnd);
    this.stream.removeEventListener("close", this.onClose);
    this.chunks = [];
    this.buffered = 0;
    this.ended = true;
    this.notify();
  }

  /** Reads one frame whose body is at most `maxBytes`; throws `P2pError` otherwise. */
  async readFrame(maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
    const header = await this.readExact(FRAME_HEADER_BYTES, signal);
    const length = new DataView(header.buffer, header.byteOffset, FRAME_HEADER_BYTES).getUint32(0);
    if (length > maxBytes) {
      throw new P2pError("message_too_large", `frame of ${length} bytes exceeds the limit of ${maxBytes}`);
    }
    return this.readExact(length, signal);
  }

  private readonly onMessage = (evt: StreamMessageEvent): void => {
    const data = evt.data instanceof Uint8Array ? evt.data : evt.data.subarray();
    if (data.byteLength === 0) return;
    this.chunks.push(data);
    this.buffered += data.byteLength;
    if (this.buffered > this.maxBufferedBytes) {
      this.error = new P2pError("message_too_large", `peer sent more than ${this.maxBufferedBytes} bytes`);
      this.chunks = [];
      this.buffered = 0;
      this.stream.abort(this.error);
    }
    this.notify();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.notify();
  };

  private readonly onClose = (evt: StreamCloseEvent): void => {
    // With our listener attached nothing stays in the stream's own buffer, so a close is an end.
    this.ended = true;
    if (evt.error !== undefined && this.error === undefined) {
      this.error = new P2pError("stream_error", `stream closed: ${evt.error.message}`, { cause: evt.error });
    }
    this.notify();
  };

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private async readExact(n: number, signal: AbortSignal): Promise<Uint8Array> {
    for (;;) {
      if (this.buffered >= n) return this.take(n);
      if (this.error !== undefined) throw this.error;
      if (this.ended) throw new P2pError("stream_error", `stream ended after ${this.buffered} of ${n} bytes`);
      if (signal.aborted) throw new P2pError("timeout", "timed out reading from the stream");
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal.removeEventListener("abort", done);
          resolve();
        };
        this.wake = done;
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }

  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0];
      if (chunk === undefined) break;
      const want = n - filled;
      if (chunk.byteLength <= want) {
        out.set(chunk, filled);
        filled += chunk.byteLength;
        this.chunks.shift();
      } else {
        out.set(chunk.subarray(0, want), filled);
        this.chunks[0] = chunk.subarray(want);
        filled += want;
      }
    }
    this.buffered -= n;
    return out;
  }
}

const utf8Decoder = new TextDecoder("utf-8", { fatal: true });
const utf8Encoder = new TextEncoder();

/** JSON text as UTF-8 bytes; throws `P2pError("invalid_argument")` for what JSON cannot carry. */
export function encodeJson(value: unknown): Uint8Array {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new P2pError("invalid_argument", "payload is not JSON-serializable", { cause: err });
  }
  if (text === undefined) throw new P2pError("invalid_argument", "payload is not JSON-serializable");
  return utf8Encoder.encode(text);
}

/** Parses UTF-8 JSON; throws `P2pError("bad_message")` on invalid UTF-8 or JSON. */
export function decodeJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(utf8Decoder.decode(bytes));
  } catch (err) {
    throw new P2pError("bad_message", "not UTF-8 JSON", { cause: err });
  }
}
