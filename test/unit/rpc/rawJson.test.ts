import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RawJson } from "../../../src/rpc/rawJson.ts";

describe("RawJson", () => {
  it("joins serialized values into an array without copying their bytes", () => {
    const a = new RawJson(JSON.stringify({ number: 1, note: "é" }));
    const b = new RawJson([Buffer.from('{"number":'), Buffer.from("2}")]);
    const joined = RawJson.array([a, b]);
    assert.deepEqual(JSON.parse(joined.text()), [{ number: 1, note: "é" }, { number: 2 }]);
    assert.equal(joined.size, Buffer.byteLength(joined.text()), "size is the UTF-8 byte count");
    // the items' chunks are the very Buffers the answer holds (a cached block is shared, not copied)
    assert.ok(joined.chunks.includes(a.chunks[0] as Buffer));
    assert.ok(b.chunks.every((chunk) => joined.chunks.includes(chunk)));
  });

  it("is an empty JSON array for no items, and one value for one item", () => {
    assert.equal(RawJson.array([]).text(), "[]");
    const one = RawJson.join(Buffer.from('{"result":'), [new RawJson("[1,2]")], Buffer.from("}"));
    assert.deepEqual(JSON.parse(one.text()), { result: [1, 2] });
  });
});
