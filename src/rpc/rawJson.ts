const COMMA = Buffer.from(",");
const OPEN = Buffer.from("[");
const CLOSE = Buffer.from("]");

/**
 * JSON already serialized, as UTF-8 bytes in one or more chunks: the server sends the chunks as
 * they are (one writev) instead of calling JSON.stringify, joining them or turning them into a
 * string. Only for bytes that came from JSON.stringify of a value (the block answer cache keeps
 * such bytes for blocks, which never change once committed).
 *
 * Why chunks and never one joined Buffer: a heavy batch of chain_getBlocks answers 32 MB, and
 * joining its parts, decoding them to a string and encoding that string again into the socket
 * held the event loop for about 1 s per batch; every other client waited behind it, and one
 * whose wait passed the 2 s head timeout was cut (test/load/limitsUnderAttack.test.ts). The chunks
 * of cached blocks are shared by every answer that holds them, never copied.
 */
export class RawJson {
  readonly chunks: readonly Buffer[];
  readonly size: number;

  constructor(json: string | Buffer | readonly Buffer[]) {
    if (typeof json === "string") this.chunks = [Buffer.from(json)];
    else if (Buffer.isBuffer(json)) this.chunks = [json];
    else this.chunks = json;
    let size = 0;
    for (const chunk of this.chunks) size += chunk.length;
    this.size = size;
  }

  /** The JSON array of `items`, in order. */
  static array(items: readonly RawJson[]): RawJson {
    return RawJson.join(OPEN, items, CLOSE);
  }

  /** `open`, then `items` separated by commas, then `close`, as one RawJson (nothing copied). */
  static join(open: Buffer, items: readonly RawJson[], close: Buffer): RawJson {
    const parts: Buffer[] = [open];
    items.forEach((item, i) => {
      if (i > 0) parts.push(COMMA);
      for (const chunk of item.chunks) parts.push(chunk);
    });
    parts.push(close);
    return new RawJson(parts);
  }

  /** The whole text (joined and decoded: for transports that need one string). */
  text(): string {
    return this.chunks.length === 1
      ? (this.chunks[0] as Buffer).toString("utf8")
      : Buffer.concat(this.chunks, this.size).toString("utf8");
  }
}
