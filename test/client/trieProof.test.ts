import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createMerkleProof, createMPT, type MerklePatriciaTrie, verifyMerkleProof } from "@ethereumjs/mpt";
import { ProofVerificationError, type ProofFailureReason } from "../../src/client/index.ts";
import { decodeRlp, isRlpList } from "../../src/client/rlp.ts";
import { walkTrieProof } from "../../src/client/trieProof.ts";
import { bytesToHex, hexToBytes, keccak256 } from "../../src/crypto/index.ts";

/**
 * The trie walk on its own, with keys chosen by hand (a trie without key hashing, keys of 32
 * bytes like keccak digests): shared prefixes make extensions, tiny values make nodes under 32
 * bytes that their parents embed, which random hashed keys practically never do.
 */

/** A 32-byte key: `prefix` hex, then `fill` repeated. */
const key = (prefix: string, fill = "0"): Uint8Array =>
  hexToBytes(`0x${prefix}${fill.repeat(64 - prefix.length)}`);

async function trieOf(entries: readonly (readonly [Uint8Array, Uint8Array])[]): Promise<MerklePatriciaTrie> {
  const trie = await createMPT({});
  for (const [k, v] of entries) await trie.put(k, v);
  return trie;
}

/** What kind of node a proof ends in: where the walk found its answer. */
function lastNodeKind(proof: readonly Uint8Array[]): "branch" | "extension" | "leaf" {
  const node = decodeRlp(proof[proof.length - 1] as Uint8Array);
  assert.ok(isRlpList(node));
  if (node.items.length === 17) return "branch";
  const path = node.items[0] as Uint8Array;
  return (path[0] as number) >> 4 >= 2 ? "leaf" : "extension";
}

function fails(reason: ProofFailureReason, run: () => unknown, message: string): void {
  assert.throws(
    run,
    (error: unknown) => error instanceof ProofVerificationError && error.reason === reason,
    `${message}: fails with ${reason}`,
  );
}

/** Drops the proof elements that are embedded in their parent (go-ethereum's form of a proof). */
function withoutEmbedded(proof: readonly Uint8Array[]): Uint8Array[] {
  return proof.filter((node, i) => i === 0 || node.length >= 32);
}

describe("trie proof walk", () => {
  it("proves each key and the absences around it, where the key leaves an extension, a leaf or meets an empty slot", async () => {
    // Two keys share 10 nibbles: the root is an extension of them over a branch of two leaves.
    const a = key("0123456789a", "1");
    const b = key("0123456789b", "2");
    const value = (n: number): Uint8Array => new Uint8Array(40).fill(n); // big enough to be hashed, not embedded
    const trie = await trieOf([
      [a, value(1)],
      [b, value(2)],
    ]);
    const root = trie.root();
    for (const [k, v] of [
      [a, value(1)],
      [b, value(2)],
    ] as const) {
      const proof = await createMerkleProof(trie, k);
      assert.deepEqual(walkTrieProof(root, k, proof), v);
    }
    const absent = [
      { k: key("f"), ends: "extension" }, // leaves the shared path at its first nibble
      { k: key("0123456789c"), ends: "branch" }, // reaches the branch, whose slot c is empty
      { k: key("0123456789a", "3"), ends: "leaf" }, // reaches a's leaf, which holds another key
    ] as const;
    for (const { k, ends } of absent) {
      const proof = await createMerkleProof(trie, k);
      assert.equal(lastNodeKind(proof), ends, `the absence of ${bytesToHex(k)} ends in ${ends}`);
      assert.equal(walkTrieProof(root, k, proof), null, `${bytesToHex(k)} is proven absent`);
      assert.equal(await verifyMerkleProof(k, proof, { root }), null, "@ethereumjs/mpt agrees");
    }
  });

  it("follows nodes embedded in their parents, listed in the proof (@ethereumjs/mpt) or not (go-ethereum)", async () => {
    // Keys sharing 62 nibbles and one-byte values: leaves and the branch above them are under 32 bytes.
    const keys = ["1", "2", "3"].map((last) => key(`${"ab".repeat(31)}0${last}`));
    const trie = await trieOf(keys.map((k, i) => [k, Uint8Array.of(i + 1)] as const));
    const root = trie.root();
    let embeddedSeen = 0;
    for (const [i, k] of keys.entries()) {
      const proof = await createMerkleProof(trie, k);
      embeddedSeen += proof.length - withoutEmbedded(proof).length;
      assert.deepEqual(
        walkTrieProof(root, k, proof),
        Uint8Array.of(i + 1),
        `key ${i}, embedded nodes listed`,
      );
      assert.deepEqual(
        walkTrieProof(root, k, withoutEmbedded(proof)),
        Uint8Array.of(i + 1),
        `key ${i}, not listed`,
      );
    }
    assert.ok(embeddedSeen >= 3, `the proofs hold embedded nodes (${embeddedSeen})`);
    const absent = key(`${"ab".repeat(31)}04`);
    const proof = await createMerkleProof(trie, absent);
    assert.equal(walkTrieProof(root, absent, proof), null);
    assert.equal(walkTrieProof(root, absent, withoutEmbedded(proof)), null);

    // A listed embedded node must be the embedded one, byte for byte: changed, it is an extra node.
    const listed = await createMerkleProof(trie, keys[0] as Uint8Array);
    const lastIndex = listed.length - 1;
    assert.ok((listed[lastIndex] as Uint8Array).length < 32, "the proof ends in an embedded leaf");
    const changed = listed.map((node) => Uint8Array.from(node));
    const embedded = changed[lastIndex] as Uint8Array;
    embedded[2] = (embedded[2] as number) ^ 1;
    fails(
      "extra_nodes",
      () => walkTrieProof(root, keys[0] as Uint8Array, changed),
      "a changed embedded copy",
    );
  });

  it("proves absence in an empty trie, with no nodes or with the empty root node", async () => {
    const trie = await createMPT({});
    const root = trie.root();
    assert.equal(walkTrieProof(root, key("1"), []), null);
    assert.equal(walkTrieProof(root, key("1"), [Uint8Array.of(0x80)]), null);
    fails(
      "incomplete_proof",
      () => walkTrieProof(key("2"), key("1"), []),
      "no nodes for a trie that is not empty",
    );
  });

  it("refuses a node that hashes right but is no trie node where it stands", async () => {
    // Each of these is made the root (its own hash is the root), so only its shape is wrong.
    const bad: Array<[node: string, key: Uint8Array, why: string]> = [
      ["0xc0", key("0"), "a list of 0 items is no trie node"],
      ["0x8180", key("0"), "a byte string where a trie node belongs"],
      [`0xe3a120${"00".repeat(32)}80`, key("0"), "leaf without a byte-string value"],
      [`0xe2a020${"00".repeat(31)}01`, key("0"), "not 64 nibbles long"], // a leaf path of 62 nibbles
      ["0xc482001280", key("12"), "an extension without a child"],
      [`0xd1${"80".repeat(16)}01`, key("0"), "branch holding a value"],
      [`0xe3a150${"00".repeat(32)}01`, key("0"), "hex-prefix flag of 5"],
      [`0xe3a101${"00".repeat(32)}01`, key("0"), "even hex-prefix path with padding"],
      ["0xc98200008501020304ff", key("0"), "a child reference of 5 bytes"],
      [`0xe3820000df9e${"11".repeat(30)}`, key("0"), "an embedded node of 32 bytes or more"],
    ];
    for (const [node, k, why] of bad) {
      const bytes = hexToBytes(node);
      assert.throws(
        () => walkTrieProof(keccak256(bytes), k, [bytes]),
        (error: unknown) =>
          error instanceof ProofVerificationError &&
          error.reason === "malformed_node" &&
          error.message.includes(why),
        `${node}: ${why}`,
      );
    }
  });
});
