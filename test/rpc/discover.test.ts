import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ValidateFunction } from "ajv";
import {
  createOpenRpcDocument,
  DISCOVER_METHOD,
  METHOD_LIST,
  type OpenRpcDocument,
} from "../../src/rpc/index.ts";
import { ajvErrors, openRpcMetaValidator, resultValidators } from "../helpers/openrpc.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import { accountAt, submit, transfer, userWrite, waitForCommit } from "./support.ts";

/**
 * rpc.discover over HTTP, and the point of it: real responses of a running dev node, for every
 * method of the table, validate against the result schemas the document publishes. A member the
 * code starts returning (or stops returning) fails here until resultSchemas.ts says so.
 */

const UNKNOWN_HASH = `0x${"ab".repeat(32)}`;

describe("rpc.discover", () => {
  let t: TestNode;
  let document: OpenRpcDocument;
  const validators = new Map<string, ValidateFunction>();
  /** Methods whose real results were checked, with how many results each. */
  const covered = new Map<string, number>();

  /** Calls `method`, asserts success, and checks the result against the published schema. */
  const checked = async <T = unknown>(method: string, params?: unknown): Promise<T> => {
    const reply = await t.call(method, params);
    assert.equal(
      reply.error,
      undefined,
      `${method} ${JSON.stringify(params)}: ${JSON.stringify(reply.error)}`,
    );
    const validate = validators.get(method);
    assert.ok(validate, `the document has a result schema for ${method}`);
    assert.equal(
      validate(reply.result),
      true,
      `${method} ${JSON.stringify(params)} → ${JSON.stringify(reply.result)}: ${ajvErrors(validate)}`,
    );
    covered.set(method, (covered.get(method) ?? 0) + 1);
    return reply.result as T;
  };

  before(async () => {
    // A 60 s block time: the first transaction commits at once (genesis is old), later ones wait
    // in the pool, so committed and pending transactions can both be read.
    t = await startTestNode({ blockTimeMs: 60_000 });
  });
  after(() => t?.stop());

  it("serves an OpenRPC document that is valid against the meta-schema and lists the route table", async () => {
    document = await t.result<OpenRpcDocument>(DISCOVER_METHOD);
    const validate = openRpcMetaValidator();
    assert.equal(validate(document), true, ajvErrors(validate));
    const version = (await t.result<{ version: string }>("net_nodeInfo")).version;
    assert.deepEqual(
      document,
      createOpenRpcDocument(METHOD_LIST, version),
      "the table's document, nothing else",
    );
    assert.ok(document.methods.length > 25, `the whole table, got ${document.methods.length} methods`);
    const compile = resultValidators();
    for (const method of document.methods) validators.set(method.name, compile(method.result.schema));
  });

  it("accepts rpc.discover with empty params and refuses unknown ones", async () => {
    assert.equal((await t.call(DISCOVER_METHOD, {})).error, undefined);
    assert.equal((await t.call(DISCOVER_METHOD, { x: 1 })).error?.code, -32602);
  });

  it("real results of every method validate against the published result schemas", async () => {
    assert.ok(document, "the document was fetched");
    const alice = accountAt(t, 1);
    const bob = accountAt(t, 2);
    const validator = accountAt(t, 0);

    // A committed transfer carrying the optional parent_tx_hash.
    const first = await checked<string>(
      "chain_sendSignedTransaction",
      transfer(alice, bob.address, 500, { nonce: 0, parent_tx_hash: UNKNOWN_HASH }),
    );
    await waitForCommit(t, first);
    // Two pending ones (ordered and unordered), submitted as a batch.
    const pending = await checked<string[]>("chain_sendSignedTransactionBatch", {
      tx_list: [userWrite(alice, { nested: [1, "two", null] }, 1), transfer(bob, alice.address, 7)],
    });
    const single = await submit(t, transfer(validator, bob.address, 1));

    const head = await checked<number>("chain_getRecentBlockNumber");
    const block = await checked<{ hash: string }>("chain_getBlockByNumber", {
      number: head,
      getFullTransactions: true,
    });
    await checked("chain_getRecentBlock");
    await checked("chain_getBlockByNumber", { number: head });
    await checked("chain_getBlockByNumber", { number: 0, getFullTransactions: true });
    await checked("chain_getBlockByNumber", { number: head + 1000 });
    await checked("chain_getBlockByHash", { hash: block.hash, getFullTransactions: true });
    await checked("chain_getBlockByHash", { hash: block.hash, getFullTransactions: false });
    await checked("chain_getBlockByHash", { hash: UNKNOWN_HASH });
    await checked("chain_getBlocks", { from: 0, to: head });
    await checked("chain_getBlocks", { from: head + 10, to: head + 20 });
    await checked("chain_getBlockHeaders", { from: 0, to: head });
    for (const [suffix, params] of [
      ["Number", { number: head }],
      ["Hash", { hash: block.hash }],
      ["Number", { number: head + 1000 }],
      ["Hash", { hash: UNKNOWN_HASH }],
    ] as const) {
      await checked(`chain_getBlockTransactionCountBy${suffix}`, params);
      await checked(`chain_getProposerBy${suffix}`, params);
      await checked(`chain_getValidatorsBy${suffix}`, params);
    }
    const pendingList = await checked<unknown[]>("chain_getPendingTransactions");
    assert.equal(pendingList.length, 3, "the batch and the single transaction wait for the next block");
    await checked("chain_getTransactionByBlockNumberAndIndex", { block_number: head, index: 0 });
    await checked("chain_getTransactionByBlockNumberAndIndex", { block_number: head, index: 99 });
    await checked("chain_getTransactionByBlockHashAndIndex", { block_hash: block.hash, index: 0 });
    await checked("chain_getTransactionByBlockHashAndIndex", { block_hash: UNKNOWN_HASH, index: 0 });
    await checked("chain_getTransactionByHash", { hash: first });
    for (const hash of [...pending, single]) await checked("chain_getTransactionByHash", { hash });
    await checked("chain_getTransactionByHash", { hash: UNKNOWN_HASH });
    // One committed transaction of hers: a last page (a page with a cursor: getTransactionsByAddress.test.ts).
    await checked("chain_getTransactionsByAddress", { address: alice.address });
    await checked("chain_getTransactionsByAddress", { address: bob.address, cursor: `0x${"f".repeat(16)}` });
    await checked("chain_getTransactionsByAddress", { address: `0x${"12".repeat(20)}`, from_block: 0 });
    for (const address of [alice.address, validator.address, `0x${"12".repeat(20)}`]) {
      await checked("chain_getBalance", { address });
      await checked("chain_getConsensusStakeAmount", { address });
      await checked("chain_getNonce", { address });
      await checked("chain_isValidator", { address });
    }
    for (const ref of [`/account/${alice.address}`, `/account/${alice.address}/balance`, "/users/nobody"]) {
      await checked("chain_getValue", { ref });
      await checked("chain_getValue", { ref, block_number: 0 });
      await checked("chain_getProof", { ref });
      await checked("chain_getProof", { ref, block_number: 0 });
    }
    for (const method of [
      "net_listening",
      "net_nodeInfo",
      "net_peerCount",
      "net_syncing",
      "net_id",
      "net_chainId",
    ]) {
      await checked(method);
    }
    await checked(DISCOVER_METHOD);

    const missing = document.methods.map((m) => m.name).filter((name) => !covered.has(name));
    assert.deepEqual(missing, [], "every method's real result was checked");
  });

  it("the result schemas are strict: an extra or missing member fails them", async () => {
    const validate = validators.get("chain_getRecentBlock");
    assert.ok(validate);
    const block = await t.result<Record<string, unknown>>("chain_getRecentBlock");
    assert.equal(validate(block), true, ajvErrors(validate));
    assert.equal(validate({ ...block, extra: 1 }), false, "an undocumented member");
    const { state_root: _stateRoot, ...withoutRoot } = block;
    assert.equal(validate(withoutRoot), false, "a missing member");
  });
});
