import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { verifyMerkleProof } from "@ethereumjs/mpt";
import fc from "fast-check";
import {
  type JsonValue,
  type ProofFailureReason,
  type ProofLeaf,
  type ProofResult,
  ProofVerificationError,
  verifyProof,
} from "../../src/client/index.ts";
import { decodeRlp, isRlpList } from "../../src/client/rlp.ts";
import {
  bytesToHex,
  canonicalJson,
  hexToBytes,
  keccak256,
  toChecksumAddress,
  utf8Bytes,
} from "../../src/crypto/index.ts";
import {
  buildState,
  copyResult,
  proofNodes,
  proofResult,
  rebuild,
  seededRandom,
  spreadLeaves,
  type TestState,
} from "./proofSupport.ts";

/**
 * verifyProof against tries built by @ethereumjs/mpt, the reference implementation of the node's
 * state (useKeyHashing: keys keccak256(utf8(path)), values utf8(canonical JSON)): every leaf and
 * every absence verifies, and any change to a proof or to what it claims fails.
 */

const ADDRESS = toChecksumAddress(`0x${"5a".repeat(10)}${"c3".repeat(10)}`);

function fails(reason: ProofFailureReason | undefined, run: () => unknown, message: string): void {
  assert.throws(
    run,
    (error: unknown) => {
      assert.ok(
        error instanceof ProofVerificationError,
        `${message}: a ProofVerificationError, got ${String(error)}`,
      );
      if (reason !== undefined) assert.equal(error.reason, reason, `${message}: ${error.message}`);
      return true;
    },
    `${message}: does not verify`,
  );
}

const sameJson = (actual: JsonValue, expected: JsonValue, message: string): void =>
  assert.equal(canonicalJson(actual), canonicalJson(expected), message);

/** Where a proof ends: the node the walk found its answer in. */
function lastNodeKind(proof: readonly string[]): "branch" | "extension" | "leaf" {
  const node = decodeRlp(hexToBytes(proof[proof.length - 1] as string));
  assert.ok(isRlpList(node));
  if (node.items.length === 17) return "branch";
  return ((node.items[0] as Uint8Array)[0] as number) >> 4 >= 2 ? "leaf" : "extension";
}

/** The same check with @ethereumjs/mpt's verifier: the bytes it proves for the path. */
async function referenceValue(root: string, ref: string, proof: readonly string[]): Promise<JsonValue> {
  const bytes = await verifyMerkleProof(utf8Bytes(ref), proof.map(hexToBytes), {
    useKeyHashing: true,
    root: hexToBytes(root),
  });
  return bytes === null ? null : (JSON.parse(new TextDecoder().decode(bytes)) as JsonValue);
}

/** Every leaf and object path of a state (each object is a subtree result). */
function objectPaths(leaves: Iterable<string>): Set<string> {
  const paths = new Set<string>();
  for (const leaf of leaves) {
    for (let cut = leaf.lastIndexOf("/"); cut > 0; cut = leaf.lastIndexOf("/", cut - 1))
      paths.add(leaf.slice(0, cut));
  }
  return paths;
}

// Path segments as object keys allow them (no "/", not empty); `__proto__` is tested on its own.
const segment = fc.stringMatching(/^[A-Za-z0-9_.$-]{1,6}$/).filter((s) => s !== "__proto__");
const leafValue: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 8, unit: "grapheme" }),
  fc.boolean(),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null)), { maxLength: 3 }),
);
const { tree } = fc.letrec<{ tree: JsonValue }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small" },
    leafValue,
    fc.dictionary(segment, tie("tree"), { minKeys: 1, maxKeys: 4, noNullPrototype: true }),
  ),
}));

describe("verifyProof", () => {
  describe("tiny tries", () => {
    it("a trie of one leaf: its value, and absences", async () => {
      const ref = `/users/${ADDRESS}/name`;
      const state = await buildState([[ref, "ann"]]);
      const result = await proofResult(state, ref);
      assert.equal(result.proof.length, 1, "the root is the leaf");
      assert.equal(verifyProof(state.root, result), "ann");
      for (const absent of [`/users/${ADDRESS}/nam`, "/a", `/users/${ADDRESS}/name/x`]) {
        const proof = await proofResult(state, absent);
        assert.equal(lastNodeKind(proof.proof), "leaf");
        assert.equal(verifyProof(state.root, proof), null, `${absent} is absent`);
      }
    });

    it("a trie of two leaves, and the empty trie", async () => {
      const state = await buildState([
        ["/a", 1],
        ["/b", [true, "x"]],
      ]);
      sameJson(verifyProof(state.root, await proofResult(state, "/a")), 1, "/a");
      sameJson(verifyProof(state.root, await proofResult(state, "/b")), [true, "x"], "/b");
      assert.equal(verifyProof(state.root, await proofResult(state, "/c")), null);
      const empty = await buildState([]);
      const result = await proofResult(empty, "/a");
      assert.deepEqual(result.proof, []);
      assert.equal(verifyProof(empty.root, result), null);
    });
  });

  it("random states: every leaf, every subtree and random absent paths verify, as @ethereumjs/mpt says", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(segment, tree, { minKeys: 1, maxKeys: 5, noNullPrototype: true }),
        fc.array(segment, { minLength: 1, maxLength: 4 }),
        async (data, absentSegments) => {
          const top = `/users/${ADDRESS}`;
          const leaves = spreadLeaves(top, data);
          fc.pre(leaves.size > 0);
          const state = await buildState(leaves);
          for (const [ref, value] of leaves) {
            const result = await proofResult(state, ref);
            sameJson(verifyProof(state.root, result), value, ref);
            sameJson(await referenceValue(state.root, ref, result.proof), value, `${ref} (@ethereumjs/mpt)`);
          }
          for (const ref of objectPaths(leaves.keys())) {
            if (ref === "/users") continue;
            const result = await proofResult(state, ref);
            assert.ok(result.leaves !== undefined, `${ref} is a subtree`);
            sameJson(verifyProof(state.root, result), result.value, ref);
          }
          const absent = `/users/${ADDRESS}/absent!/${absentSegments.join("/")}`;
          assert.equal(verifyProof(state.root, await proofResult(state, absent)), null, absent);
        },
      ),
      { numRuns: 25 },
    );
  });

  describe("a state of 3,000 leaves", () => {
    let state: TestState;
    let present: string[];
    before(async () => {
      const random = seededRandom(18);
      const leaves = new Map<string, JsonValue>();
      for (let i = 0; leaves.size < 3_000; i++) {
        const address = toChecksumAddress(
          bytesToHex(keccak256(utf8Bytes(`account ${i % 700}`)).subarray(12)),
        );
        const value =
          random() < 0.5 ? Math.floor(random() * 1e9) : { text: `v${i}`, list: [i, random() < 0.5] };
        spreadLeaves(`/users/${address}/item${i}`, value, leaves);
      }
      state = await buildState(leaves);
      present = [...leaves.keys()].filter((_, i) => i % 30 === 0);
    });

    it("proves 100 leaves and 100 absences, as @ethereumjs/mpt does", async () => {
      for (const ref of present) {
        const result = await proofResult(state, ref);
        assert.ok(result.proof.length >= 3, `${ref}: a proof through several levels`);
        sameJson(verifyProof(state.root, result), state.leaves.get(ref) as JsonValue, ref);
      }
      for (let i = 0; i < 100; i++) {
        const ref = `/users/${ADDRESS}/missing${i}`;
        const result = await proofResult(state, ref);
        assert.equal(verifyProof(state.root, result), null, ref);
        assert.equal(await referenceValue(state.root, ref, result.proof), null, `${ref} (@ethereumjs/mpt)`);
      }
    });

    it("fails for a proof with any one byte changed, in any node (exhaustively, for four proofs)", async () => {
      const refs = [
        present[0] as string,
        present[50] as string,
        "/users/absent",
        `/users/${ADDRESS}/missing`,
      ];
      let flips = 0;
      for (const ref of refs) {
        const result = await proofResult(state, ref);
        for (const [n, node] of result.proof.entries()) {
          const bytes = hexToBytes(node);
          for (let i = 0; i < bytes.length; i++) {
            for (const mask of [0x01, 0x80]) {
              const changed = Uint8Array.from(bytes);
              changed[i] = (changed[i] as number) ^ mask;
              const tampered = copyResult(result);
              tampered.proof[n] = bytesToHex(changed);
              // Every byte is under a hash (the root's, or its parent's reference), so no change can
              // pass, not even in a part of the node the walk does not follow.
              fails(
                undefined,
                () => verifyProof(state.root, tampered),
                `${ref}: node ${n}, byte ${i} ^ ${mask}`,
              );
              flips += 1;
            }
          }
        }
      }
      assert.ok(flips > 5_000, `${flips} changes tried`);
    });

    it("fails for a wrong value, ref or root, and for a truncated, extended or reordered proof", async () => {
      const result = await proofResult(state, present[10] as string);
      const other = await proofResult(state, present[11] as string);
      const absent = await proofResult(state, "/users/none");
      const wrongRoot = `0x${"11".repeat(32)}`;
      // Each change as an expression (what it returns is ignored).
      const cases: Array<
        [ProofFailureReason | undefined, string, (r: ProofResult) => unknown, ProofResult?]
      > = [
        ["value_mismatch", "another value", (r) => Object.assign(r, { value: 12345 })],
        ["value_mismatch", "null for a leaf", (r) => Object.assign(r, { value: null })],
        ["value_mismatch", "a value for an absence", (r) => Object.assign(r, { value: 0 }), absent],
        [undefined, "another leaf's ref", (r) => Object.assign(r, { ref: other.ref })],
        [
          "root_mismatch",
          "the result names another root",
          (r) => Object.assign(r, { state_root: wrongRoot }),
        ],
        ["incomplete_proof", "the last node dropped", (r) => r.proof.pop()],
        ["incomplete_proof", "no nodes", (r) => r.proof.splice(0)],
        ["extra_nodes", "the last node twice", (r) => r.proof.push(r.proof.at(-1) as string)],
        ["extra_nodes", "another proof's node appended", (r) => r.proof.push(other.proof[1] as string)],
        [undefined, "nodes reversed", (r) => r.proof.reverse()],
        [
          "hash_mismatch",
          "two nodes swapped",
          (r) => r.proof.splice(1, 2, r.proof[2] as string, r.proof[1] as string),
        ],
        ["hash_mismatch", "a node of another path", (r) => r.proof.splice(1, 1, other.proof[1] as string)],
        ["malformed_result", "a node that is not hex", (r) => r.proof.splice(0, 1, "0xzz")],
        ["malformed_result", "an empty node", (r) => r.proof.splice(0, 1, "0x")],
      ];
      for (const [reason, what, change, base = result] of cases) {
        const tampered = copyResult(base);
        change(tampered);
        fails(reason, () => verifyProof(state.root, tampered), what);
      }
      fails(
        "root_mismatch",
        () => verifyProof(wrongRoot, { ...result, state_root: wrongRoot }),
        "a root the proof is not of",
      );
    });
  });

  it("proves absences where the hashed key leaves an extension, meets an empty branch slot, or reaches another key's leaf", async () => {
    // Two paths whose keys share their first nibble: the root is an extension over a branch.
    const nibble = (path: string): number => (keccak256(utf8Bytes(path))[0] as number) >> 4;
    const first = "/k/0";
    let second = "";
    for (let i = 1; second === ""; i++) if (nibble(`/k/${i}`) === nibble(first)) second = `/k/${i}`;
    const state = await buildState([
      [first, "first"],
      [second, "second"],
    ]);
    assert.equal(lastNodeKind(await proofNodes(state, first)), "leaf");
    const seen = new Set<string>();
    for (let i = 0; seen.size < 3 && i < 20_000; i++) {
      const ref = `/absent/${i}`;
      const result = await proofResult(state, ref);
      const kind = lastNodeKind(result.proof);
      if (seen.has(kind)) continue;
      seen.add(kind);
      assert.equal(verifyProof(state.root, result), null, `${ref} is proven absent in a ${kind}`);
      assert.equal(await referenceValue(state.root, ref, result.proof), null, `${ref} (@ethereumjs/mpt)`);
    }
    assert.deepEqual([...seen].sort(), ["branch", "extension", "leaf"], "each kind of absence was met");
  });

  describe("subtrees", () => {
    const top = `/users/${ADDRESS}`;
    let state: TestState;
    let result: ProofResult;
    before(async () => {
      const data = { a: { x: 1, y: "s" }, b: [1, 2], c: { d: { e: true } } };
      const leaves = spreadLeaves(top, data);
      leaves.set("/users/other", 5); // beside the subtree, for a leaf from outside it
      state = await buildState(leaves);
      result = await proofResult(state, top);
    });
    const leavesOf = (r: ProofResult) => r.leaves ?? assert.fail("a subtree result");

    it("rebuild the object from their leaves", async () => {
      sameJson(
        verifyProof(state.root, result),
        { a: { x: 1, y: "s" }, b: [1, 2], c: { d: { e: true } } },
        top,
      );
      sameJson(verifyProof(state.root, await proofResult(state, `${top}/a`)), { x: 1, y: "s" }, `${top}/a`);
      assert.deepEqual(
        leavesOf(result).map((leaf) => leaf.ref),
        [`${top}/a/x`, `${top}/a/y`, `${top}/b`, `${top}/c/d/e`],
      );
    });

    it("fail for a missing, extra, repeated, unsorted or tampered leaf", async () => {
      const asLeaf = ({ ref, proof }: ProofResult, value: JsonValue): ProofLeaf => ({ ref, value, proof });
      const outside = asLeaf(await proofResult(state, "/users/other"), 5);
      const fake = asLeaf(await proofResult(state, `${top}/z`), 1);
      const flipLastDigit = (hex: string): string => hex.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
      const cases: Array<[ProofFailureReason, string, (r: ProofResult, leaves: ProofLeaf[]) => unknown]> = [
        ["value_mismatch", "a leaf left out of the list only", (_, leaves) => leaves.splice(1, 1)],
        ["ref_mismatch", "a leaf from outside", (_, leaves) => leaves.push(outside)],
        ["value_mismatch", "a leaf that is not in the state", (_, leaves) => leaves.push(fake)],
        ["malformed_result", "a leaf twice", (_, leaves) => leaves.push(leaves[3] as ProofLeaf)],
        ["malformed_result", "leaves unsorted", (_, leaves) => leaves.reverse()],
        [
          "value_mismatch",
          "a leaf's value changed",
          (_, leaves) => Object.assign(leaves[0] as ProofLeaf, { value: 2 }),
        ],
        [
          "malformed_result",
          "an object as a leaf",
          (_, leaves) => Object.assign(leaves[0] as ProofLeaf, { value: { x: 1 } }),
        ],
        [
          "value_mismatch",
          "the value without some leaves",
          (r) => Object.assign(r, { value: { a: { x: 1, y: "s" } } }),
        ],
        ["malformed_result", "an empty list of leaves", (_, leaves) => leaves.splice(0)],
        [
          "root_mismatch",
          "a byte of a leaf's proof",
          (_, leaves) => {
            const proof = (leaves[2] as ProofLeaf).proof;
            proof[0] = flipLastDigit(proof[0] as string);
          },
        ],
      ];
      for (const [reason, what, change] of cases) {
        const tampered = copyResult(result);
        change(tampered, tampered.leaves ?? assert.fail("a subtree result"));
        fails(reason, () => verifyProof(state.root, tampered), what);
      }
      const leaf = await proofResult(state, `${top}/b`);
      fails(
        "value_mismatch",
        () => verifyProof(state.root, { ...leaf, leaves: leavesOf(result) }),
        "leaves below a leaf",
      );
    });

    it("do not prove completeness: a leaf left out of both the list and the value goes unnoticed (documented)", () => {
      const incomplete = copyResult(result);
      incomplete.leaves = leavesOf(result).filter((leaf) => !leaf.ref.endsWith("/b"));
      incomplete.value = rebuild(result.ref, incomplete.leaves);
      sameJson(
        verifyProof(state.root, incomplete),
        { a: { x: 1, y: "s" }, c: { d: { e: true } } },
        "verifies without /b",
      );
    });

    it("refuse a leaf below another leaf, which no state the node writes holds", async () => {
      const odd = await buildState([
        ["/u/a", 1],
        ["/u/a/b", 2],
      ]);
      const leaves = [
        { ref: "/u/a", value: 1, proof: await proofNodes(odd, "/u/a") },
        { ref: "/u/a/b", value: 2, proof: await proofNodes(odd, "/u/a/b") },
      ];
      const subtree = { ...(await proofResult(odd, "/u/x")), ref: "/u", proof: await proofNodes(odd, "/u") };
      fails(
        "malformed_result",
        () => verifyProof(odd.root, { ...subtree, value: { a: 1 }, leaves }),
        "/u/a and /u/a/b",
      );
    });

    it("keep a member named __proto__ as an ordinary member", async () => {
      const sub = `${top}/p`;
      const odd = await buildState([[`${sub}/__proto__/polluted`, 1]]);
      // As it comes off the wire: JSON.parse keeps __proto__ as an own member.
      const wire = JSON.parse(JSON.stringify(await proofResult(odd, sub))) as ProofResult;
      assert.equal(JSON.stringify(wire.value), '{"__proto__":{"polluted":1}}');
      const value = verifyProof(odd.root, wire) as Record<string, JsonValue>;
      assert.ok(Object.hasOwn(value, "__proto__"), "an own member");
      assert.equal(({} as Record<string, unknown>).polluted, undefined, "no prototype was touched");
    });
  });

  describe("leaf bytes and result shape", () => {
    it("refuses a leaf whose bytes are not canonical JSON", async () => {
      const { createMPT, createMerkleProof } = await import("@ethereumjs/mpt");
      for (const text of ["1.0", '{"b":1,"a":2}', " 1", "\uFEFF1", "nope"]) {
        const trie = await createMPT({ useKeyHashing: true });
        await trie.put(utf8Bytes("/x"), utf8Bytes(text));
        const proof = (await createMerkleProof(trie, utf8Bytes("/x"))).map(bytesToHex);
        const root = bytesToHex(trie.root());
        const result = { block_number: 1, block_hash: root, state_root: root, ref: "/x", value: 1, proof };
        fails("malformed_node", () => verifyProof(root, result), JSON.stringify(text));
      }
    });

    it("refuses a result whose ref is not normalised, or whose shape is not the agreed one", async () => {
      const lower = `/users/${ADDRESS.toLowerCase()}/name`;
      const state = await buildState([[lower, "x"]]);
      const result = await proofResult(state, lower);
      fails("malformed_result", () => verifyProof(state.root, result), "an address not in checksum form");
      const good = await proofResult(state, "/a");
      const broken: Array<[string, unknown]> = [
        ["null", null],
        ["no proof", { ...good, proof: undefined }],
        ["a proof of numbers", { ...good, proof: [1] }],
        ["a negative height", { ...good, block_number: -1 }],
        ["a short state root", { ...good, state_root: "0x12" }],
        ["no value", { ...good, value: undefined }],
        ["leaves that are no list", { ...good, leaves: {} }],
        ["a leaf without a proof", { ...good, leaves: [{ ref: "/a/b", value: 1 }] }],
      ];
      for (const [what, value] of broken) {
        const shaped =
          what === "no value"
            ? Object.fromEntries(Object.entries(value as object).filter(([k]) => k !== "value"))
            : value;
        fails("malformed_result", () => verifyProof(state.root, shaped as ProofResult), what);
      }
      assert.throws(
        () => verifyProof("0x1234", good),
        TypeError,
        "a state root that is not 32 bytes is the caller's mistake",
      );
    });
  });
});
