/**
 * A handler's result already serialized: the server splices `text` into the response as is
 * instead of calling JSON.stringify. Only for text that came from JSON.stringify of a result
 * (the block answer cache keeps such text for blocks, which never change once committed).
 */
export class RawJson {
  readonly text: string;
  readonly bytes: number;

  constructor(text: string) {
    this.text = text;
    this.bytes = Buffer.byteLength(text);
  }
}
