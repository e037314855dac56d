import assert from "node:assert/strict";

/**
 * Checkers of the result shapes of spec/interface.md §2 (with DESIGN.md's closures: hashes are
 * 32 bytes, addresses 20 bytes, block numbers and amounts are safe integers) and of the JSON-RPC
 * error envelope of DESIGN.md §2. Each is an assertion function, so a checked value is typed.
 */

export const HASH_RE = /^0x[0-9a-fA-F]{64}$/;
export const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
/** 97 bytes: hash ‖ r ‖ s ‖ v. */
export const SIGNATURE_RE = /^0x[0-9a-fA-F]{194}$/;

export interface OperationJson {
  type: string;
  ref: string;
  value: unknown;
}

export interface TxResultJson {
  code: number;
  reason?: string;
}

/** A transaction as it appears inside a block. */
export interface TxJson {
  hash: string;
  address: string;
  signature: string;
  timestamp: number;
  nonce: number;
  parent_tx_hash?: string;
  operation: OperationJson;
}

/** A transaction fetched by hash or by position: with its block, position and result. */
export interface ConfirmedTxJson extends TxJson {
  block_hash: string;
  block_number: number;
  index: number;
  result: TxResultJson;
}

/** An entry of chain_getPendingTransactions: no operation (spec §2). */
export interface PendingEntryJson {
  status: "PENDING";
  hash: string;
  address: string;
  signature: string;
  timestamp: number;
  nonce: number;
  parent_tx_hash?: string;
}

/** A pending transaction fetched by hash. */
export interface PendingTxJson extends PendingEntryJson {
  operation?: OperationJson;
}

export interface HeaderJson {
  timestamp: number;
  hash: string;
  parent_hash: string;
  number: number;
  proposer: string;
  validators: string[];
  size: number;
}

export interface BlockJson<T = TxJson | string> extends HeaderJson {
  transactions: T[];
}

export interface NodeInfoJson {
  name: string;
  location: string;
  version: string;
}

const HEADER_KEYS = ["timestamp", "hash", "parent_hash", "number", "proposer", "validators", "size"] as const;
const TX_KEYS = ["hash", "address", "signature", "timestamp", "nonce"] as const;
const CONFIRMED_KEYS = ["block_hash", "block_number", "index"] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function assertRecord(value: unknown, what: string): asserts value is Record<string, unknown> {
  assert.ok(isRecord(value), `${what}: expected an object, got ${JSON.stringify(value)}`);
}

function assertSafeInteger(value: unknown, what: string, min = 0): asserts value is number {
  assert.equal(typeof value, "number", `${what}: expected a number, got ${JSON.stringify(value)}`);
  assert.ok(Number.isSafeInteger(value), `${what}: expected a safe integer, got ${String(value)}`);
  assert.ok((value as number) >= min, `${what}: expected ≥ ${min}, got ${String(value)}`);
}

export function assertHash(value: unknown, what: string): asserts value is string {
  assert.equal(typeof value, "string", `${what}: expected a hash string, got ${JSON.stringify(value)}`);
  assert.match(value as string, HASH_RE, `${what}: expected 0x + 64 hex digits`);
}

export function assertAddress(value: unknown, what: string): asserts value is string {
  assert.equal(typeof value, "string", `${what}: expected an address string, got ${JSON.stringify(value)}`);
  assert.match(value as string, ADDRESS_RE, `${what}: expected 0x + 40 hex digits`);
}

/** An Array of address Strings (validators). */
export function assertAddressList(value: unknown, what: string): asserts value is string[] {
  assert.ok(Array.isArray(value), `${what}: expected an array, got ${JSON.stringify(value)}`);
  value.forEach((address: unknown, i) => {
    assertAddress(address, `${what}[${i}]`);
  });
}

/** Block header (spec §2): the block's members without `transactions`. */
export function assertHeader(value: unknown, what = "header"): asserts value is HeaderJson {
  assertRecord(value, what);
  for (const key of HEADER_KEYS) assert.ok(key in value, `${what}: member ${key} is missing`);
  assert.ok(!("transactions" in value), `${what}: a header has no transactions member`);
  assertHeaderMembers(value, what);
}

function assertHeaderMembers(value: Record<string, unknown>, what: string): void {
  assertSafeInteger(value.timestamp, `${what}.timestamp`);
  assertHash(value.hash, `${what}.hash`);
  assertSafeInteger(value.number, `${what}.number`);
  assert.equal(typeof value.parent_hash, "string", `${what}.parent_hash: expected a string`);
  if (value.number === 0) assert.equal(value.parent_hash, "", `${what}: block 0 has parent_hash ""`);
  else assertHash(value.parent_hash, `${what}.parent_hash`);
  assertAddress(value.proposer, `${what}.proposer`);
  assertAddressList(value.validators, `${what}.validators`);
  assertSafeInteger(value.size, `${what}.size`);
}

/**
 * Block (spec §2). `full` says what `transactions` must hold: transaction objects (true) or
 * hash strings (false).
 */
export function assertBlock(value: unknown, full: true, what?: string): asserts value is BlockJson<TxJson>;
export function assertBlock(value: unknown, full: false, what?: string): asserts value is BlockJson<string>;
export function assertBlock(value: unknown, full: boolean, what = "block"): asserts value is BlockJson {
  assertRecord(value, what);
  for (const key of [...HEADER_KEYS, "transactions"]) {
    assert.ok(key in value, `${what}: member ${key} is missing`);
  }
  assertHeaderMembers(value, what);
  assert.ok(Array.isArray(value.transactions), `${what}.transactions: expected an array`);
  (value.transactions as unknown[]).forEach((tx, i) => {
    if (full) assertBlockTx(tx, `${what}.transactions[${i}]`);
    else assertHash(tx, `${what}.transactions[${i}]`);
  });
}

function assertOperation(value: unknown, what: string): asserts value is OperationJson {
  assertRecord(value, what);
  assert.equal(value.type, "SET_VALUE", `${what}.type`);
  assert.equal(typeof value.ref, "string", `${what}.ref: expected a string`);
  assert.ok("value" in value, `${what}.value is missing`);
}

function assertTxMembers(value: Record<string, unknown>, what: string): void {
  for (const key of TX_KEYS) assert.ok(key in value, `${what}: member ${key} is missing`);
  assertHash(value.hash, `${what}.hash`);
  assertAddress(value.address, `${what}.address`);
  assert.equal(typeof value.signature, "string", `${what}.signature: expected a string`);
  assert.match(value.signature as string, SIGNATURE_RE, `${what}.signature: expected 97 bytes of hex`);
  assertSafeInteger(value.timestamp, `${what}.timestamp`);
  assertSafeInteger(value.nonce, `${what}.nonce`, -1);
  if ("parent_tx_hash" in value) {
    assert.equal(typeof value.parent_tx_hash, "string", `${what}.parent_tx_hash: expected a string`);
  }
}

/** A transaction inside a block: no block position, no status. */
export function assertBlockTx(value: unknown, what = "transaction"): asserts value is TxJson {
  assertRecord(value, what);
  assertTxMembers(value, what);
  assertOperation(value.operation, `${what}.operation`);
  for (const key of [...CONFIRMED_KEYS, "status"]) {
    assert.ok(!(key in value), `${what}: a transaction inside a block has no ${key}`);
  }
}

/** A committed transaction fetched by hash or position (spec §2, DESIGN.md §3). */
export function assertConfirmedTx(value: unknown, what = "transaction"): asserts value is ConfirmedTxJson {
  assertRecord(value, what);
  assertTxMembers(value, what);
  assertOperation(value.operation, `${what}.operation`);
  assertHash(value.block_hash, `${what}.block_hash`);
  assertSafeInteger(value.block_number, `${what}.block_number`, 1);
  assertSafeInteger(value.index, `${what}.index`);
  assertRecord(value.result, `${what}.result`);
  assertSafeInteger(value.result.code, `${what}.result.code`);
  if (value.result.code !== 0) {
    assert.equal(typeof value.result.reason, "string", `${what}.result.reason of a failed transaction`);
  }
  assert.ok(!("status" in value), `${what}: a committed transaction has no status`);
}

/** An entry of the pending list: status PENDING and no operation (spec §2). */
export function assertPendingEntry(
  value: unknown,
  what = "pending entry",
): asserts value is PendingEntryJson {
  assertRecord(value, what);
  assert.equal(value.status, "PENDING", `${what}.status`);
  assertTxMembers(value, what);
  assert.ok(!("operation" in value), `${what}: a pending-list entry has no operation`);
  for (const key of CONFIRMED_KEYS) assert.ok(!(key in value), `${what}: a pending entry has no ${key}`);
}

/** A pending transaction fetched by hash: status PENDING, no block position. */
export function assertPendingTx(
  value: unknown,
  what = "pending transaction",
): asserts value is PendingTxJson {
  assertRecord(value, what);
  assert.equal(value.status, "PENDING", `${what}.status`);
  assertTxMembers(value, what);
  if ("operation" in value) assertOperation(value.operation, `${what}.operation`);
  for (const key of CONFIRMED_KEYS)
    assert.ok(!(key in value), `${what}: a pending transaction has no ${key}`);
}

export function assertNodeInfo(value: unknown, what = "node info"): asserts value is NodeInfoJson {
  assertRecord(value, what);
  for (const key of ["name", "location", "version"]) {
    assert.equal(typeof value[key], "string", `${what}.${key}: expected a string`);
  }
}

/** The header members of a block (what chain_getBlockHeaders returns for it). */
export function headerOf(block: BlockJson): HeaderJson {
  const { transactions: _transactions, ...header } = block;
  return header;
}

/**
 * A JSON-RPC error reply (DESIGN.md §2): no result, the code, a message, and, when `reason` is
 * given, `data.reason`. Returns `error.data` for further checks.
 */
export function assertRpcError(
  reply: unknown,
  code: number,
  reason?: string,
  what = "reply",
): Record<string, unknown> {
  assertRecord(reply, what);
  assert.equal(reply.jsonrpc, "2.0", `${what}.jsonrpc`);
  assert.ok("id" in reply, `${what}: an error reply carries an id (null when unknown)`);
  assert.ok(!("result" in reply), `${what}: an error reply has no result, got ${JSON.stringify(reply)}`);
  assertRecord(reply.error, `${what}.error (got ${JSON.stringify(reply)})`);
  assert.equal(reply.error.code, code, `${what}.error.code (error: ${JSON.stringify(reply.error)})`);
  assert.equal(typeof reply.error.message, "string", `${what}.error.message`);
  const data = reply.error.data ?? {};
  assertRecord(data, `${what}.error.data`);
  if (reason !== undefined) {
    assert.equal(data.reason, reason, `${what}.error.data.reason (error: ${JSON.stringify(reply.error)})`);
  }
  return data;
}

/** A successful reply; returns its result. */
export function assertRpcResult(reply: unknown, what = "reply"): unknown {
  assertRecord(reply, what);
  assert.equal(reply.jsonrpc, "2.0", `${what}.jsonrpc`);
  assert.equal(reply.error, undefined, `${what}: unexpected error ${JSON.stringify(reply.error)}`);
  assert.ok("result" in reply, `${what}: no result member`);
  return reply.result;
}
