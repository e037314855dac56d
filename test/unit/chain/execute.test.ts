import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  balanceOf,
  balancePath,
  EXEC_FAILURE_CODES,
  executeTx,
  type JsonValue,
  nonceOf,
  noncePath,
  StateOverlay,
  type StateReader,
  stakeOf,
  type Tx,
} from "../../../src/chain/index.ts";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

class MapState implements StateReader {
  readonly leaves: Map<string, JsonValue>;

  constructor(entries: Record<string, JsonValue> = {}) {
    this.leaves = new Map(Object.entries(entries));
  }

  getLeaf(path: string): JsonValue | undefined {
    return this.leaves.get(path);
  }

  *leafPathsBelow(path: string): Iterable<string> {
    for (const key of this.leaves.keys()) if (key.startsWith(`${path}/`)) yield key;
  }
}

let txCounter = 0;
/** A block-form transaction; executeTx trusts its caller on signature and nonce order. */
function tx(address: string, nonce: number, ref: string, value: JsonValue): Tx {
  txCounter += 1;
  return {
    hash: `0x${txCounter.toString(16).padStart(64, "0")}`,
    address,
    signature: "0x",
    timestamp: 1_700_000_000_000,
    nonce,
    operation: { type: "SET_VALUE", ref, value },
  };
}

function freshState(): StateOverlay {
  return new StateOverlay(new MapState({ [balancePath(ALICE)]: 1000, [balancePath(BOB)]: 50 }));
}

describe("executeTx", () => {
  it("moves balance on a transfer and records value and result", () => {
    const state = freshState();
    const result = executeTx(state, tx(ALICE, 0, `/transfer/${ALICE}/${BOB}/k1/value`, 300));
    assert.deepEqual(result, { code: 0 });
    assert.equal(balanceOf(state, ALICE), 700, "sender debited");
    assert.equal(balanceOf(state, BOB), 350, "recipient credited");
    assert.equal(state.getLeaf(`/transfer/${ALICE}/${BOB}/k1/value`), 300, "transfer value recorded");
    assert.equal(state.getLeaf(`/transfer/${ALICE}/${BOB}/k1/result/code`), 0, "transfer result recorded");
    assert.equal(nonceOf(state, ALICE), 1, "nonce consumed");
    assert.equal(nonceOf(state, BOB), 0, "recipient nonce untouched");
  });

  it("records a transfer written with lowercase addresses under the checksum path", () => {
    const state = freshState();
    const result = executeTx(
      state,
      tx(ALICE, 0, `/transfer/${ALICE.toLowerCase()}/${BOB.toLowerCase()}/k/value`, 1),
    );
    assert.deepEqual(result, { code: 0 });
    assert.equal(state.getLeaf(`/transfer/${ALICE}/${BOB}/k/value`), 1);
  });

  it("refuses a second transfer with the same key (permission_denied) and changes nothing but the nonce", () => {
    const state = freshState();
    executeTx(state, tx(ALICE, 0, `/transfer/${ALICE}/${BOB}/k1/value`, 300));
    const before = new Map(state.changes());
    const result = executeTx(state, tx(ALICE, 1, `/transfer/${ALICE}/${BOB}/k1/value`, 5));
    assert.deepEqual(result, { code: EXEC_FAILURE_CODES.permission_denied, reason: "permission_denied" });
    assert.equal(EXEC_FAILURE_CODES.permission_denied, 2);
    const after = new Map(state.changes());
    before.set(noncePath(ALICE), 2);
    assert.deepEqual(after, before, "only the nonce changed");
  });

  it("fails a transfer beyond the balance with insufficient_balance (code 1) and still consumes the nonce", () => {
    const state = freshState();
    const result = executeTx(state, tx(ALICE, 0, `/transfer/${ALICE}/${BOB}/k1/value`, 1001));
    assert.deepEqual(result, { code: 1, reason: "insufficient_balance" });
    assert.deepEqual(
      Object.fromEntries(state.changes()),
      { [noncePath(ALICE)]: 1 },
      "only the nonce changed",
    );
    assert.equal(balanceOf(state, ALICE), 1000);
    assert.equal(state.getLeaf(`/transfer/${ALICE}/${BOB}/k1/value`), undefined, "no value recorded");
  });

  it("allows a transfer of the whole balance", () => {
    const state = freshState();
    assert.deepEqual(executeTx(state, tx(ALICE, 0, `/transfer/${ALICE}/${BOB}/all/value`, 1000)), {
      code: 0,
    });
    assert.equal(balanceOf(state, ALICE), 0);
  });

  it("leaves the balance unchanged on a transfer to oneself", () => {
    const state = freshState();
    assert.deepEqual(executeTx(state, tx(ALICE, 0, `/transfer/${ALICE}/${ALICE}/self/value`, 10)), {
      code: 0,
    });
    assert.equal(balanceOf(state, ALICE), 1000);
  });

  it("does not touch the nonce for an unordered transaction (nonce -1)", () => {
    const state = freshState();
    assert.deepEqual(executeTx(state, tx(ALICE, -1, `/transfer/${ALICE}/${BOB}/u1/value`, 10)), { code: 0 });
    assert.equal(state.getLeaf(noncePath(ALICE)), undefined, "nonce never written");
    const failed = executeTx(state, tx(ALICE, -1, `/account/${ALICE}/balance`, 10));
    assert.equal(failed.code, EXEC_FAILURE_CODES.permission_denied);
    assert.equal(state.getLeaf(noncePath(ALICE)), undefined, "nonce never written on failure either");
  });

  it("records permission and shape failures with their codes", () => {
    const state = freshState();
    assert.deepEqual(executeTx(state, tx(ALICE, 0, `/transfer/${BOB}/${ALICE}/k/value`, 10)), {
      code: 2,
      reason: "permission_denied",
    });
    assert.deepEqual(executeTx(state, tx(ALICE, 1, `/transfer/${ALICE}/${BOB}/k/value`, 0)), {
      code: 3,
      reason: "invalid_operation",
    });
    assert.deepEqual(
      Object.fromEntries(state.changes()),
      { [noncePath(ALICE)]: 2 },
      "only the nonce changed",
    );
  });

  it("moves balance to stake and back", () => {
    const state = freshState();
    assert.deepEqual(executeTx(state, tx(ALICE, 0, `/staking/${ALICE}/s1/value`, 400)), { code: 0 });
    assert.equal(balanceOf(state, ALICE), 600, "balance after staking");
    assert.equal(stakeOf(state, ALICE), 400, "stake after staking");
    assert.equal(state.getLeaf(`/staking/${ALICE}/s1/value`), 400, "staking value recorded");
    assert.deepEqual(executeTx(state, tx(ALICE, 1, `/staking/${ALICE}/s2/value`, -150)), { code: 0 });
    assert.equal(balanceOf(state, ALICE), 750, "balance after unstaking");
    assert.equal(stakeOf(state, ALICE), 250, "stake after unstaking");
    assert.equal(nonceOf(state, ALICE), 2);
  });

  it("refuses to stake more than the balance, reuse a staking key, or unstake more than the stake", () => {
    const state = freshState();
    assert.deepEqual(executeTx(state, tx(ALICE, 0, `/staking/${ALICE}/big/value`, 1001)), {
      code: 1,
      reason: "insufficient_balance",
    });
    assert.deepEqual(executeTx(state, tx(ALICE, 1, `/staking/${ALICE}/s1/value`, 100)), { code: 0 });
    assert.deepEqual(executeTx(state, tx(ALICE, 2, `/staking/${ALICE}/s1/value`, 100)), {
      code: 2,
      reason: "permission_denied",
    });
    const before = new Map(state.changes());
    assert.deepEqual(executeTx(state, tx(ALICE, 3, `/staking/${ALICE}/s2/value`, -101)), {
      code: 1,
      reason: "insufficient_balance",
    });
    before.set(noncePath(ALICE), 4);
    assert.deepEqual(new Map(state.changes()), before, "a failed unstake changes only the nonce");
    assert.equal(stakeOf(state, ALICE), 100);
    assert.equal(balanceOf(state, ALICE), 900);
  });

  it("writes user data with tree semantics", () => {
    const state = freshState();
    assert.deepEqual(executeTx(state, tx(ALICE, 0, `/users/${ALICE}/app`, { a: 1, b: { c: 2 } })), {
      code: 0,
    });
    assert.equal(state.getLeaf(`/users/${ALICE}/app/b/c`), 2);
    assert.deepEqual(executeTx(state, tx(ALICE, 1, `/users/${ALICE}/app`, null)), { code: 0 });
    assert.deepEqual([...state.leafPathsBelow(`/users/${ALICE}`)], [], "null deleted the subtree");
  });
});
