import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  assertNoDoubleSigning,
  assertSameChain,
  blocksOf,
  headsAbove,
  sendRoundRobin,
} from "../helpers/chainChecks.ts";
import { CONSENSUS_STEPS, stepTotalsOf } from "../helpers/consensusSteps.ts";
import { rpc } from "../helpers/process.ts";
import { signTx, type TxBodyInput, transferBody, waitFor } from "../helpers/testNode.ts";
import { Testnet } from "../helpers/testnet.ts";

/**
 * Real `chain-node start` processes of a `chain-node testnet`: four validators of equal stake and
 * one full node, on 127.0.0.1. The steps build on each other (one network, one chain).
 */

const BLOCK_TIME_MS = 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const TRIE_THREAD = { CHAIN_NODE_STORAGE_TRIE_THREAD: "true" };

describe("a network of four validators and a late full node (processes)", { timeout: 240_000 }, () => {
  let net: Testnet;
  before(async () => {
    net = await Testnet.create(4, 1, BLOCK_TIME_MS);
    // Validator 0 serves /metrics (its consensus step times are checked below). Validator 1 and
    // the late full node keep their trie on a thread of its own (storage.trie_thread, off by
    // default on a network node): proposals, commits and sync's ranges through the thread.
    await Promise.all(
      [0, 1, 2, 3].map((i) =>
        net.start(
          i,
          i === 0 ? { env: { CHAIN_NODE_RPC_METRICS: "true" } } : i === 1 ? { env: TRIE_THREAD } : {},
        ),
      ),
    );
  });
  after(() => net?.stopAll());

  it("commits transfers submitted round-robin to all four; all agree at every height", async () => {
    const hashes = await sendRoundRobin(net, [0, 1, 2, 3], { count: 12, amount: 5, tag: "rr" });
    for (const hash of hashes) {
      await waitFor(
        `${hash} committed on all four`,
        async () => {
          const found = await Promise.all(
            [0, 1, 2, 3].map((i) =>
              rpc<{ block_number?: number } | null>(net.url(i), "chain_getTransactionByHash", { hash }),
            ),
          );
          return found.every((tx) => tx?.block_number !== undefined) ? true : undefined;
        },
        30_000,
      );
    }
    const top = await assertSameChain(net, [0, 1, 2, 3]);
    assert.ok(top > 0);
    assert.equal(
      ((await rpc(net.url(0), "net_peerCount")) as number) >= 3,
      true,
      "each validator sees the other three",
    );
    assert.equal(await rpc(net.url(0), "net_listening"), true);
    // Each part of a height it decided is in its metrics (consensus_step_duration_seconds).
    const steps = stepTotalsOf(await (await fetch(`${net.url(0)}/metrics`)).text());
    for (const step of CONSENSUS_STEPS) {
      assert.ok((steps[step]?.count ?? 0) >= 1, `${step} observed: ${JSON.stringify(steps)}`);
    }
  });

  it("keeps committing with one of four stopped", async () => {
    await net.stop(3);
    const head = await net.head(0);
    await headsAbove(net, [0, 1, 2], head + 3, 30_000);
    await assertSameChain(net, [0, 1, 2]);
  });

  it("commits nothing with two of four stopped, and resumes within 30 s when one returns", async () => {
    await net.stop(2);
    await sleep(3 * BLOCK_TIME_MS + 1000); // a block in flight may still land
    const frozen = await Promise.all([0, 1].map((i) => net.head(i)));
    await sleep(4000);
    assert.deepEqual(await Promise.all([0, 1].map((i) => net.head(i))), frozen, "no progress without 2/3");
    const returned = Date.now();
    await net.start(2);
    await headsAbove(net, [0, 1, 2], Math.max(...frozen), 30_000);
    assert.ok(Date.now() - returned < 30_000);
    await net.start(3);
    await assertSameChain(net, [0, 1, 2]);
  });

  it("a validator killed with SIGKILL restarts, catches up, and no validator ever signed twice", async () => {
    await net.kill(1);
    const head = await net.head(0);
    await headsAbove(net, [0, 2, 3], head + 2, 30_000);
    await net.start(1, { env: TRIE_THREAD });
    const target = await net.head(0);
    await headsAbove(net, [1], target, 30_000);
    await assertSameChain(net, [0, 1, 2, 3]);
    const records = assertNoDoubleSigning(net, [0, 1, 2, 3]);
    assert.ok(records > 0, "the signing logs hold the votes");
  });

  it("a full node started late syncs (net_syncing true, then false; /ready 503, then 200) to the validators' head, acknowledging submissions meanwhile", async () => {
    await headsAbove(net, [0], 200, 120_000);
    const [from, to] = net.file.accounts;
    assert.ok(from && to);
    // Sample net_syncing and GET /ready from the moment the process can answer, until it has caught up.
    const answers: boolean[] = [];
    const readies: { status: number; syncing: boolean }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        try {
          const ready = await fetch(`${net.url(4)}/ready`, { signal: AbortSignal.timeout(10_000) });
          const body = (await ready.json()) as { syncing: boolean };
          readies.push({ status: ready.status, syncing: body.syncing });
          answers.push(await rpc<boolean>(net.url(4), "net_syncing"));
        } catch {
          // not serving yet
        }
        await sleep(20);
      }
    })();
    // A wallet's submissions to it while it syncs, one at a time: each is acknowledged (a range's
    // write and a journal write once hung the node for good, docs/decisions/006).
    const submitted: { hash: string; whileSyncing: boolean }[] = [];
    const failed: string[] = [];
    const submitter = (async () => {
      while (sampling) {
        const whileSyncing = answers.at(-1) === true;
        if (answers.length > 0) {
          const body = transferBody(from.address, to.address, 1, -1, `while-syncing-${submitted.length}`);
          const signed = signTx(from.private_key, body, net.file.chain_id);
          try {
            submitted.push({
              hash: await rpc<string>(net.url(4), "chain_sendSignedTransaction", signed),
              whileSyncing,
            });
          } catch (error) {
            failed.push(String(error));
          }
        }
        await sleep(25);
      }
    })();
    try {
      await net.start(4, { env: TRIE_THREAD });
      await waitFor(
        "the full node to catch up",
        async () => ((await net.head(4)) >= (await net.head(0)) - 1 ? true : undefined),
        60_000,
      );
      await waitFor("net_syncing false", async () => (answers.at(-1) === false ? true : undefined), 30_000);
    } finally {
      sampling = false; // the loops end, also when the node did not catch up
      await Promise.all([sampler, submitter]);
    }
    assert.deepEqual(failed, [], "every submission while it synced was acknowledged");
    assert.equal(answers[0], true, "its first answer is syncing: true");
    assert.ok(
      submitted.some((s) => s.whileSyncing),
      `acknowledged while syncing: ${submitted.filter((s) => s.whileSyncing).length} of ${submitted.length}`,
    );
    assert.equal(answers.at(-1), false, "then false once caught up");
    assert.equal(readies[0]?.status, 503, "not ready while it syncs");
    const readyWhileSyncing = readies.filter((r) => r.syncing && r.status !== 503);
    assert.deepEqual(readyWhileSyncing, [], "never ready while syncing");
    await waitFor(
      "GET /ready 200 once caught up",
      async () => ((await fetch(`${net.url(4)}/ready`)).status === 200 ? true : undefined),
      10_000,
    );
    await assertSameChain(net, [0, 4]);

    // The full node never proposes: a transaction submitted to it reaches the proposers by gossip.
    const signed = signTx(
      from.private_key,
      transferBody(from.address, to.address, 3, -1, "via-full"),
      net.file.chain_id,
    );
    const hash = await rpc<string>(net.url(4), "chain_sendSignedTransaction", signed);
    await waitFor(
      "the full node's transaction in a block",
      async () => {
        const tx = await rpc<{ block_number?: number } | null>(net.url(0), "chain_getTransactionByHash", {
          hash,
        });
        return tx?.block_number === undefined ? undefined : true;
      },
      30_000,
    );
    // And so did those it acknowledged while it synced.
    await waitFor(
      "the transactions acknowledged during the sync in blocks",
      async () => {
        for (const { hash } of submitted) {
          const tx = await rpc<{ block_number?: number } | null>(net.url(0), "chain_getTransactionByHash", {
            hash,
          });
          if (tx?.block_number === undefined) return undefined;
        }
        return true;
      },
      30_000,
    );
  });

  it("an account that stakes becomes a validator after the delay and signs; after unstaking it is removed", async () => {
    const fullNode = net.file.nodes[4];
    const funder = net.file.accounts[0];
    assert.ok(fullNode && funder);
    const key = JSON.parse(readFileSync(join(fullNode.home, "keys", "validator.json"), "utf8")) as {
      private_key: string;
    };
    const { chain_id } = net.file;
    const send = async (privateKey: string, body: TxBodyInput) => {
      const hash = await rpc<string>(
        net.url(0),
        "chain_sendSignedTransaction",
        signTx(privateKey, body, chain_id),
      );
      return waitFor(
        `${hash} committed`,
        async () => {
          const tx = await rpc<{ block_number?: number; result?: { code: number } } | null>(
            net.url(0),
            "chain_getTransactionByHash",
            { hash },
          );
          return tx?.block_number === undefined ? undefined : tx;
        },
        30_000,
      );
    };
    const stake = (amount: number, tag: string) => ({
      nonce: -1,
      operation: { type: "SET_VALUE", ref: `/staking/${fullNode.address}/${tag}/value`, value: amount },
    });
    await send(funder.private_key, transferBody(funder.address, fullNode.address, 2_000_000, -1, "fund"));
    assert.equal(await rpc(net.url(0), "chain_isValidator", { address: fullNode.address }), false);

    const staked = await send(key.private_key, stake(1_000_000, "join"));
    assert.deepEqual(staked.result, { code: 0 });
    assert.equal(
      await rpc(net.url(1), "chain_getConsensusStakeAmount", { address: fullNode.address }),
      1_000_000,
    );
    await waitFor(
      "the staker to be a validator",
      async () =>
        (await rpc(net.url(2), "chain_isValidator", { address: fullNode.address })) === true
          ? true
          : undefined,
      15_000,
    );
    const from = staked.block_number as number;
    await waitFor(
      "a commit signed by the new validator",
      async () => {
        const head = await net.head(0);
        const blocks = await blocksOf(net, 0, from, head);
        return blocks.some((b) => b.validators.includes(fullNode.address)) ? true : undefined;
      },
      30_000,
    );

    const unstaked = await send(key.private_key, stake(-1_000_000, "leave"));
    assert.deepEqual(unstaked.result, { code: 0 });
    await waitFor(
      "the staker to leave the set",
      async () =>
        (await rpc(net.url(3), "chain_isValidator", { address: fullNode.address })) === false
          ? true
          : undefined,
      15_000,
    );
    const left = (unstaked.block_number as number) + 2;
    await headsAbove(net, [0], left + 3, 30_000);
    const later = await blocksOf(net, 0, left + 1, left + 3);
    assert.ok(
      later.every((b) => !b.validators.includes(fullNode.address)),
      "no commit counts it any more",
    );
    await assertSameChain(net, [0, 1, 2, 3, 4]);
  });
});
