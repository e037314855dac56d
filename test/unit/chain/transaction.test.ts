import assert from "node:assert/strict";
import { describe, it } from "node:test";
import ainUtil from "@ainblockchain/ain-util";
import {
  type SignedTxInput,
  type TxBody,
  TxRejectedError,
  type TxRejectReason,
  txBody,
  verifySignedTx,
} from "../../../src/chain/index.ts";
import {
  bytesToHex,
  canonicalJson,
  hashObject,
  hexToBytes,
  privateKeyToAddress,
  signObject,
} from "../../../src/crypto/index.ts";

const CHAIN_ID = 100;
const OPTIONS = { chainId: CHAIN_ID, maxTxBytes: 100 * 1024 };
const KEY_HEX = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const KEY = hexToBytes(KEY_HEX);
const SENDER = privateKeyToAddress(KEY);
const OTHER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

function transferBody(nonce = 0): TxBody {
  return {
    nonce,
    timestamp: 1_700_000_000_000,
    operation: { type: "SET_VALUE", ref: `/transfer/${SENDER}/${OTHER}/k1/value`, value: 10 },
  };
}

/** Signs any object as a transaction body (also malformed ones, cast to the input type). */
function signed(body: unknown, chainId = CHAIN_ID): SignedTxInput {
  return { signature: signObject(body, KEY, chainId), transaction: body as TxBody };
}

function assertRejected(input: SignedTxInput, reason: TxRejectReason, options = OPTIONS): void {
  assert.throws(
    () => verifySignedTx(input, options),
    (error: unknown) => {
      assert.ok(error instanceof TxRejectedError, `expected a TxRejectedError, got ${String(error)}`);
      assert.equal(error.reason, reason, `expected reason ${reason}, got ${error.reason}: ${error.message}`);
      return true;
    },
  );
}

describe("verifySignedTx", () => {
  it("accepts a valid transaction and recovers its sender", () => {
    const body = { ...transferBody(), parent_tx_hash: "" };
    const input = signed(body);
    const tx = verifySignedTx(input, OPTIONS);
    assert.equal(tx.address, SENDER, "sender recovered from the signature");
    assert.equal(tx.hash, hashObject(body), "tx hash is the body hash");
    assert.equal(tx.signature, input.signature);
    assert.equal(tx.nonce, 0);
    assert.equal(tx.parent_tx_hash, "");
    assert.deepEqual(txBody(tx), body, "the block form gives back the signed body");
  });

  it("accepts an unordered transaction (nonce -1)", () => {
    const tx = verifySignedTx(signed(transferBody(-1)), OPTIONS);
    assert.equal(tx.nonce, -1);
  });

  it("rejects an extra body member (even address) as invalid_operation", () => {
    assertRejected(signed({ ...transferBody(), address: SENDER }), "invalid_operation");
    assertRejected(signed({ ...transferBody(), extra: 1 }), "invalid_operation");
  });

  for (const nonce of [-2, 1.5, Number.MAX_SAFE_INTEGER + 1]) {
    it(`rejects nonce ${nonce} as invalid_operation`, () => {
      assertRejected(signed({ ...transferBody(), nonce }), "invalid_operation");
    });
  }

  for (const timestamp of [-1, 1.5]) {
    it(`rejects timestamp ${timestamp} as invalid_operation`, () => {
      assertRejected(signed({ ...transferBody(), timestamp }), "invalid_operation");
    });
  }

  it("rejects a non-string parent_tx_hash as invalid_operation", () => {
    assertRejected(signed({ ...transferBody(), parent_tx_hash: 5 }), "invalid_operation");
  });

  it("rejects text storage cannot keep as invalid_operation: a lone surrogate, a member named __proto__", () => {
    const write = (value: unknown) => ({
      nonce: -1,
      timestamp: 1_700_000_000_000,
      operation: { type: "SET_VALUE", ref: `/users/${SENDER}/x`, value },
    });
    // As JSON.parse makes them from a request: "\ud800" is one lone code unit, and "__proto__" an
    // ordinary own member (an object literal would set the prototype instead).
    assertRejected(signed(write(JSON.parse('"a\\ud800"'))), "invalid_operation");
    assertRejected(signed(write(JSON.parse('{"\\udc00": 1}'))), "invalid_operation");
    assertRejected(signed(write(JSON.parse('{"__proto__": 1}'))), "invalid_operation");
    assertRejected(signed(write(JSON.parse('{"a": [{"b": {"__proto__": {}}}]}'))), "invalid_operation");
    // Near misses stay ordinary data.
    for (const value of [{ __proto_: 1 }, { proto: 1 }, "__proto__", "\ud83d\ude00"]) {
      assert.deepEqual(verifySignedTx(signed(write(value)), OPTIONS).operation.value, value);
    }
  });

  it("rejects an operation type other than SET_VALUE as invalid_operation", () => {
    for (const type of ["SET", "INC_VALUE", "SET_RULE", "set_value"]) {
      const body = { ...transferBody(), operation: { ...transferBody().operation, type } };
      assertRejected(signed(body), "invalid_operation");
    }
  });

  it("rejects an operation with an extra or missing member as invalid_operation", () => {
    const op = transferBody().operation;
    assertRejected(signed({ ...transferBody(), operation: { ...op, is_global: true } }), "invalid_operation");
    assertRejected(
      signed({ ...transferBody(), operation: { type: op.type, ref: op.ref } }),
      "invalid_operation",
    );
    assertRejected(signed({ ...transferBody(), operation: { ...op, ref: 7 } }), "invalid_operation");
    assertRejected(signed({ ...transferBody(), operation: null }), "invalid_operation");
    assertRejected(signed({ ...transferBody(), operation: [op] }), "invalid_operation");
  });

  it("rejects a value nested deeper than 64 levels as invalid_operation", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    const body = {
      ...transferBody(),
      operation: { type: "SET_VALUE", ref: `/users/${SENDER}/x`, value: deep },
    };
    assertRejected(signed(body), "invalid_operation");
  });

  it("rejects a body over maxTxBytes as tx_too_large and accepts one exactly at the limit", () => {
    const body = {
      ...transferBody(),
      operation: { type: "SET_VALUE", ref: `/users/${SENDER}/blob`, value: "x".repeat(2000) },
    };
    // The limit counts the bytes of the canonical body.
    const size = Buffer.byteLength(canonicalJson(body), "utf8");
    assertRejected(signed(body), "tx_too_large", { chainId: CHAIN_ID, maxTxBytes: size - 1 });
    const tx = verifySignedTx(signed(body), { chainId: CHAIN_ID, maxTxBytes: size });
    assert.equal(tx.address, SENDER, `a ${size}-byte body is accepted at a limit of ${size}`);
  });

  it("rejects a tampered body as hash_mismatch", () => {
    const input = signed(transferBody());
    const tampered = { ...transferBody(), operation: { ...transferBody().operation, value: 11 } };
    assertRejected({ signature: input.signature, transaction: tampered }, "hash_mismatch");
  });

  it("rejects a signature for another chain id as wrong_chain_id", () => {
    assertRejected(signed(transferBody(), CHAIN_ID + 1), "wrong_chain_id");
    assertRejected(signed(transferBody(), 0), "wrong_chain_id");
  });

  it("rejects a broken signature as invalid_signature", () => {
    const input = signed(transferBody());
    const badV = hexToBytes(input.signature);
    badV[96] = 5;
    assertRejected({ ...input, signature: bytesToHex(badV) }, "invalid_signature");
    const zeroR = hexToBytes(input.signature);
    zeroR.fill(0, 32, 64);
    assertRejected({ ...input, signature: bytesToHex(zeroR) }, "invalid_signature");
    assertRejected({ ...input, signature: input.signature.slice(0, -2) }, "invalid_signature");
    assertRejected({ ...input, signature: "0x" }, "invalid_signature");
  });
});

describe("compatibility with @ainblockchain/ain-util", () => {
  const bodies: TxBody[] = [
    transferBody(0),
    { ...transferBody(3), parent_tx_hash: "" },
    transferBody(-1),
    {
      nonce: 7,
      timestamp: 1_568_798_344_000,
      operation: {
        type: "SET_VALUE",
        ref: `/users/${SENDER}/profile`,
        value: { name: "é", tags: ["a", "b"], n: 1.5 },
      },
    },
  ];

  for (const chainId of [0, 1, CHAIN_ID, 109]) {
    it(`ain-util signatures verify and equal signObject's (chain id ${chainId})`, () => {
      for (const [i, body] of bodies.entries()) {
        const theirs = ainUtil.ecSignTransaction(body, Buffer.from(KEY), chainId);
        const tx = verifySignedTx({ signature: theirs, transaction: body }, { ...OPTIONS, chainId });
        assert.equal(tx.address, SENDER, `body ${i}: sender recovered from ain-util's signature`);
        assert.equal(signObject(body, KEY, chainId), theirs, `body ${i}: signObject equals ain-util`);
      }
    });
  }
});
