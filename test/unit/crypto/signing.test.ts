import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  bytesToHex,
  canonicalJson,
  decodeV,
  encodeV,
  hashObject,
  hexToBytes,
  isLowS,
  MAX_CHAIN_ID,
  privateKeyToAddress,
  recoverPublicKey,
  recoverSigner,
  signObject,
  toChecksumAddress,
} from "../../../src/crypto/index.ts";

interface SigningVector {
  name: string;
  private_key?: string;
  address?: string;
  chain_id: number;
  tx_body: unknown;
  canonical?: string;
  hash?: string;
  signature: string;
  valid?: boolean;
}

const vectorFile = JSON.parse(
  readFileSync(new URL("../../vectors/signing.json", import.meta.url), "utf8"),
) as { vectors: SigningVector[] };
const vectors = vectorFile.vectors;

/** secp256k1 group order. */
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const HARDHAT_KEY_0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
const HARDHAT_ADDRESS_0 = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

const sampleBody = {
  nonce: 0,
  timestamp: 1_700_000_000_000,
  operation: { type: "SET_VALUE", ref: "/users/x", value: 1 },
};

/** Replaces s by n - s and toggles the recovery id: the malleable twin of a valid signature. */
function highSTwin(signature: string): string {
  const bytes = hexToBytes(signature);
  const s = BigInt(bytesToHex(bytes.subarray(64, 96)));
  const twin = (N - s).toString(16).padStart(64, "0");
  bytes.set(hexToBytes(`0x${twin}`), 64);
  const v = bytes[96] as number;
  const decoded = decodeV(v);
  assert.ok(decoded !== undefined, `v ${v} of a fresh signature should decode`);
  bytes[96] = encodeV(decoded.chainId, decoded.recid ^ 1);
  return bytesToHex(bytes);
}

describe("signing vectors (test/vectors/signing.json)", () => {
  it("has vectors to check", () => {
    assert.ok(vectors.length >= 4, `expected at least 4 vectors, found ${vectors.length}`);
  });

  for (const vector of vectors) {
    describe(vector.name, () => {
      if (vector.canonical !== undefined) {
        it("canonical JSON equals the vector's", () => {
          assert.equal(canonicalJson(vector.tx_body), vector.canonical, "canonical JSON of tx_body");
        });
      }

      if (vector.hash !== undefined) {
        it("hash equals the vector's", () => {
          assert.equal(hashObject(vector.tx_body), vector.hash, "0x + keccak256(keccak256(canonical))");
        });
      }

      if (vector.private_key !== undefined) {
        it("signing with the private key reproduces the signature exactly (RFC6979)", () => {
          const key = hexToBytes(`0x${vector.private_key}`);
          assert.equal(
            signObject(vector.tx_body, key, vector.chain_id),
            vector.signature,
            `signature for chain id ${vector.chain_id}`,
          );
        });
      }

      if (vector.valid === false) {
        it("is rejected: the embedded hash is not the body's (hash_mismatch)", () => {
          const hash = hexToBytes(hashObject(vector.tx_body));
          assert.deepEqual(recoverSigner(vector.signature, hash, vector.chain_id), {
            ok: false,
            reason: "hash_mismatch",
          });
        });
      } else {
        it("recovers the signer from the signature alone", () => {
          const hash = hexToBytes(hashObject(vector.tx_body));
          const check = recoverSigner(vector.signature, hash, vector.chain_id);
          assert.ok(check.ok, `expected the signature to verify, got ${JSON.stringify(check)}`);
          const expected =
            vector.address ??
            (vector.private_key === undefined
              ? undefined
              : privateKeyToAddress(hexToBytes(`0x${vector.private_key}`)));
          assert.ok(expected !== undefined, "vector names an address or a key");
          assert.equal(check.signer, expected, "recovered signer");
        });
      }
    });
  }

  it("the address of every vector with a key matches the key", () => {
    for (const vector of vectors) {
      if (vector.private_key === undefined || vector.address === undefined) continue;
      assert.equal(
        privateKeyToAddress(hexToBytes(`0x${vector.private_key}`)),
        vector.address,
        `address of ${vector.name}`,
      );
    }
  });
});

describe("recoverSigner rejections", () => {
  const key = hexToBytes(HARDHAT_KEY_0);
  const hash = hexToBytes(hashObject(sampleBody));

  it("accepts a fresh signature and recovers its signer", () => {
    const check = recoverSigner(signObject(sampleBody, key, 7), hash, 7);
    assert.deepEqual(check, { ok: true, signer: HARDHAT_ADDRESS_0 });
  });

  for (const chainId of [0, 1, 100]) {
    it(`rejects the high-s twin as invalid_signature (chain id ${chainId}), though it is mathematically valid`, () => {
      const signature = signObject(sampleBody, key, chainId);
      const twin = highSTwin(signature);
      const twinBytes = hexToBytes(twin);
      const recid = decodeV(twinBytes[96] as number)?.recid;
      assert.ok(recid !== undefined, "twin's v decodes");
      // The twin recovers the same key: the rule, not the math, rejects it.
      const publicKey = recoverPublicKey(hash, twinBytes.subarray(32, 96), recid);
      assert.ok(publicKey !== undefined, "the high-s twin recovers a public key");
      assert.deepEqual(recoverSigner(twin, hash, chainId), { ok: false, reason: "invalid_signature" });
    });
  }

  it("rejects a v for another chain id as wrong_chain_id", () => {
    assert.deepEqual(recoverSigner(signObject(sampleBody, key, 1), hash, 2), {
      ok: false,
      reason: "wrong_chain_id",
    });
    assert.deepEqual(recoverSigner(signObject(sampleBody, key, 0), hash, 100), {
      ok: false,
      reason: "wrong_chain_id",
    });
    assert.deepEqual(recoverSigner(signObject(sampleBody, key, 100), hash, 0), {
      ok: false,
      reason: "wrong_chain_id",
    });
  });

  for (const v of [0, 1, 5, 26, 29, 34]) {
    it(`rejects a v byte of ${v} (no chain uses it) as invalid_signature`, () => {
      const bytes = hexToBytes(signObject(sampleBody, key, 0));
      bytes[96] = v;
      assert.deepEqual(recoverSigner(bytesToHex(bytes), hash, 0), { ok: false, reason: "invalid_signature" });
    });
  }

  it("rejects malformed signatures as invalid_signature", () => {
    const good = signObject(sampleBody, key, 0);
    const cases = {
      empty: "",
      "no 0x": good.slice(2),
      "one byte short": good.slice(0, -2),
      "one byte long": `${good}00`,
      "not hex": `${good.slice(0, -2)}zz`,
      "not hex in the middle": `${good.slice(0, 100)}zz${good.slice(102)}`,
      "not hex in the last digit only": `${good.slice(0, -1)}g`,
      "a sign in a pair": `${good.slice(0, 40)}-1${good.slice(42)}`,
      "upper-case 0X": `0X${good.slice(2)}`,
    };
    for (const [name, signature] of Object.entries(cases)) {
      assert.deepEqual(
        recoverSigner(signature, hash, 0),
        { ok: false, reason: "invalid_signature" },
        `${name} should be invalid_signature`,
      );
    }
  });

  it("reads upper-case hex digits as their lower-case twins", () => {
    const good = signObject(sampleBody, key, 0);
    assert.deepEqual(
      recoverSigner(`0x${good.slice(2).toUpperCase()}`, hash, 0),
      recoverSigner(good, hash, 0),
    );
    assert.equal(recoverSigner(good, hash, 0).ok, true);
  });

  it("rejects s = 0 and r = 0 as invalid_signature", () => {
    const zeroS = hexToBytes(signObject(sampleBody, key, 0));
    zeroS.fill(0, 64, 96);
    assert.deepEqual(recoverSigner(bytesToHex(zeroS), hash, 0), { ok: false, reason: "invalid_signature" });
    const zeroR = hexToBytes(signObject(sampleBody, key, 0));
    zeroR.fill(0, 32, 64);
    assert.deepEqual(recoverSigner(bytesToHex(zeroR), hash, 0), { ok: false, reason: "invalid_signature" });
  });

  it("accepts an upper-case hex signature", () => {
    const signature = signObject(sampleBody, key, 3);
    const upper = `0x${signature.slice(2).toUpperCase()}`;
    assert.deepEqual(recoverSigner(upper, hash, 3), { ok: true, signer: HARDHAT_ADDRESS_0 });
  });
});

describe("encodeV / decodeV", () => {
  it(`round-trips every chain id 0..${MAX_CHAIN_ID} and both recovery ids within one byte`, () => {
    assert.equal(MAX_CHAIN_ID, 109, "v is one byte, so chain ids run 0..109");
    for (let chainId = 0; chainId <= MAX_CHAIN_ID; chainId++) {
      for (const recid of [0, 1]) {
        const v = encodeV(chainId, recid);
        assert.ok(v >= 0 && v <= 255, `v ${v} for chain ${chainId} fits one byte`);
        assert.deepEqual(decodeV(v), { chainId, recid }, `decodeV(encodeV(${chainId}, ${recid}))`);
      }
    }
  });

  it("uses 27 + recid on chain 0 and 35 + 2·chainId + recid elsewhere", () => {
    assert.equal(encodeV(0, 0), 27);
    assert.equal(encodeV(0, 1), 28);
    assert.equal(encodeV(1, 0), 37);
    assert.equal(encodeV(1, 1), 38);
    assert.equal(encodeV(100, 1), 236);
    assert.equal(encodeV(109, 1), 254);
  });

  it("decodes no chain from v bytes no chain uses", () => {
    for (const v of [0, 1, 5, 26, 29, 30, 33, 34]) assert.equal(decodeV(v), undefined, `v ${v}`);
  });
});

describe("EIP-55 addresses", () => {
  it("derives the hardhat account 0 address from its key", () => {
    assert.equal(privateKeyToAddress(hexToBytes(HARDHAT_KEY_0)), HARDHAT_ADDRESS_0);
  });

  // The mixed-case examples of EIP-55 itself, plus hardhat's accounts.
  const checksummed = [
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
    "0x52908400098527886E0F7030069857D2E4169EE7",
    "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77",
    "0x27b1fdb04752bbc536007a920d24acb045561c26",
    HARDHAT_ADDRESS_0,
    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  ];
  for (const address of checksummed) {
    it(`checksums ${address} from lower and upper case`, () => {
      assert.equal(toChecksumAddress(address.toLowerCase()), address, "from lower case");
      assert.equal(toChecksumAddress(`0x${address.slice(2).toUpperCase()}`), address, "from upper case");
    });
  }
});

describe("isLowS", () => {
  const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;
  /** r ‖ s with r arbitrary: isLowS reads only s. */
  const compactOf = (s: bigint) => {
    const out = new Uint8Array(64).fill(0xab, 0, 32);
    out.set(hexToBytes(`0x${s.toString(16).padStart(64, "0")}`), 32);
    return out;
  };

  it("accepts exactly 0 < s ≤ n/2, at the edges and for any s (property, against BigInt)", () => {
    for (const [s, low] of [
      [0n, false],
      [1n, true],
      [HALF_N - 1n, true],
      [HALF_N, true],
      [HALF_N + 1n, false],
      [2n ** 256n - 1n, false],
      [2n ** 255n, false],
      [2n ** 248n, true],
    ] as const) {
      assert.equal(isLowS(compactOf(s)), low, `s = ${s.toString(16)}`);
    }
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), (s) => {
        assert.equal(isLowS(compactOf(s)), s > 0n && s <= HALF_N);
      }),
      { numRuns: 2_000 },
    );
    fc.assert(
      fc.property(fc.bigInt({ min: HALF_N - 2n ** 64n, max: HALF_N + 2n ** 64n }), (s) => {
        assert.equal(isLowS(compactOf(s)), s <= HALF_N);
      }),
      { numRuns: 2_000 },
    );
  });
});
