import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createOpenRpcDocument, METHOD_LIST } from "../../src/rpc/index.ts";
import { type CallFn, type HistoryPage, historyFromBlocks, readAllPages } from "../helpers/history.ts";
import { ajvErrors, resultValidators } from "../helpers/openrpc.ts";
import { assertRpcError, type ConfirmedTxJson } from "../helpers/shapes.ts";
import { signTx, startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  addressForms,
  assertInvalidParams,
  BAD_ADDRESSES,
  BAD_NUMBERS,
  commitBatch,
  commitOne,
  invalidParamCases,
  type SignedTx,
  submit,
  transfer,
  UNKNOWN_ADDRESS,
  uniqueKey,
  userWrite,
  waitForCommit,
  waitForPruned,
} from "./support.ts";

const METHOD = "chain_getTransactionsByAddress";

const BAD_CURSORS: readonly unknown[] = [
  "",
  "abc",
  "0x",
  "0x123",
  `0x${"0".repeat(15)}`,
  `0x${"0".repeat(17)}`,
  "0".repeat(16),
  `0X${"0".repeat(16)}`,
  `0x${"g".repeat(16)}`,
  `0x${"0".repeat(8)}:${"0".repeat(7)}`,
  5,
  null,
  {},
  [],
];
const BAD_LIMITS: readonly unknown[] = [0, 101, 1_000, -1, 2.5, "25", null, true, {}, []];

const hashes = (txs: readonly ConfirmedTxJson[]) => txs.map((tx) => tx.hash);

/** Newest first: block descending, then index descending, and no transaction twice. */
function assertNewestFirst(txs: readonly ConfirmedTxJson[], what: string): void {
  for (let i = 1; i < txs.length; i++) {
    const [newer, older] = [txs[i - 1] as ConfirmedTxJson, txs[i] as ConfirmedTxJson];
    assert.ok(
      newer.block_number > older.block_number ||
        (newer.block_number === older.block_number && newer.index > older.index),
      `${what}: entry ${i} (${older.block_number}:${older.index}) is older than entry ${i - 1} (${newer.block_number}:${newer.index})`,
    );
  }
}

const stake = (from: ReturnType<typeof accountAt>, amount: number): SignedTx =>
  signTx(from.privateKey, {
    nonce: -1,
    operation: {
      type: "SET_VALUE",
      ref: `/staking/${from.address}/${uniqueKey("stake")}/value`,
      value: amount,
    },
  });

describe(METHOD, () => {
  let t: TestNode;
  let call: CallFn;
  /** Alice's committed transactions, newest first, from the blocks. */
  let expected: string[];
  let alice: ReturnType<typeof accountAt>;

  before(async () => {
    t = await startTestNode();
    call = (method, params) => t.result(method, params);
    alice = accountAt(t, 1);
    const [bob, carol, dave] = [accountAt(t, 2), accountAt(t, 3), accountAt(t, 4)];
    await commitOne(t, transfer(alice, bob.address, 10)); // sent
    await commitOne(t, transfer(bob, alice.address.toLowerCase(), 20)); // received (path in lower case)
    await commitOne(t, transfer(carol, bob.address, 30)); // not hers
    // Several of hers in one block, between others': a /users write, a stake, a transfer to
    // herself (listed once) and one to her.
    await commitBatch(t, [
      transfer(carol, dave.address, 1),
      userWrite(alice, { status: "here" }),
      stake(alice, 100),
      transfer(alice, alice.address, 5),
      transfer(dave, alice.address, 7),
      transfer(carol, bob.address, 2),
    ]);
    // Thirty more in one block: more than the default page.
    await commitBatch(
      t,
      Array.from({ length: 30 }, (_, i) =>
        transfer(alice, t.accounts[5 + (i % 5)]?.address as string, i + 1),
      ),
    );
    expected = await historyFromBlocks(call, alice.address);
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("lists the account's committed transactions, newest first, as chain_getTransactionByHash returns them", async () => {
    assert.equal(expected.length, 36, "the set-up made 36 transactions of hers");
    const { txs, pages } = await readAllPages(call, { address: alice.address, limit: 100 });
    assert.equal(pages.length, 1);
    assert.deepEqual(hashes(txs), expected);
    assertNewestFirst(txs, "alice");
    for (const tx of txs) {
      assert.deepEqual(tx, await t.result("chain_getTransactionByHash", { hash: tx.hash }), tx.hash);
    }
  });

  it("pages 25 by default: next_cursor leads to the rest, and is null on the last page", async () => {
    const first = await t.result<HistoryPage>(METHOD, { address: alice.address });
    assert.equal(first.transactions.length, 25);
    assert.equal(typeof first.next_cursor, "string");
    const second = await t.result<HistoryPage>(METHOD, { address: alice.address, cursor: first.next_cursor });
    assert.equal(second.next_cursor, null);
    // Both shapes of a page are the published result schema's (rpc.discover).
    const published = createOpenRpcDocument(METHOD_LIST, "test").methods.find((m) => m.name === METHOD);
    assert.ok(published);
    const validate = resultValidators()(published.result.schema as object);
    for (const page of [first, second]) assert.equal(validate(page), true, ajvErrors(validate));
    assert.deepEqual(hashes([...first.transactions, ...second.transactions]), expected);
  });

  it("walks the same list once with any page size from 1 to 100", async () => {
    for (const limit of [1, 2, 7, 35, 36, 37, 100]) {
      const { txs, pages } = await readAllPages(call, { address: alice.address, limit });
      assert.deepEqual(hashes(txs), expected, `limit ${limit}`);
      assert.equal(pages.length, Math.max(1, Math.ceil(expected.length / limit)), `pages of ${limit}`);
    }
  });

  it("keeps to from_block..to_block, inclusive, also across pages", async () => {
    const all = (await readAllPages(call, { address: alice.address, limit: 100 })).txs;
    const head = await t.result<number>("chain_getRecentBlockNumber");
    for (const [from, to] of [
      [1, 1],
      [2, 4],
      [3, head],
      [0, head + 1_000],
      [4, 4],
    ] as const) {
      const want = all.filter((tx) => tx.block_number >= from && tx.block_number <= to).map((tx) => tx.hash);
      for (const limit of [3, 100]) {
        const { txs } = await readAllPages(call, {
          address: alice.address,
          from_block: from,
          to_block: to,
          limit,
        });
        assert.deepEqual(hashes(txs), want, `blocks ${from}..${to}, limit ${limit}`);
      }
    }
    const onlyFrom = await readAllPages(call, { address: alice.address, from_block: 4, limit: 100 });
    assert.deepEqual(
      hashes(onlyFrom.txs),
      all.filter((tx) => tx.block_number >= 4).map((tx) => tx.hash),
    );
    const onlyTo = await readAllPages(call, { address: alice.address, to_block: 3, limit: 100 });
    assert.deepEqual(
      hashes(onlyTo.txs),
      all.filter((tx) => tx.block_number <= 3).map((tx) => tx.hash),
    );
  });

  it("answers an empty last page for a range beyond the head or without her transactions", async () => {
    const head = await t.result<number>("chain_getRecentBlockNumber");
    for (const params of [
      { from_block: head + 1 },
      { from_block: head + 1, to_block: head + 50 },
      { from_block: 3, to_block: 3 }, // carol's transfer to bob only
      { to_block: 0 },
    ]) {
      assert.deepEqual(
        await t.result(METHOD, { address: alice.address, ...params }),
        { transactions: [], next_cursor: null },
        JSON.stringify(params),
      );
    }
  });

  it("refuses from_block greater than to_block with -32602", async () => {
    for (const [from, to] of [
      [5, 4],
      [1, 0],
      [Number.MAX_SAFE_INTEGER, 0],
    ]) {
      const reply = await t.call(METHOD, { address: alice.address, from_block: from, to_block: to });
      assertRpcError(reply, -32602, "invalid_params", `${from}..${to}`);
      assert.match(reply.error?.message ?? "", /from_block .* greater than to_block/);
    }
  });

  it("does not repeat or skip a transaction when blocks are committed between pages", async () => {
    const first = await t.result<HistoryPage>(METHOD, { address: alice.address, limit: 10 });
    const fresh = await commitOne(t, transfer(accountAt(t, 6), alice.address, 1));
    const rest = await readAllPages(call, { address: alice.address, limit: 10 });
    // The walk begun before the new block goes on from its cursor and ends where it would have.
    let cursor = first.next_cursor;
    const resumed: ConfirmedTxJson[] = [...first.transactions];
    while (cursor !== null) {
      const page = await t.result<HistoryPage>(METHOD, { address: alice.address, limit: 10, cursor });
      resumed.push(...page.transactions);
      cursor = page.next_cursor;
    }
    assert.deepEqual(hashes(resumed), expected);
    // A walk begun after it starts with the new transaction.
    assert.deepEqual(hashes(rest.txs), [fresh.hash, ...expected]);
    expected = [fresh.hash, ...expected];
  });

  it("accepts the address in any case", async () => {
    for (const [form, variant] of Object.entries(addressForms(alice.address))) {
      const { txs } = await readAllPages(call, { address: variant, limit: 100 });
      assert.deepEqual(hashes(txs), expected, form);
    }
  });

  it("is an empty last page for an address the chain has never seen", async () => {
    assert.deepEqual(await t.result(METHOD, { address: UNKNOWN_ADDRESS }), {
      transactions: [],
      next_cursor: null,
    });
  });

  it("lists a recipient only for the transfers to it, not for the other transactions of its senders", async () => {
    const dave = accountAt(t, 4);
    const { txs } = await readAllPages(call, { address: dave.address, limit: 100 });
    assert.deepEqual(hashes(txs), await historyFromBlocks(call, dave.address));
    // Dave sent one (to alice) and received one (from carol).
    assert.equal(txs.length, 2);
  });

  it("refuses a limit outside 1..100 and a malformed cursor with -32602 invalid_params", async () => {
    const valid = {
      address: alice.address,
      from_block: 0,
      to_block: 10,
      limit: 5,
      cursor: `0x${"0".repeat(16)}`,
    };
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases(
        valid,
        {
          address: BAD_ADDRESSES,
          from_block: BAD_NUMBERS,
          to_block: BAD_NUMBERS,
          limit: BAD_LIMITS,
          cursor: BAD_CURSORS,
        },
        ["from_block", "to_block", "limit", "cursor"],
      ),
    );
    // The address alone is required.
    assertRpcError(await t.call(METHOD, {}), -32602, "invalid_params", "no address");
    assertRpcError(await t.call(METHOD), -32602, "invalid_params", "no params");
  });

  it("takes limit 100 and any well-formed cursor (one it did not make is only a position)", async () => {
    const page = await t.result<HistoryPage>(METHOD, { address: alice.address, limit: 100 });
    assert.equal(page.transactions.length, expected.length);
    // Past the chain: from the head down. Zero: nothing is older.
    const top = await t.result<HistoryPage>(METHOD, {
      address: alice.address,
      cursor: `0x${"f".repeat(16)}`,
    });
    assert.deepEqual(hashes(top.transactions), expected.slice(0, 25));
    const bottom = await t.result<HistoryPage>(METHOD, {
      address: alice.address,
      cursor: `0x${"0".repeat(16)}`,
    });
    assert.deepEqual(bottom, { transactions: [], next_cursor: null });
    // Upper-case hex reads as the lower-case cursor does.
    const first = await t.result<HistoryPage>(METHOD, { address: alice.address, limit: 4 });
    const cursor = first.next_cursor as string;
    assert.deepEqual(
      await t.result(METHOD, {
        address: alice.address,
        limit: 4,
        cursor: `0x${cursor.slice(2).toUpperCase()}`,
      }),
      await t.result(METHOD, { address: alice.address, limit: 4, cursor }),
    );
  });
});

describe(`${METHOD}: pending transactions`, () => {
  let t: TestNode;
  // A 60 s block time: the first transaction commits at once (genesis is old), the next waits.
  before(async () => {
    t = await startTestNode({ blockTimeMs: 60_000 });
  });
  after(() => t?.stop());

  it("lists committed transactions only", async () => {
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    const committed = await waitForCommit(t, await submit(t, transfer(alice, bob.address, 1)));
    const pending = await submit(t, transfer(alice, bob.address, 2));
    const page = await t.result<HistoryPage>(METHOD, { address: alice.address });
    assert.deepEqual(hashes(page.transactions), [committed.hash]);
    assert.ok(!hashes(page.transactions).includes(pending));
  });
});

describe(`${METHOD} on a node that prunes blocks ([storage] retain_blocks)`, () => {
  const RETAIN = 3;
  let t: TestNode;
  let call: CallFn;
  let firstKept: number;
  let alice: ReturnType<typeof accountAt>;
  before(async () => {
    t = await startTestNode({ blockTimeMs: 20, storage: { retainBlocks: RETAIN, retainStates: 2 } });
    call = (method, params) => t.result(method, params);
    alice = accountAt(t, 1);
    for (let i = 0; i < 3 * RETAIN; i++) await commitOne(t, transfer(alice, accountAt(t, 2).address, 1));
    // Blocks are made only for transactions: the head stays while the tests read.
    firstKept = await waitForPruned(t, RETAIN);
    assert.ok(firstKept > 1, `block 1 was pruned (first kept ${firstKept})`);
  });
  after(() => t?.stop());

  it("answers -32005 pruned with data.first_available for a from_block below the first kept block", async () => {
    for (const from of [0, 1, firstKept - 1]) {
      const data = assertRpcError(
        await t.call(METHOD, { address: alice.address, from_block: from }),
        -32005,
        "pruned",
        `from_block ${from}`,
      );
      assert.equal(data.first_available, firstKept, `from_block ${from}`);
    }
    // Also with a to_block in the pruned part, and with a cursor.
    const data = assertRpcError(
      await t.call(METHOD, {
        address: alice.address,
        from_block: 1,
        to_block: 1,
        cursor: `0x${"0".repeat(16)}`,
      }),
      -32005,
      "pruned",
    );
    assert.equal(data.first_available, firstKept);
  });

  it("without from_block, lists down to the first kept block and ends there", async () => {
    const head = await t.result<number>("chain_getRecentBlockNumber");
    const { txs } = await readAllPages(call, { address: alice.address, limit: 2 });
    assert.deepEqual(hashes(txs), await historyFromBlocks(call, alice.address, firstKept, head));
    assert.ok(txs.length > 0 && txs.every((tx) => tx.block_number >= firstKept));
    // A cursor or a to_block below the kept blocks: nothing more.
    assert.deepEqual(
      await t.result(METHOD, { address: alice.address, cursor: `0x${"0".repeat(7)}1${"0".repeat(8)}` }),
      {
        transactions: [],
        next_cursor: null,
      },
    );
    assert.deepEqual(await t.result(METHOD, { address: alice.address, to_block: firstKept - 1 }), {
      transactions: [],
      next_cursor: null,
    });
  });

  it("answers a from_block at the first kept block", async () => {
    const { txs } = await readAllPages(call, { address: alice.address, from_block: firstKept, limit: 100 });
    assert.deepEqual(hashes(txs), await historyFromBlocks(call, alice.address, firstKept));
  });
});
