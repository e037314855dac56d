import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Chain, type Tx, verifySignedTx } from "../../../src/chain/index.ts";
import {
  inlineVerifier,
  type SignatureVerifier,
  type SignedHashJob,
  signObject,
} from "../../../src/crypto/index.ts";
import {
  type BlockSource,
  BlockSync,
  type SyncBlock,
  type SyncOptions,
  serveBlocks,
} from "../../../src/sync/index.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";
import { withTempDir } from "../../helpers/tempDir.ts";
import { turnsWhile } from "../../helpers/turns.ts";
import { SIM_CHAIN_ID, SimNetwork } from "../../helpers/consensusNet.ts";

/** Peers backed by the stores of simulated validators; `corrupt` rewrites what one serves. */
function sourceOf(
  net: SimNetwork,
  corrupt: Record<string, (block: SyncBlock) => SyncBlock> = {},
): BlockSource & { penalized: string[] } {
  const penalized: string[] = [];
  return {
    penalized,
    peers: () => net.nodes.map((n) => ({ id: `peer${n.index}`, head: n.chain.head().header.number })),
    requestBlocks: async (peer, from, to) => {
      const node = net.nodes[Number(peer.slice(4))];
      assert.ok(node);
      const blocks = [...serveBlocks(node.store, from, to, 5)];
      const rewrite = corrupt[peer];
      return rewrite === undefined ? blocks : blocks.map(rewrite);
    },
    penalize: (peer) => penalized.push(peer),
  };
}

async function freshChain(net: SimNetwork): Promise<{ chain: Chain; store: MemoryStore }> {
  const store = new MemoryStore();
  const chain = new Chain(store, net.genesis);
  await chain.open();
  return { chain, store };
}

function syncOf(chain: Chain, source: BlockSource, extra: Partial<SyncOptions> = {}): BlockSync {
  return new BlockSync(chain, source, {
    chainId: SIM_CHAIN_ID,
    maxTxBytes: 100 * 1024,
    batch: 5,
    exclusive: (task) => task(),
    pool: { removeCommitted: () => undefined },
    log: () => undefined,
    ...extra,
  });
}

/**
 * A sync (ranges of 5) over `source` that records, in order, each request (`ask <from>`, and the
 * peer asked) and each commit (`commit <number>`); `answer` may change what a peer returns.
 */
function recordingSync(
  chain: Chain,
  source: BlockSource,
  answer: (blocks: unknown[]) => unknown[] = (blocks) => blocks,
) {
  const events: string[] = [];
  const asked: { peer: string; from: number }[] = [];
  const requestBlocks = source.requestBlocks;
  source.requestBlocks = async (peer, from, to) => {
    events.push(`ask ${from}`);
    asked.push({ peer, from });
    return answer(await requestBlocks(peer, from, to));
  };
  const sync = syncOf(chain, source, { onBlock: (block) => events.push(`commit ${block.header.number}`) });
  return { sync, events, asked };
}

/** Unordered transfers from the first non-validator account, as block-form transactions. */
function transfers(net: SimNetwork, count: number): Tx[] {
  const sender = net.accounts[net.accounts.length - 1];
  const to = net.accounts[0];
  assert.ok(sender && to);
  return Array.from({ length: count }, (_, i) => {
    const transaction = {
      nonce: -1,
      timestamp: Date.now(),
      operation: {
        type: "SET_VALUE",
        ref: `/transfer/${sender.address}/${to.address}/s${i}/value`,
        value: 1,
      },
    };
    const input = {
      signature: signObject(transaction, Buffer.from(sender.privateKey.slice(2), "hex"), SIM_CHAIN_ID),
      transaction,
    };
    return verifySignedTx(input as never, { chainId: SIM_CHAIN_ID, maxTxBytes: 100 * 1024 });
  });
}

describe("BlockSync", () => {
  const net = new SimNetwork(4);
  before(async () => {
    await net.start();
    const txs = transfers(net, 30);
    for (const node of net.nodes) node.pool.txs.push(...txs);
    const deadline = Date.now() + 15_000;
    while (Math.min(...net.heads()) < 12 || net.nodes.some((n) => n.pool.txs.length > 0)) {
      assert.ok(Date.now() < deadline, "validators reach height 12");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await Promise.all(net.nodes.map((n) => n.engine.stop())); // a fixed chain to sync from
  });
  after(() => net.stop());

  it("catches up to the peers' head, verifying certificates and state roots", async () => {
    const { chain, store } = await freshChain(net);
    const sync = syncOf(chain, sourceOf(net));
    assert.equal(sync.syncing(), true, "not known to be synced before hearing from peers");
    await sync.trigger();
    const target = Math.max(...net.heads());
    assert.ok(chain.head().header.number >= target - 1, `reached ${chain.head().header.number} of ${target}`);
    const reference = net.nodes[0]?.store;
    for (let h = 1; h <= chain.head().header.number; h++) {
      assert.equal(chain.validatorsAt(h).length, 4);
      assert.equal(reference?.getBlock(h)?.hash, store.getBlock(h)?.hash);
    }
    assert.equal(sync.syncing(), false);
  });

  it("asks for the next range while it executes the one it has, and uses that answer", async () => {
    const { chain } = await freshChain(net);
    const { sync, events, asked } = recordingSync(chain, sourceOf(net));
    const requested = asked.map((a) => a.from);
    await sync.trigger();
    assert.ok(chain.head().header.number >= 11, `reached ${chain.head().header.number}`);
    // Ranges of 5: blocks 6.. are asked for before block 5 (the last of the first range) commits.
    assert.ok(events.indexOf("ask 6") < events.indexOf("commit 5"), events.join(", "));
    assert.ok(events.indexOf("ask 11") < events.indexOf("commit 10"), events.join(", "));
    assert.equal(new Set(requested).size, requested.length, `each range asked once: ${requested.join(",")}`);
  });

  it("asks two ranges ahead, of different peers", async () => {
    const { chain } = await freshChain(net);
    const { sync, events, asked } = recordingSync(chain, sourceOf(net));
    await sync.trigger();
    assert.ok(chain.head().header.number >= 11, `reached ${chain.head().header.number}`);
    assert.ok(events.indexOf("ask 11") < events.indexOf("commit 1"), events.join(", "));
    assert.deepEqual(
      asked.slice(0, 3).map((a) => a.peer),
      ["peer0", "peer1", "peer2"],
      "spread over the peers",
    );
  });

  it("lets the event loop turn between blocks (peer messages and RPC calls do not wait for a range)", async () => {
    const { chain } = await freshChain(net);
    const sync = syncOf(chain, sourceOf(net));
    let headAtFirstTurn: number | undefined;
    setImmediate(() => {
      headAtFirstTurn = chain.head().header.number;
    });
    await sync.trigger();
    const head = chain.head().header.number;
    assert.ok(head >= 11, `reached ${head}`);
    assert.ok(
      headAtFirstTurn !== undefined && headAtFirstTurn < head,
      `the first turn came at head ${headAtFirstTurn}, the sync ended at ${head}`,
    );
  });

  it("executes each block in slices with executionSliceMs (a syncing node's), in one piece without", async () => {
    for (const executionSliceMs of [undefined, 0]) {
      const { chain } = await freshChain(net);
      const turns: number[] = [];
      const executeProposed = chain.executeProposed.bind(chain);
      chain.executeProposed = async (...args) => {
        const executing = executeProposed(...args);
        turns.push(await turnsWhile(executing, () => undefined));
        return executing;
      };
      await syncOf(
        chain,
        sourceOf(net),
        executionSliceMs === undefined ? {} : { executionSliceMs },
      ).trigger();
      assert.ok(chain.head().header.number >= 11, "synced");
      if (executionSliceMs === undefined)
        assert.ok(
          turns.every((t) => t === 0),
          `turns ${turns.join(" ")}`,
        );
      else
        assert.ok(
          turns.some((t) => t > 0),
          "no turn ran inside a block's execution",
        );
    }
  });

  it("tells the pool of each synced block's transactions after the block commits, before onBlock", async () => {
    const { chain, store } = await freshChain(net);
    const events: string[] = [];
    const removed: string[] = [];
    const sync = syncOf(chain, sourceOf(net), {
      pool: {
        removeCommitted: (hashes) => {
          assert.ok(
            hashes.every((hash) => store.getConfirmedTx(hash) !== undefined),
            "committed first",
          );
          removed.push(...hashes);
          events.push(`pool ${chain.head().header.number}`);
        },
      },
      onBlock: (block) => events.push(`block ${block.header.number}`),
    });
    await sync.trigger();
    const head = chain.head().header.number;
    const txs = Array.from({ length: head }, (_, i) => store.getBlock(i + 1)?.tx_hashes ?? []).flat();
    assert.ok(txs.length >= 30, `the synced blocks hold the transfers (${txs.length})`);
    assert.deepEqual(removed, txs);
    assert.deepEqual(events.slice(0, 4), ["pool 1", "block 1", "pool 2", "block 2"]);
  });

  it("hands each range to commitTogether with one step per block, so the store can end a write between two", async () => {
    const { chain } = await freshChain(net);
    const calls: number[][] = [];
    const commitTogether = chain.commitTogether.bind(chain);
    chain.commitTogether = (items, step) => {
      const numbers: number[] = [];
      calls.push(numbers);
      return commitTogether(items, async (item) => {
        const before = chain.head().header.number;
        const goOn = await step(item);
        assert.equal(chain.head().header.number, before + 1, "a step applies one block");
        numbers.push(chain.head().header.number);
        return goOn;
      });
    };
    await syncOf(chain, sourceOf(net)).trigger();
    const head = chain.head().header.number;
    assert.ok(head >= Math.max(...net.heads()) - 1, `reached ${head}`);
    // Ranges of 5 (few transactions: one group each), each block applied once.
    assert.deepEqual(calls[0], [1, 2, 3, 4, 5]);
    assert.deepEqual(
      calls.flat(),
      Array.from({ length: head }, (_, i) => i + 1),
    );
  });

  it("on LMDB, a journal write that arrives while a range is applied is durable before the range's end", () =>
    withTempDir("sync-journal", async (dir) => {
      const store = new LmdbStore(dir);
      try {
        const chain = new Chain(store, net.genesis);
        await chain.open();
        const events: string[] = [];
        const tx = transfers(net, 1)[0] as Tx;
        let journaled: Promise<void> | undefined;
        // Block 4 of the same range executes only once the submission is journaled: with the
        // journal held until the range's write ends, the sync would wait here for good.
        const executeProposed = chain.executeProposed.bind(chain);
        chain.executeProposed = async (block, ...rest) => {
          if (block.header.number === 4) {
            let timer: NodeJS.Timeout | undefined;
            const late = new Promise<never>((_, reject) => {
              timer = setTimeout(() => reject(new Error("not journaled within 10 s of block 2")), 10_000);
            });
            await Promise.race([journaled, late]).finally(() => clearTimeout(timer));
          }
          return executeProposed(block, ...rest);
        };
        const sync = syncOf(chain, sourceOf(net), {
          onBlock: (block) => {
            events.push(`commit ${block.header.number}`);
            // A submission arrives while block 2 of the range 1-5 is applied.
            if (block.header.number === 2) {
              journaled = store.journal.savePending([{ seq: 0, tx }]).then(() => {
                events.push("journaled");
              });
            }
          },
        });
        await sync.trigger();
        await journaled;
        const head = chain.head().header.number;
        assert.ok(head >= Math.max(...net.heads()) - 1, `reached ${head}`);
        const at = events.indexOf("journaled");
        assert.ok(at > events.indexOf("commit 2") && at < events.indexOf("commit 4"), events.join(", "));
        assert.deepEqual(
          events.filter((e) => e !== "journaled"),
          Array.from({ length: head }, (_, i) => `commit ${i + 1}`),
          "every block applied once, in order",
        );
        assert.deepEqual(
          store.journal.loadPending().map((r) => r.tx.hash),
          [tx.hash],
        );
      } finally {
        await store.close();
      }
    }));

  it("asks for the rest of a range cut short before it applies the part it got", async () => {
    const { chain } = await freshChain(net);
    // As peers whose answers the message limit cuts after two blocks.
    const { sync, events } = recordingSync(chain, sourceOf(net), (blocks) => blocks.slice(0, 2));
    await sync.trigger();
    assert.ok(
      chain.head().header.number >= Math.max(...net.heads()) - 1,
      `reached ${chain.head().header.number}`,
    );
    assert.ok(events.indexOf("ask 3") < events.indexOf("commit 1"), events.join(", "));
    assert.ok(events.indexOf("ask 5") < events.indexOf("commit 3"), events.join(", "));
  });

  it("drops a peer that serves a wrong state root or a forged certificate, and finishes from the others", async () => {
    const { chain } = await freshChain(net);
    const source = sourceOf(net, {
      peer0: (b) => ({ ...b, header: { ...b.header, state_root: `0x${"0".repeat(64)}` } }),
      peer1: (b) => ({ ...b, commit: { ...b.commit, signatures: b.commit.signatures.slice(0, 1) } }),
      peer2: () => ({ junk: true }) as unknown as SyncBlock,
    });
    await syncOf(chain, source).trigger();
    assert.deepEqual(source.penalized.sort(), ["peer0", "peer1", "peer2"]);
    assert.ok(chain.head().header.number >= Math.max(...net.heads()) - 1, "synced from peer3");
  });

  it("checks transaction signatures on the verifier, and still refuses a block with a forged one", async () => {
    const jobs: SignedHashJob[] = [];
    const counting: SignatureVerifier = {
      verify: (batch) => {
        jobs.push(...batch);
        return inlineVerifier.verify(batch);
      },
      close: async () => undefined,
    };
    const committedTxs = net.nodes[0]?.blocks.reduce((n, b) => n + b.tx_hashes.length, 0) ?? 0;
    assert.ok(committedTxs >= 30, `the chain holds the transfers (${committedTxs})`);
    const forge = (b: SyncBlock): SyncBlock => {
      const [first, ...rest] = b.txs;
      if (first === undefined) return b;
      // Same shape, another signer: the predicate must not vouch for it, the block check must refuse it.
      const other = net.accounts[1];
      assert.ok(other);
      return { ...b, txs: [{ ...first, address: other.address }, ...rest] };
    };
    const { chain, store } = await freshChain(net);
    const source = sourceOf(net, { peer0: forge, peer1: forge, peer2: forge });
    await syncOf(chain, source, { verifier: counting }).trigger();
    // Ranges are spread over the peers, so a forger whose ranges held no transfer is never
    // caught; each one caught served a forged block, and the honest peer never is.
    assert.ok(source.penalized.length > 0, "a forged block was refused");
    assert.ok(
      source.penalized.every((peer) => ["peer0", "peer1", "peer2"].includes(peer)),
      source.penalized.join(","),
    );
    const head = chain.head().header.number;
    assert.ok(head >= Math.max(...net.heads()) - 1, "synced from peer3");
    for (let h = 1; h <= head; h++)
      assert.equal(store.getBlock(h)?.hash, net.nodes[3]?.store.getBlock(h)?.hash);
    assert.ok(jobs.length >= 30, `signatures went to the verifier (${jobs.length})`);
  });
});
