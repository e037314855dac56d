import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createWallet,
  rpcErrorFromObject,
  type SignedTransaction,
  TransportError,
  type WalletMethods,
} from "../../src/client/index.ts";

/**
 * The wallet's nonce bookkeeping against a scripted node (no network): which nonce each send
 * carries after refusals, resyncs and failures whose outcome is unknown.
 */

/** Dev account 1 (public test mnemonic); any valid key would do. */
const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";

type Outcome = "ok" | Error;

/** A node stub: chain_getNonce answers `committed`; each submission takes the next scripted outcome. */
function scriptedNode(committed: number, outcomes: Outcome[]) {
  const sent: number[][] = [];
  let nonceQueries = 0;
  const next = (): Outcome => outcomes.shift() ?? "ok";
  const submit = (list: SignedTransaction[]): string[] => {
    sent.push(list.map((s) => s.transaction.nonce));
    const outcome = next();
    if (outcome !== "ok") throw outcome;
    return list.map((s) => s.signature.slice(0, 66));
  };
  const methods: WalletMethods = {
    getChainId: async () => 100,
    getNonce: async () => {
      nonceQueries++;
      return committed;
    },
    sendSignedTransaction: async (signed) => submit([signed])[0] as string,
    sendSignedTransactionBatch: async ({ tx_list }) => submit(tx_list),
  };
  return { methods, sent, queries: () => nonceQueries };
}

const rejected = (reason: string, data: Record<string, unknown> = {}): Error =>
  rpcErrorFromObject(
    { code: -32003, message: reason, data: { reason, ...data } },
    "chain_sendSignedTransaction",
  );

const userWrite = (address: string, n: number) => ({ ref: `/users/${address}/n${n}`, value: n });

describe("wallet nonces", () => {
  it("starts from chain_getNonce and counts up without asking again", async () => {
    const node = scriptedNode(7, []);
    const wallet = createWallet(node.methods, KEY);
    for (let i = 0; i < 3; i++) await wallet.send(userWrite(wallet.address, i));
    assert.deepEqual(node.sent, [[7], [8], [9]]);
    assert.equal(node.queries(), 1);
  });

  it("gives a refused send's nonce to the next send", async () => {
    const node = scriptedNode(0, ["ok", rejected("insufficient_balance"), "ok"]);
    const wallet = createWallet(node.methods, KEY);
    await wallet.send(userWrite(wallet.address, 0));
    await assert.rejects(wallet.send(userWrite(wallet.address, 1)), { reason: "insufficient_balance" });
    await wallet.send(userWrite(wallet.address, 2));
    assert.deepEqual(node.sent, [[0], [1], [1]]);
  });

  it("resyncs from data.expected on nonce_too_low / nonce_too_high and sends once more", async () => {
    const node = scriptedNode(0, [rejected("nonce_too_low", { expected: 4, actual: 0 }), "ok"]);
    const wallet = createWallet(node.methods, KEY);
    await wallet.send(userWrite(wallet.address, 0));
    await wallet.send(userWrite(wallet.address, 1));
    assert.deepEqual(node.sent, [[0], [4], [5]]);

    const high = scriptedNode(9, [rejected("nonce_too_high", { expected: 3, actual: 9 })]);
    const other = createWallet(high.methods, KEY);
    await other.send(userWrite(other.address, 0));
    assert.deepEqual(high.sent, [[9], [3]]);
  });

  it("asks chain_getNonce when a nonce rejection names no expected nonce", async () => {
    const node = scriptedNode(2, [rejected("nonce_too_low")]);
    const wallet = createWallet(node.methods, KEY);
    await wallet.send(userWrite(wallet.address, 0));
    assert.equal(node.queries(), 2);
    assert.deepEqual(node.sent, [[2], [2]]);
  });

  it("retries a nonce rejection only once", async () => {
    const tooLow = rejected("nonce_too_low", { expected: 1 });
    const node = scriptedNode(0, [tooLow, rejected("nonce_too_low", { expected: 2 })]);
    const wallet = createWallet(node.methods, KEY);
    await assert.rejects(wallet.send(userWrite(wallet.address, 0)), { reason: "nonce_too_low" });
    assert.deepEqual(node.sent, [[0], [1]]);
  });

  it("asks the node again after a failure whose outcome is unknown", async () => {
    const node = scriptedNode(5, [new TransportError("connection reset")]);
    const wallet = createWallet(node.methods, KEY);
    await assert.rejects(wallet.send(userWrite(wallet.address, 0)), TransportError);
    await wallet.send(userWrite(wallet.address, 1));
    assert.equal(node.queries(), 2, "chain_getNonce is asked again");
  });

  it("numbers a batch consecutively and shifts a batch resync back by the failing index", async () => {
    const node = scriptedNode(0, [rejected("nonce_too_low", { expected: 12, index: 2 }), "ok"]);
    const wallet = createWallet(node.methods, KEY);
    const hashes = await wallet.sendBatch([0, 1, 2].map((n) => userWrite(wallet.address, n)));
    assert.equal(hashes.length, 3);
    await wallet.send(userWrite(wallet.address, 3));
    assert.deepEqual(node.sent, [[0, 1, 2], [10, 11, 12], [13]]);
  });

  it("serializes concurrent sends so each gets its own nonce", async () => {
    const node = scriptedNode(0, ["ok", rejected("permission_denied"), "ok", "ok"]);
    const wallet = createWallet(node.methods, KEY);
    const results = await Promise.allSettled(
      [0, 1, 2, 3].map((n) => wallet.send(userWrite(wallet.address, n))),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      ["fulfilled", "rejected", "fulfilled", "fulfilled"],
    );
    assert.deepEqual(node.sent, [[0], [1], [1], [2]]);
  });

  it("sends unordered transactions with nonce -1 and leaves the count alone", async () => {
    const node = scriptedNode(3, []);
    const wallet = createWallet(node.methods, KEY);
    await wallet.send(userWrite(wallet.address, 0), { unordered: true });
    await wallet.sendBatch([userWrite(wallet.address, 1)], { unordered: true });
    assert.equal(node.queries(), 0);
    await wallet.send(userWrite(wallet.address, 2));
    assert.deepEqual(node.sent, [[-1], [-1], [3]]);
  });
});
