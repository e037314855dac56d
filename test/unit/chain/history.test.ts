import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  balancePath,
  EXEC_FAILURE_CODES,
  executeTx,
  historyAddresses,
  historyAddressesExecuted,
  type JsonValue,
  StateOverlay,
  type Tx,
} from "../../../src/chain/index.ts";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";
const OK = { code: 0 } as const;
const FAILED = { code: EXEC_FAILURE_CODES.insufficient_balance, reason: "insufficient_balance" };

function tx(ref: string, value: JsonValue, address = ALICE): Tx {
  return {
    hash: `0x${"11".repeat(32)}`,
    address,
    signature: "0x",
    timestamp: 1_700_000_000_000,
    nonce: 0,
    operation: { type: "SET_VALUE", ref, value },
  };
}

describe("historyAddresses (chain/history.ts)", () => {
  it("a successful transfer belongs to its sender and its recipient", () => {
    assert.deepEqual(historyAddresses(tx(`/transfer/${ALICE}/${BOB}/k/value`, 5), OK), [ALICE, BOB]);
  });

  it("names the recipient in checksum form, however the path wrote it", () => {
    for (const to of [BOB.toLowerCase(), `0x${BOB.slice(2).toUpperCase()}`]) {
      assert.deepEqual(historyAddresses(tx(`/transfer/${ALICE}/${to}/k/value`, 5), OK), [ALICE, BOB], to);
    }
  });

  it("a failed transfer moved nothing: only its sender's", () => {
    assert.deepEqual(historyAddresses(tx(`/transfer/${ALICE}/${BOB}/k/value`, 5), FAILED), [ALICE]);
  });

  it("a transfer to oneself is listed once", () => {
    assert.deepEqual(historyAddresses(tx(`/transfer/${ALICE}/${ALICE}/k/value`, 5), OK), [ALICE]);
  });

  it("stakes and /users writes touch only the sender's own account", () => {
    assert.deepEqual(historyAddresses(tx(`/staking/${ALICE}/k/value`, 10), OK), [ALICE]);
    assert.deepEqual(historyAddresses(tx(`/users/${ALICE}/profile`, { name: "A" }), OK), [ALICE]);
  });

  it("an operation the permission table refuses (recorded as failed) is only its sender's", () => {
    const refused = { code: EXEC_FAILURE_CODES.permission_denied, reason: "permission_denied" };
    // Bob naming Alice as the payer: refused at execution, nothing moved.
    assert.deepEqual(historyAddresses(tx(`/transfer/${ALICE}/${BOB}/k/value`, 5, BOB), refused), [BOB]);
    assert.deepEqual(historyAddresses(tx("/account/x/balance", 1), refused), [ALICE]);
  });
});

describe("historyAddressesExecuted: the same accounts from what execution credited", () => {
  it("agrees with historyAddresses on every kind of transaction, successful or not", () => {
    const CAROL = "0x90F79bf6EB2c4f870365E785982E1f101E93b906";
    const balances = new Map<string, JsonValue>([
      [balancePath(ALICE), 1_000],
      [balancePath(BOB), 10],
    ]);
    const state = new StateOverlay({
      getLeaf: (path) => balances.get(path),
      *leafPathsBelow() {},
    });
    const cases: Tx[] = [
      tx(`/transfer/${ALICE}/${BOB}/a/value`, 5),
      tx(`/transfer/${ALICE}/${CAROL.toLowerCase()}/b/value`, 5), // a recipient written in lower case
      tx(`/transfer/${ALICE}/${ALICE}/c/value`, 5), // to oneself
      tx(`/transfer/${ALICE}/${BOB}/a/value`, 5), // the same key again: refused
      tx(`/transfer/${BOB}/${ALICE}/d/value`, 500, BOB), // more than Bob holds
      tx(`/transfer/${ALICE}/${BOB}/e/value`, 5, BOB), // Bob naming Alice as the payer
      tx(`/staking/${ALICE}/s/value`, 10),
      tx(`/users/${ALICE}/profile`, { name: "A" }),
      tx("/account/x/balance", 1),
    ];
    for (const [i, transaction] of cases.entries()) {
      let credited: string | undefined;
      const result = executeTx(state, { ...transaction, nonce: -1 }, (address) => {
        credited = address;
      });
      assert.deepEqual(
        historyAddressesExecuted(transaction, credited),
        historyAddresses(transaction, result),
        `case ${i}: ${transaction.operation.ref} → ${JSON.stringify(result)}`,
      );
    }
  });
});
