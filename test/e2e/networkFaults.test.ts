import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type Evidence, recoverBodySigner, signBody, type VoteBody } from "../../src/consensus/index.ts";
import { hexToBytes } from "../../src/crypto/index.ts";
import { type PeerStatus, peerIdOf } from "../../src/p2p/index.ts";
import { P2PTestNet, type TestPeer } from "../helpers/p2pNet.ts";
import { rpc } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";
import { Testnet } from "../helpers/testnet.ts";

/**
 * Network faults against real `chain-node start` processes of a `chain-node testnet` (four
 * validators of equal stake, fast consensus timeouts): a byzantine validator that double-votes, peers
 * serving corrupted blocks to a syncing node, a validator with a skewed clock, and partitions.
 * Each describe starts and stops its own testnet (also on failure). Figures go to the test log
 * (`# figures …` lines) for docs/reliability.md.
 */

interface BlockJson {
  number: number;
  hash: string;
  state_root: string;
  timestamp: number;
  proposer: string;
  validators: string[];
}

const BLOCK_TIME_MS = 200;

function figures(what: string, values: Record<string, unknown>): void {
  process.stdout.write(`# figures ${what}: ${JSON.stringify(values)}\n`);
}

async function blocksOf(net: Testnet, index: number, from: number, to: number): Promise<BlockJson[]> {
  const blocks: BlockJson[] = [];
  for (let start = from; start <= to; start += 100) {
    const end = Math.min(to, start + 99);
    blocks.push(...(await rpc<BlockJson[]>(net.url(index), "chain_getBlocks", { from: start, to: end })));
  }
  return blocks;
}

/**
 * No two different block hashes at any height on any of `nodes` (each compared up to its own head);
 * returns the lowest head, up to which all of them hold every block.
 */
async function assertSameChain(net: Testnet, nodes: number[]): Promise<number> {
  const heads = await Promise.all(nodes.map((i) => net.head(i)));
  const chains = await Promise.all(nodes.map((i, k) => blocksOf(net, i, 1, heads[k] ?? 0)));
  const top = Math.max(...heads);
  for (let h = 1; h <= top; h++) {
    const hashes = new Set<string>();
    const roots = new Set<string>();
    for (const [k, chain] of chains.entries()) {
      const block = chain[h - 1];
      if (block === undefined) continue;
      assert.equal(block.number, h, `node${nodes[k]} block at index ${h - 1} is number ${h}`);
      hashes.add(block.hash);
      roots.add(block.state_root);
    }
    assert.ok(hashes.size <= 1, `one hash at height ${h}: ${[...hashes].join(", ")}`);
    assert.ok(roots.size <= 1, `one state root at height ${h}`);
  }
  return Math.min(...heads);
}

/** No validator of `nodes` signed two different messages at one height/round/step. */
function assertNoDoubleSigning(net: Testnet, nodes: number[]): number {
  let records = 0;
  for (const i of nodes) {
    const seen = new Map<string, string>();
    for (const record of net.signingLog(i)) {
      records += 1;
      const key = `${record.height}/${record.round}/${record.step}`;
      const body = JSON.stringify(record.body);
      assert.ok(!seen.has(key) || seen.get(key) === body, `node${i} signed two messages at ${key}`);
      seen.set(key, body);
    }
  }
  return records;
}

async function headsAbove(net: Testnet, nodes: number[], height: number, timeoutMs: number): Promise<void> {
  await waitFor(
    `nodes ${nodes.join(",")} above height ${height}`,
    async () =>
      (await Promise.all(nodes.map((i) => net.head(i)))).every((h) => h > height) ? true : undefined,
    timeoutMs,
  );
}

function homeOf(net: Testnet, index: number): string {
  const node = net.file.nodes[index];
  assert.ok(node, `node ${index}`);
  return node.home;
}

function validatorKey(net: Testnet, index: number): Uint8Array {
  const key = JSON.parse(readFileSync(join(homeOf(net, index), "keys", "validator.json"), "utf8")) as {
    private_key: string;
  };
  return hexToBytes(key.private_key);
}

function nodeKeyOf(net: Testnet, index: number): Uint8Array {
  const key = JSON.parse(readFileSync(join(homeOf(net, index), "keys", "node_key.json"), "utf8")) as {
    private_key: string;
  };
  return hexToBytes(key.private_key);
}

/** The p2p multiaddr of testnet node `index` (its port and the peer id of its node key). */
function p2pAddr(net: Testnet, index: number): string {
  const node = net.file.nodes[index];
  assert.ok(node);
  return `/ip4/127.0.0.1/tcp/${node.p2p_port}/p2p/${peerIdOf(nodeKeyOf(net, index))}`;
}

/** The status a peer of this testnet must show (chain, network, genesis) with a head of `head`. */
async function statusOf(net: Testnet, index: number, head = 0): Promise<PeerStatus> {
  const block = await rpc<{ hash: string }>(net.url(index), "chain_getBlockByNumber", { number: head });
  return {
    chain_id: net.file.chain_id,
    network_id: net.file.network_id,
    genesis_hash: (await rpc<{ hash: string }>(net.url(index), "chain_getBlockByNumber", { number: 0 })).hash,
    head_number: head,
    head_hash: block.hash,
  };
}

function evidenceOf(net: Testnet, index: number): Evidence[] {
  try {
    return readFileSync(join(homeOf(net, index), "data", "evidence.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Evidence);
  } catch {
    return [];
  }
}

describe("a byzantine validator that double-votes (processes + a raw peer)", { timeout: 90_000 }, () => {
  let net: Testnet | undefined;
  const peers = new P2PTestNet();
  after(async () => {
    await peers.stopAll();
    await net?.stopAll();
  });

  it("is detected and recorded as evidence; the three honest validators keep committing one chain", async () => {
    const started = Date.now();
    net = await Testnet.create(4, 0, BLOCK_TIME_MS);
    const testnet = net;
    const byzantine = testnet.file.nodes[3];
    assert.ok(byzantine);
    await Promise.all([0, 1, 2].map((i) => testnet.start(i)));
    const nodesUp = Date.now() - started;
    // Validator 3's node is never started. In its place, on its p2p port and with its node key
    // (so the honest validators' static peer list dials it), a peer holding its validator key
    // answers every proposal with two conflicting prevotes and two conflicting precommits.
    const key = validatorKey(testnet, 3);
    const voted = new Set<string>();
    let doubleVotes = 0;
    const doubleVote = (payload: unknown): void => {
      const proposal = (payload as { proposal?: { height: number; round: number; block_hash: string } })
        .proposal;
      if (proposal === undefined) return;
      const at = `${proposal.height}/${proposal.round}`;
      if (voted.has(at)) return;
      voted.add(at);
      const made = `0x${"ee".repeat(31)}${(proposal.height % 256).toString(16).padStart(2, "0")}`;
      const pairs: [VoteBody["type"], string, string][] = [
        ["prevote", proposal.block_hash, made],
        ["precommit", proposal.block_hash, ""],
      ];
      for (const [type, honest, other] of pairs) {
        // Alternate which one goes first, so nodes see either order.
        const hashes = proposal.height % 2 === 0 ? [honest, other] : [other, honest];
        for (const block_hash of hashes) {
          const vote: VoteBody = {
            type,
            chain_id: testnet.file.chain_id,
            height: proposal.height,
            round: proposal.round,
            block_hash,
          };
          byzantinePeer?.net.publish("votes", { vote, signature: signBody(vote, key) });
        }
      }
      doubleVotes += 1;
    };
    let byzantinePeer: TestPeer | undefined;
    byzantinePeer = await peers.start({
      status: await statusOf(testnet, 0),
      port: byzantine.p2p_port,
      nodeKey: nodeKeyOf(testnet, 3),
      bootstrap: [0, 1, 2].map((i) => p2pAddr(testnet, i)),
      verdict: (topic, payload) => {
        if (topic === "proposals") setImmediate(() => doubleVote(payload));
        return "accept";
      },
    });
    await waitFor(
      "the byzantine peer connected to the three honest validators",
      async () => (byzantinePeer?.net.peerCount() === 3 ? true : undefined),
      20_000,
    );
    const from = Math.max(...(await Promise.all([0, 1, 2].map((i) => testnet.head(i)))));
    const attackStarted = Date.now();
    const connectedAfter = attackStarted - started;
    await headsAbove(testnet, [0, 1, 2], from + 10, 45_000);
    const attackMs = Date.now() - attackStarted;
    await byzantinePeer.net.stop();

    const top = await assertSameChain(testnet, [0, 1, 2]);
    const signed = assertNoDoubleSigning(testnet, [0, 1, 2]);
    assert.ok(doubleVotes > 0, "the byzantine peer saw proposals and double-voted");

    const records: number[] = [];
    for (const i of [0, 1, 2]) {
      const evidence = evidenceOf(testnet, i);
      records.push(evidence.length);
      assert.ok(evidence.length > 0, `node${i} recorded the double votes as evidence`);
      for (const record of evidence) {
        assert.equal(record.validator, byzantine.address, `node${i}: evidence names validator 3 only`);
        const { first, second } = record;
        assert.equal(first.vote.height, second.vote.height, `node${i}: one height`);
        assert.equal(first.vote.round, second.vote.round, `node${i}: one round`);
        assert.equal(first.vote.type, second.vote.type, `node${i}: one step`);
        assert.notEqual(first.vote.block_hash, second.vote.block_hash, `node${i}: two different votes`);
        for (const signedVote of [first, second]) {
          assert.equal(
            recoverBodySigner(signedVote.vote, signedVote.signature),
            byzantine.address,
            `node${i}: the evidence is signed by validator 3`,
          );
        }
      }
      assert.match(testnet.output(i), /conflicting votes from a validator/, `node${i} logged the evidence`);
    }
    figures("byzantine double-voting", {
      heights_committed_under_attack: top - from,
      attack_ms: attackMs,
      double_votes_sent: doubleVotes,
      conflicting_messages_sent: doubleVotes * 4,
      evidence_records: records,
      honest_signing_records: signed,
      nodes_up_ms: nodesUp,
      peer_connected_ms: connectedAfter,
      total_ms: Date.now() - started,
    });
  });
});
