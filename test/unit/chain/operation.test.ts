import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ClassifiedOperation, classifyOperation, type JsonValue } from "../../../src/chain/index.ts";

const SENDER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const OTHER = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

function classify(ref: string, value: JsonValue, sender = SENDER) {
  return classifyOperation({ type: "SET_VALUE", ref, value }, sender);
}

function assertOk(ref: string, value: JsonValue, expected: ClassifiedOperation, sender = SENDER): void {
  const result = classify(ref, value, sender);
  assert.ok(
    result.ok,
    `expected ${ref} = ${JSON.stringify(value)} to be allowed, got ${JSON.stringify(result)}`,
  );
  assert.deepEqual(result.op, expected, `classification of ${ref}`);
}

function assertRefused(
  ref: string,
  value: JsonValue,
  reason: "permission_denied" | "invalid_operation",
  sender = SENDER,
): void {
  const result = classify(ref, value, sender);
  assert.ok(!result.ok, `expected ${ref} = ${JSON.stringify(value)} to be refused with ${reason}`);
  assert.equal(result.reason, reason, `reason for ${ref} = ${JSON.stringify(value)}: ${result.message}`);
}

describe("classifyOperation: /transfer/<from>/<to>/<key>/value", () => {
  it("lets the sender transfer from itself", () => {
    assertOk(`/transfer/${SENDER}/${OTHER}/k1/value`, 5, {
      kind: "transfer",
      from: SENDER,
      to: OTHER,
      key: "k1",
      amount: 5,
      ref: `/transfer/${SENDER}/${OTHER}/k1`,
    });
  });

  it("ignores leading and trailing slashes", () => {
    const result = classify(`transfer/${SENDER}/${OTHER}/k1/value/`, 5);
    assert.ok(
      result.ok && result.op.kind === "transfer",
      "a path without the leading slash is the same path",
    );
  });

  it("denies a transfer from another account", () => {
    assertRefused(`/transfer/${OTHER}/${SENDER}/k1/value`, 5, "permission_denied");
  });

  for (const amount of [
    0,
    -1,
    1.5,
    Number.MAX_SAFE_INTEGER + 1,
    "5",
    null,
    true,
    [5],
    { a: 5 },
  ] as JsonValue[]) {
    it(`refuses amount ${JSON.stringify(amount)} as invalid_operation`, () => {
      assertRefused(`/transfer/${SENDER}/${OTHER}/k1/value`, amount, "invalid_operation");
    });
  }

  it("accepts the largest safe integer amount", () => {
    const result = classify(`/transfer/${SENDER}/${OTHER}/k1/value`, Number.MAX_SAFE_INTEGER);
    assert.ok(result.ok, "MAX_SAFE_INTEGER is a valid amount");
  });

  it("refuses malformed addresses as invalid_operation", () => {
    assertRefused(`/transfer/${SENDER}/0x1234/k1/value`, 5, "invalid_operation");
    assertRefused(`/transfer/${SENDER}/${OTHER.slice(0, -1)}g/k1/value`, 5, "invalid_operation");
    assertRefused(`/transfer/alice/${OTHER}/k1/value`, 5, "invalid_operation");
    assertRefused(`/transfer/${SENDER.slice(2)}/${OTHER}/k1/value`, 5, "invalid_operation");
  });

  it("denies writing the result (or any other member) of a transfer", () => {
    assertRefused(`/transfer/${SENDER}/${OTHER}/k1/result`, { code: 0 }, "permission_denied");
    assertRefused(`/transfer/${SENDER}/${OTHER}/k1/result/code`, 0, "permission_denied");
    assertRefused(`/transfer/${SENDER}/${OTHER}/k1`, { value: 5 }, "permission_denied");
    assertRefused(`/transfer/${SENDER}/${OTHER}/k1/other`, 5, "permission_denied");
    assertRefused(`/transfer/${SENDER}`, 5, "permission_denied");
    assertRefused("/transfer", 5, "permission_denied");
  });

  it("normalises lowercase addresses to their checksum form", () => {
    assertOk(`/transfer/${SENDER.toLowerCase()}/${OTHER.toLowerCase()}/k1/value`, 5, {
      kind: "transfer",
      from: SENDER,
      to: OTHER,
      key: "k1",
      amount: 5,
      ref: `/transfer/${SENDER}/${OTHER}/k1`,
    });
  });
});

describe("classifyOperation: /staking/<addr>/<key>/value", () => {
  it("lets the sender stake a positive amount", () => {
    assertOk(`/staking/${SENDER}/s1/value`, 100, {
      kind: "stake",
      address: SENDER,
      key: "s1",
      amount: 100,
      ref: `/staking/${SENDER}/s1`,
    });
  });

  it("lets the sender unstake with a negative amount", () => {
    assertOk(`/staking/${SENDER}/s2/value`, -40, {
      kind: "stake",
      address: SENDER,
      key: "s2",
      amount: -40,
      ref: `/staking/${SENDER}/s2`,
    });
  });

  it("refuses a zero or non-integer amount as invalid_operation", () => {
    for (const amount of [0, 1.5, -0.5, "1", null] as JsonValue[]) {
      assertRefused(`/staking/${SENDER}/s1/value`, amount, "invalid_operation");
    }
  });

  it("denies staking for another account", () => {
    assertRefused(`/staking/${OTHER}/s1/value`, 100, "permission_denied");
  });

  it("refuses a malformed address as invalid_operation and other shapes as permission_denied", () => {
    assertRefused("/staking/0xabc/s1/value", 100, "invalid_operation");
    assertRefused(`/staking/${SENDER}/s1`, 100, "permission_denied");
    assertRefused(`/staking/${SENDER}/s1/result`, 100, "permission_denied");
  });

  it("normalises a lowercase address", () => {
    const result = classify(`/staking/${SENDER.toLowerCase()}/s1/value`, 1);
    assert.ok(result.ok && result.op.kind === "stake", "lowercase own address is allowed");
    assert.equal(result.op.address, SENDER);
    assert.equal(result.op.ref, `/staking/${SENDER}/s1`);
  });
});

describe("classifyOperation: /users/<addr>/...", () => {
  const values: JsonValue[] = [
    1,
    "text",
    true,
    null,
    [1, { a: 2 }],
    { a: { b: [1, 2], c: null }, d: "e" },
    {},
  ];
  for (const value of values) {
    it(`lets the owner write ${JSON.stringify(value)}`, () => {
      assertOk(`/users/${SENDER}/app/data`, value, {
        kind: "userData",
        ref: `/users/${SENDER}/app/data`,
        value,
      });
    });
  }

  it("lets the owner write its whole subtree", () => {
    assertOk(`/users/${SENDER}`, { a: 1 }, { kind: "userData", ref: `/users/${SENDER}`, value: { a: 1 } });
  });

  it("denies writes under another account's /users", () => {
    assertRefused(`/users/${OTHER}/app`, 1, "permission_denied");
    assertRefused(`/users/${OTHER}`, 1, "permission_denied");
  });

  it("denies /users without an address", () => {
    assertRefused("/users", 1, "permission_denied");
    assertRefused("/users/alice/app", 1, "permission_denied");
  });

  it("refuses object keys that cannot be path segments as invalid_operation", () => {
    for (const key of ["a/b", "/a", "a/", "", "\u0000x", "x".repeat(257)]) {
      assertRefused(`/users/${SENDER}/app`, { [key]: 1 }, "invalid_operation");
      assertRefused(`/users/${SENDER}/app`, { ok: { [key]: 1 } }, "invalid_operation");
    }
  });

  it("allows any keys inside arrays (an array is one leaf)", () => {
    const value = [{ "a/b": 1 }];
    assertOk(`/users/${SENDER}/app`, value, { kind: "userData", ref: `/users/${SENDER}/app`, value });
  });

  it("refuses a value whose leaf paths would exceed 32 segments", () => {
    let value: JsonValue = 1;
    for (let i = 0; i < 32; i++) value = { k: value };
    assertRefused(`/users/${SENDER}/app`, value, "invalid_operation");
  });

  it("normalises a lowercase owner address in the ref", () => {
    assertOk(`/users/${SENDER.toLowerCase()}/app`, 1, {
      kind: "userData",
      ref: `/users/${SENDER}/app`,
      value: 1,
    });
  });
});

describe("classifyOperation: everything else", () => {
  it("denies direct writes to /account", () => {
    assertRefused(`/account/${SENDER}/balance`, 1_000_000, "permission_denied");
    assertRefused(`/account/${SENDER}/nonce`, 0, "permission_denied");
    assertRefused(`/account/${SENDER}/stake`, 1, "permission_denied");
    assertRefused("/account", null, "permission_denied");
  });

  it("denies any other root", () => {
    for (const ref of ["/afan", "/afan/test", "/chain/chain_id", "/apps/x", "/Users/x", "/TRANSFER/x"]) {
      assertRefused(ref, 1, "permission_denied");
    }
  });

  it("refuses malformed paths as invalid_operation", () => {
    for (const ref of ["", "/", "//", "a//b", `/users/${SENDER}//x`, "/a/\u0007", `/${"a/".repeat(33)}`]) {
      assertRefused(ref, 1, "invalid_operation");
    }
  });
});
