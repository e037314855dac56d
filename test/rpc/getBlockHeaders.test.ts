import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertBlock, assertHeader, assertRpcError, type HeaderJson, headerOf } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import { assertInvalidParams, BAD_NUMBERS, startSampleChain, invalidParamCases } from "./support.ts";

const METHOD = "chain_getBlockHeaders";

function assertHeaders(value: unknown, what: string): asserts value is HeaderJson[] {
  assert.ok(Array.isArray(value), `${what}: expected an array`);
  value.forEach((header, i) => {
    assertHeader(header, `${what}[${i}]`);
  });
}

describe(METHOD, () => {
  let t: TestNode;
  let head: number;
  before(async () => ({ t, head } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("returns headers from..to inclusive, in order: the blocks without transactions", async () => {
    const headers = await t.result(METHOD, { from: 0, to: head });
    assertHeaders(headers, `headers 0..${head}`);
    assert.deepEqual(
      headers.map((h) => h.number),
      [0, 1, 2],
    );
    assert.equal(headers[0]?.parent_hash, "", 'block 0 has parent_hash ""');
    for (const header of headers) {
      const block = await t.result("chain_getBlockByNumber", { number: header.number });
      assertBlock(block, false, `block ${header.number}`);
      assert.deepEqual(
        header,
        headerOf(block),
        `header ${header.number} is block ${header.number} less transactions`,
      );
    }
    assert.equal(headers[1]?.hash, headers[2]?.parent_hash, "headers link by parent_hash");
  });

  it("returns one header when from equals to", async () => {
    const headers = await t.result(METHOD, { from: 2, to: 2 });
    assertHeaders(headers, "headers 2..2");
    assert.deepEqual(
      headers.map((h) => h.number),
      [2],
    );
  });

  it("clips `to` beyond the head: the head is the last header returned", async () => {
    for (const to of [head + 1, head + 50, 99]) {
      const headers = await t.result(METHOD, { from: 0, to });
      assertHeaders(headers, `headers 0..${to}`);
      assert.equal(headers.at(-1)?.number, head, `0..${to} clipped to the head ${head}`);
      assert.equal(headers.length, head + 1);
    }
  });

  it("returns an empty array when the whole range is beyond the head", async () => {
    assert.deepEqual(await t.result(METHOD, { from: head + 1, to: head + 1 }), []);
  });

  it("allows exactly 100 blocks (0..99) and refuses 101 with -32005 range_too_large", async () => {
    assertHeaders(await t.result(METHOD, { from: 0, to: 99 }), "headers 0..99");
    for (const [from, to] of [
      [0, 100],
      [1, 1000],
    ] as const) {
      const data = assertRpcError(
        await t.call(METHOD, { from, to }),
        -32005,
        "range_too_large",
        `${from}..${to}`,
      );
      assert.equal(data.limit, 100, `${from}..${to}: data.limit`);
    }
  });

  it("refuses from > to with -32602 invalid_params", async () => {
    assertRpcError(await t.call(METHOD, { from: 1, to: 0 }), -32602, "invalid_params");
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases({ from: 0, to: 1 }, { from: BAD_NUMBERS, to: BAD_NUMBERS }),
    );
  });
});
