import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { normalizeReadPath } from "../../src/chain/index.ts";
import { normalizeRef } from "../../src/client/index.ts";

/**
 * The client cannot import the node (src/client imports only src/crypto), so its normalizeRef
 * copies the node's normalizeReadPath: getVerifiedValue compares a proof's `ref` with it, and a
 * difference would fail every verified read of such a path (ref_mismatch). The two must agree
 * wherever the node accepts the path.
 */

const A = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const B = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

const PATHS = [
  `/account/${A}/balance`,
  `account/${A.toUpperCase().replace("0X", "0x")}/nonce/`,
  `/transfer/${A}/${B.toLowerCase()}/k1/value`,
  `/staking/${A}/k/value`,
  `/users/${A}/profile/${A}`,
  `//users/${A}//`,
  "/users/not-an-address/x",
  "/constructor/x",
  "/__proto__",
  "/a/B/c",
  `/other/${A}`,
];

describe("normalizeRef (client) agrees with normalizeReadPath (node)", () => {
  for (const path of PATHS) {
    it(JSON.stringify(path), () => {
      const node = normalizeReadPath(path);
      assert.notEqual(node, undefined, "the node accepts it");
      assert.equal(normalizeRef(path), node);
    });
  }
});
