import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { hashHeader } from "../../src/chain/index.ts";
import {
  type Block,
  type BlockHeader,
  type Client,
  connect,
  type Hash,
  hashBlockHeader,
  MethodNotFoundError,
  type NodeMethods,
  type ProofFailureReason,
  type ProofResult,
  ProofVerificationError,
  type VerifiedReadOptions,
} from "../../src/client/index.ts";
import { getVerifiedValue } from "../../src/client/verifiedRead.ts";
import { toChecksumAddress } from "../../src/crypto/index.ts";
import type { TestNode } from "../helpers/testNode.ts";
import { accountAt } from "../rpc/support.ts";
import { buildState, proofResult, spreadLeaves, type TestState } from "./proofSupport.ts";
import { startClientNode, WAIT } from "./support.ts";

/**
 * getVerifiedValue: the header checked against its hash and a trusted hash, the proof against
 * the header. A fake node serves a state built with @ethereumjs/mpt and lies in one way at a time;
 * the header hash is checked against the chain's own hashHeader and against a real dev node.
 */

const ADDRESS = toChecksumAddress(`0x${"7e".repeat(20)}`);
const HASH32 = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((b) => `0x${Buffer.from(b).toString("hex")}`);

const headerArbitrary: fc.Arbitrary<BlockHeader> = fc.record({
  timestamp: fc.nat(),
  hash: fc.constant(""),
  parent_hash: fc.oneof(fc.constant(""), HASH32),
  number: fc.nat(),
  proposer: fc
    .uint8Array({ minLength: 20, maxLength: 20 })
    .map((b) => toChecksumAddress(`0x${Buffer.from(b).toString("hex")}`)),
  validators: fc.array(fc.constant(ADDRESS), { maxLength: 2 }),
  size: fc.nat(),
  transactions_hash: HASH32,
  state_root: HASH32,
  last_commit_hash: fc.oneof(fc.constant(""), HASH32),
});

describe("hashBlockHeader", () => {
  it("is the chain's hashHeader for any header", () => {
    fc.assert(
      fc.property(headerArbitrary, (header) => {
        const { hash: _, validators: __, ...hashed } = header;
        assert.equal(hashBlockHeader(header), hashHeader(hashed));
      }),
      { numRuns: 200 },
    );
  });
});

/** A block of height 7 whose state is `state`, hashed as the node hashes it. */
function blockOf(state: TestState): Block<Hash> {
  const header = {
    parent_hash: `0x${"01".repeat(32)}`,
    number: 7,
    timestamp: 1_767_000_000_000,
    proposer: ADDRESS,
    transactions_hash: `0x${"02".repeat(32)}`,
    state_root: state.root,
    last_commit_hash: `0x${"03".repeat(32)}`,
    size: 2,
  };
  return { ...header, hash: hashHeader(header), validators: [ADDRESS], transactions: [] };
}

/** The fake node's normalisation, enough for the paths used here (the node's own is in src/chain). */
const normalised = (ref: string): string => ref.replace(/\/+$/, "").replace(ADDRESS.toLowerCase(), ADDRESS);

type ProofMethods = Pick<NodeMethods, "getProof" | "getBlockByNumber" | "getBlockByHash">;

/** A node answering from `state` at height 7 (its head), which `lie` may change, and the calls it got. */
function fakeNode(
  state: TestState,
  lie: { block?: (b: Block<Hash>) => void; proof?: (p: ProofResult) => void } = {},
) {
  const block = blockOf(state);
  lie.block?.(block);
  const calls: string[] = [];
  const methods: ProofMethods = {
    getProof: async ({ ref, block_number }) => {
      calls.push(`getProof ${ref} ${block_number ?? "head"}`);
      const result = {
        ...(await proofResult(state, normalised(ref))),
        block_hash: blockOf(state).hash,
      };
      lie.proof?.(result);
      return result;
    },
    // `as never`: the real methods' results are generic in getFullTransactions; these blocks hold hashes.
    getBlockByNumber: async ({ number }) => {
      calls.push(`getBlockByNumber ${number}`);
      return (number === 7 ? block : null) as never;
    },
    getBlockByHash: async ({ hash }) => {
      calls.push(`getBlockByHash ${hash}`);
      return (hash === block.hash ? block : null) as never;
    },
  };
  return { methods, calls, block: blockOf(state) };
}

describe("getVerifiedValue", () => {
  const ref = `/users/${ADDRESS}/profile`;
  let state: TestState;
  before(async () => {
    const leaves = spreadLeaves(ref, { name: "ann", tags: ["a", "b"] });
    leaves.set(`/account/${ADDRESS}/balance`, 1000);
    state = await buildState(leaves);
  });

  it("reads a value, a subtree and an absence, at the head, at a height and at a trusted hash", async () => {
    const { methods, calls, block } = fakeNode(state);
    const head = await getVerifiedValue(methods, `${ref}/name`);
    assert.deepEqual(head, {
      ref: `${ref}/name`,
      value: "ann",
      block_number: 7,
      block_hash: block.hash,
      state_root: state.root,
    });
    assert.deepEqual(
      calls.splice(0),
      [`getProof ${ref}/name head`, "getBlockByNumber 7"],
      "the proof first, then its block",
    );

    const subtree = await getVerifiedValue(methods, ref, { block_number: 7 });
    assert.deepEqual(subtree.value, { name: "ann", tags: ["a", "b"] });
    assert.deepEqual(calls.splice(0), [`getProof ${ref} 7`, "getBlockByNumber 7"]);

    const trusted = await getVerifiedValue(methods, `/users/${ADDRESS.toLowerCase()}/none/`, {
      trusted_block_hash: block.hash.toUpperCase().replace("0X", "0x"),
    });
    assert.equal(trusted.value, null, "a proven absence");
    assert.equal(trusted.ref, `/users/${ADDRESS}/none`, "the path as the node normalises it");
    assert.deepEqual(calls.splice(0), [
      `getBlockByHash ${block.hash}`,
      `getProof /users/${ADDRESS.toLowerCase()}/none/ 7`,
    ]);
  });

  it("refuses a header, proof or path that does not match", async () => {
    const cases: Array<[ProofFailureReason, string, Parameters<typeof fakeNode>[1], VerifiedReadOptions?]> = [
      [
        "header_mismatch",
        "a header changed under its hash",
        { block: (b) => Object.assign(b, { timestamp: 1 }) },
      ],
      [
        "header_mismatch",
        "a header with another state root",
        { block: (b) => Object.assign(b, { state_root: `0x${"44".repeat(32)}` }) },
      ],
      [
        "header_mismatch",
        "a proof of another block",
        { proof: (p) => Object.assign(p, { block_hash: `0x${"55".repeat(32)}` }) },
      ],
      [
        "header_mismatch",
        "a proof of another height",
        { proof: (p) => Object.assign(p, { block_number: 6 }) },
        { block_number: 7 },
      ],
      [
        "header_mismatch",
        "a proof of another state root",
        { proof: (p) => Object.assign(p, { state_root: `0x${"66".repeat(32)}` }) },
      ],
      [
        "header_mismatch",
        "a block the node does not know",
        {},
        { trusted_block_hash: `0x${"77".repeat(32)}` },
      ],
      [
        "header_mismatch",
        "a trusted block at another height",
        {},
        { trusted_block_hash: blockOf(state).hash, block_number: 6 },
      ],
      ["ref_mismatch", "a proof of another path", { proof: (p) => Object.assign(p, { ref: `${ref}/tags` }) }],
      [
        "value_mismatch",
        "a value the proof does not show",
        { proof: (p) => Object.assign(p, { value: "bob" }) },
      ],
    ];
    for (const [reason, what, lie, options] of cases) {
      const { methods } = fakeNode(state, lie);
      await assert.rejects(
        getVerifiedValue(methods, `${ref}/name`, options),
        (error: unknown) => error instanceof ProofVerificationError && error.reason === reason,
        `${what}: ${reason}`,
      );
    }
    // The header is checked on its own too: a node's own block whose hash member is not its hash.
    const { methods } = fakeNode(state, { block: (b) => Object.assign(b, { hash: `0x${"88".repeat(32)}` }) });
    await assert.rejects(
      getVerifiedValue(methods, `${ref}/name`),
      /hashes to 0x[0-9a-f]{64}, not to its hash/,
    );
  });

  it("is a method of the client, over JSON-RPC", async () => {
    const { methods } = fakeNode(state);
    const table: Record<string, (params: never) => Promise<unknown>> = {
      chain_getProof: methods.getProof,
      chain_getBlockByNumber: methods.getBlockByNumber,
      chain_getBlockByHash: methods.getBlockByHash,
    };
    const fakeFetch: typeof fetch = async (_url, init) => {
      const call = JSON.parse(String(init?.body)) as { id: number; method: string; params: never };
      const result = await (table[call.method] ?? assert.fail(call.method))(call.params);
      return new Response(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
    };
    const client = connect("http://fake.invalid", { fetch: fakeFetch });
    const read = await client.getVerifiedValue(`/account/${ADDRESS}/balance`, {
      trusted_block_hash: blockOf(state).hash,
    });
    assert.equal(read.value, 1000);
  });
});

describe("verified reads from a dev node", () => {
  let t: TestNode;
  let client: Client;
  before(async () => {
    ({ t, client } = await startClientNode());
  });
  after(() => t?.stop());

  it("hashes every block header as the node does", async () => {
    const alice = client.wallet(accountAt(t, 1).privateKey);
    await client.waitForTransaction(await alice.setUserData("note", { text: "hi" }), WAIT);
    const blocks = await client.getBlocks({ from: 0, to: await client.getRecentBlockNumber() });
    assert.ok(blocks.length >= 2, `${blocks.length} blocks`);
    for (const block of blocks) assert.equal(hashBlockHeader(block), block.hash, `block ${block.number}`);
  });

  it("reads a value written by a transaction, proven against the block that holds it", async (context) => {
    const alice = client.wallet(accountAt(t, 2).privateKey);
    const tx = await client.waitForTransaction(
      await alice.setUserData("profile", { name: "ann", n: 1 }),
      WAIT,
    );
    let read: Awaited<ReturnType<Client["getVerifiedValue"]>>;
    try {
      read = await client.getVerifiedValue(`/users/${alice.address.toLowerCase()}/profile`, {
        trusted_block_hash: tx.block_hash,
      });
    } catch (error) {
      // chain_getProof is built beside this client (issue 18); until the node serves it, there is
      // nothing to read. Once it does, this runs against it.
      if (error instanceof MethodNotFoundError)
        return context.skip("the node does not serve chain_getProof yet");
      throw error;
    }
    assert.deepEqual(read.value, { name: "ann", n: 1 });
    assert.equal(read.block_hash, tx.block_hash);
    assert.equal(read.ref, `/users/${alice.address}/profile`);
    const absent = await client.getVerifiedValue(`/users/${alice.address}/nothing`, {
      block_number: tx.block_number,
    });
    assert.equal(absent.value, null);
  });
});
