const COMMA = Buffer.from(",");
const OPEN = Buffer.from("[");
const CLOSE = Buffer.from("]");

/**
 * A handler's result already serialized, as UTF-8 bytes: the server copies them into the reply
 * instead of calling JSON.stringify, and an HTTP reply goes out as one Buffer (writing a 7.5 kB
 * string cost about three times as much per reply: it is flattened, then encoded, on every send).
 * Only for bytes that came from JSON.stringify of a result (the block answer cache keeps such
 * bytes for blocks, which never change once committed).
 */
export class RawJson {
  readonly bytes: Buffer;

  constructor(json: string | Buffer) {
    this.bytes = typeof json === "string" ? Buffer.from(json) : json;
  }

  /** The JSON array of `items`, in order. */
  static array(items: readonly RawJson[]): RawJson {
    const parts: Buffer[] = [OPEN];
    items.forEach((item, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(item.bytes);
    });
    parts.push(CLOSE);
    return new RawJson(Buffer.concat(parts));
  }

  get size(): number {
    return this.bytes.length;
  }

  text(): string {
    return this.bytes.toString("utf8");
  }
}
