import assert from "node:assert/strict";
import { type DerivedAccount, hexToBytes, signObject } from "../../src/crypto/index.ts";
import { assertConfirmedTx, assertRpcError, type ConfirmedTxJson } from "../helpers/shapes.ts";
import { signTx, startTestNode, type TestNode, type TxBodyInput, waitFor } from "../helpers/testNode.ts";

/** Shared set-up of the RPC tests: accounts, transactions, commits and invalid-params cases. */

export type SignedTx = ReturnType<typeof signTx>;

export const DEV_BALANCE = 1_000_000_000_000;
export const DEV_STAKE = 1_000_000;
export const CHAIN_ID = 100;
export const NETWORK_ID = 1;
/** Bound on waiting for a transaction to be committed on a 50 ms dev chain. */
export const COMMIT_TIMEOUT_MS = 3_000;

export function accountAt(t: TestNode, index: number): DerivedAccount {
  const account = t.accounts[index];
  assert.ok(account !== undefined, `dev account ${index} exists`);
  return account;
}

let keyCounter = 0;
/** A key no other test uses (transfer and staking keys may be written once). */
export function uniqueKey(prefix = "k"): string {
  keyCounter += 1;
  return `${prefix}-${process.pid}-${Date.now()}-${keyCounter}`;
}

/** A signed transfer; `nonce` -1 (the default) makes it unordered, so no nonce bookkeeping. */
export function transfer(
  from: DerivedAccount,
  to: string,
  amount: number,
  options: { nonce?: number; parent_tx_hash?: string; timestamp?: number; chainId?: number } = {},
): SignedTx {
  const body: TxBodyInput = {
    nonce: options.nonce ?? -1,
    operation: {
      type: "SET_VALUE",
      ref: `/transfer/${from.address}/${to}/${uniqueKey()}/value`,
      value: amount,
    },
  };
  if (options.parent_tx_hash !== undefined) body.parent_tx_hash = options.parent_tx_hash;
  if (options.timestamp !== undefined) body.timestamp = options.timestamp;
  return signTx(from.privateKey, body, options.chainId ?? CHAIN_ID);
}

/** Signs any body, well-formed or not (signTx only takes well-formed ones). */
export function signRaw(
  from: DerivedAccount,
  transaction: Record<string, unknown>,
  chainId = CHAIN_ID,
): SignedTx {
  return { signature: signObject(transaction, hexToBytes(from.privateKey), chainId), transaction };
}

/** A signed write of free application data under the sender's own /users subtree. */
export function userWrite(from: DerivedAccount, value: unknown, nonce = -1): SignedTx {
  return signTx(from.privateKey, {
    nonce,
    operation: { type: "SET_VALUE", ref: `/users/${from.address}/${uniqueKey("data")}`, value },
  });
}

export async function submit(t: TestNode, signed: SignedTx): Promise<string> {
  return t.result<string>("chain_sendSignedTransaction", signed);
}

/** Waits (bounded) until the transaction is in a block; returns it as chain_getTransactionByHash does. */
export async function waitForCommit(t: TestNode, hash: string, timeoutMs = COMMIT_TIMEOUT_MS) {
  return waitFor(
    `transaction ${hash} to be committed`,
    async () => {
      const found = await t.result<{ block_number?: number } | null>("chain_getTransactionByHash", { hash });
      if (found?.block_number === undefined) return undefined;
      assertConfirmedTx(found, `transaction ${hash}`);
      return found;
    },
    timeoutMs,
  );
}

/** Submits one transaction and waits for its block. */
export async function commitOne(t: TestNode, signed: SignedTx): Promise<ConfirmedTxJson> {
  return waitForCommit(t, await submit(t, signed));
}

/**
 * Submits the transactions in one chain_sendSignedTransactionBatch (admitted atomically, so they
 * land in one block) and waits for that block. Returns them in input order.
 */
export async function commitBatch(t: TestNode, list: SignedTx[]): Promise<ConfirmedTxJson[]> {
  const hashes = await t.result<string[]>("chain_sendSignedTransactionBatch", { tx_list: list });
  const committed: ConfirmedTxJson[] = [];
  for (const hash of hashes) committed.push(await waitForCommit(t, hash));
  const blocks = new Set(committed.map((tx) => tx.block_number));
  assert.equal(blocks.size, 1, `a batch lands in one block, got blocks ${[...blocks].join(", ")}`);
  return committed;
}

/** Waits (bounded) until the pool is empty, i.e. whatever was submitted is in a block. */
export async function waitForEmptyPool(t: TestNode): Promise<void> {
  await waitFor(
    "the pending pool to drain",
    async () => ((await t.result<unknown[]>("chain_getPendingTransactions")).length === 0 ? true : undefined),
    COMMIT_TIMEOUT_MS,
  );
}

/**
 * Waits (bounded) until a node that keeps `retainBlocks` blocks has pruned all older ones:
 * pruning runs just after each block's write, in a write of its own, so it lags the head a
 * moment. Returns the lowest kept block above 0 (block 1's `first_available`).
 */
export async function waitForPruned(t: TestNode, retainBlocks: number): Promise<number> {
  return waitFor(
    `blocks below head - ${retainBlocks} + 1 to be pruned`,
    async () => {
      const head = await t.result<number>("chain_getRecentBlockNumber");
      const reply = await t.call("chain_getBlockByNumber", { number: 1 });
      const first = reply.error?.data?.first_available;
      return first === head - retainBlocks + 1 ? first : undefined;
    },
    COMMIT_TIMEOUT_MS,
  );
}

// ---- invalid params ----------------------------------------------------------------------------

export type ParamCase = readonly [label: string, params: unknown];

export const BAD_NUMBERS: readonly unknown[] = ["1", "0x1", -1, 1.5, 2 ** 53, null, true, {}, []];
export const BAD_HASHES: readonly unknown[] = [
  "0x1234",
  "ab".repeat(32),
  `0x${"ab".repeat(31)}a`,
  `0x${"ab".repeat(32)}a`,
  `0x${"g".repeat(64)}`,
  `0X${"ab".repeat(32)}`,
  "",
  123,
  null,
  [],
];
export const BAD_ADDRESSES: readonly unknown[] = [
  "0x1234",
  "12".repeat(20),
  `0x${"12".repeat(19)}1`,
  `0x${"12".repeat(21)}`,
  `0x${"z".repeat(40)}`,
  "",
  42,
  null,
  {},
];
export const BAD_BOOLEANS: readonly unknown[] = ["true", 1, 0, null, {}];

/** Params that are never valid, whatever the method. */
export const BAD_PARAM_CONTAINERS: readonly ParamCase[] = [
  ["params as an array", []],
  ["params as a positional array", ["0x00"]],
  ["params null", null],
  ["params a string", "x"],
  ["params a number", 1],
];

/**
 * Invalid variants of a valid params object: every container case, an unknown extra member,
 * each required member missing, and each member replaced by each of its bad values.
 */
export function invalidParamCases(
  valid: Record<string, unknown>,
  bad: Record<string, readonly unknown[]>,
  optional: readonly string[] = [],
): ParamCase[] {
  const cases: ParamCase[] = [...BAD_PARAM_CONTAINERS];
  cases.push(["an unknown extra member", { ...valid, extra: 1 }]);
  cases.push(["a misspelt member", { ...valid, Extra: true }]);
  for (const key of Object.keys(valid)) {
    if (optional.includes(key)) continue;
    const { [key]: _dropped, ...rest } = valid;
    cases.push([`${key} missing`, rest]);
  }
  for (const [key, values] of Object.entries(bad)) {
    for (const value of values) cases.push([`${key} = ${JSON.stringify(value)}`, { ...valid, [key]: value }]);
  }
  return cases;
}

/** Each case is refused with -32602 and data.reason "invalid_params". */
export async function assertInvalidParams(
  t: TestNode,
  method: string,
  cases: readonly ParamCase[],
): Promise<void> {
  for (const [label, params] of cases) {
    const reply = await t.call(method, params);
    assertRpcError(reply, -32602, "invalid_params", `${method} with ${label}`);
  }
}

/** A method without params answers the same with params absent and with `{}`. */
export async function assertNoParamsForms(t: TestNode, method: string): Promise<[unknown, unknown]> {
  const absent = await t.call(method);
  const empty = await t.call(method, {});
  assert.equal(absent.error, undefined, `${method} without params: ${JSON.stringify(absent.error)}`);
  assert.equal(empty.error, undefined, `${method} with {}: ${JSON.stringify(empty.error)}`);
  return [absent.result, empty.result];
}

/** Case variants of an address that reads must all accept (DESIGN.md §4). */
export function addressForms(address: string): Record<string, string> {
  const body = address.slice(2);
  return {
    checksum: address,
    lower: `0x${body.toLowerCase()}`,
    upper: `0x${body.toUpperCase()}`,
    mixed: `0x${[...body].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join("")}`,
  };
}

/** A hash nobody produced. */
export const UNKNOWN_HASH = `0x${"5a".repeat(32)}`;
export const UNKNOWN_ADDRESS = "0x00000000000000000000000000000000000000aa";

/**
 * Commits two blocks on a fresh chain: block 1 with one transfer, block 2 with three
 * transactions (a transfer with a parent_tx_hash, an ordered transfer, a /users write).
 * Returns each block's transactions in block order.
 */
export async function commitSampleBlocks(t: TestNode): Promise<[ConfirmedTxJson[], ConfirmedTxJson[]]> {
  const [alice, bob, carol] = [accountAt(t, 1), accountAt(t, 2), accountAt(t, 3)];
  const first = await commitOne(t, transfer(alice, bob.address, 100));
  const second = await commitBatch(t, [
    transfer(bob, carol.address, 20, { parent_tx_hash: first.hash }),
    transfer(carol, alice.address, 30, { nonce: 0 }),
    userWrite(alice, { greeting: "hello", n: [1, 2, 3] }),
  ]);
  assert.equal(first.block_number, 1, "the first sample transaction is in block 1");
  assert.equal(second[0]?.block_number, 2, "the sample batch is in block 2");
  return [[first], second];
}

/** The chain most read tests share: a fresh dev node holding the two sample blocks. */
export interface SampleChain {
  t: TestNode;
  /** Each sample block's transactions, in block order (blocks 1 and 2). */
  sample: [ConfirmedTxJson[], ConfirmedTxJson[]];
  /** The hashes of blocks 0, 1 and 2. */
  hashes: string[];
  head: number;
}

/**
 * Starts a dev node and commits the sample blocks (commitSampleBlocks). Call it in `before` and
 * stop `t` in `after`, which runs even when `before` fails.
 */
export async function startSampleChain(): Promise<SampleChain> {
  const t = await startTestNode();
  const sample = await commitSampleBlocks(t);
  const hashes: string[] = [];
  for (let number = 0; number <= 2; number++) {
    hashes.push((await t.result<{ hash: string }>("chain_getBlockByNumber", { number })).hash);
  }
  return { t, sample, hashes, head: await t.result<number>("chain_getRecentBlockNumber") };
}
