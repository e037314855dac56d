import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Chain, type Genesis, type StoredBlock, type Tx } from "../../src/chain/index.ts";
import {
  ChainConsensusHost,
  type ConsensusMessage,
  type ConsensusTimeouts,
  ConsensusSigner,
  type Evidence,
  readSigningLog,
  type SignedRecord,
  TendermintEngine,
} from "../../src/consensus/index.ts";
import { type DerivedAccount, deriveAccounts, hexToBytes } from "../../src/crypto/index.ts";
import { BlockSync, serveBlocks } from "../../src/sync/index.ts";
import { MemoryStore } from "./memoryStore.ts";

/**
 * N validators, each a real Chain + TendermintEngine + signing log, joined by an in-memory bus
 * that delivers every broadcast asynchronously to the others. Nodes can be taken down (they
 * neither send nor receive) and brought back.
 */

export const SIM_CHAIN_ID = 7;
export const FAST_TIMEOUTS: ConsensusTimeouts = {
  proposeMs: 300,
  proposeDeltaMs: 100,
  voteMs: 150,
  voteDeltaMs: 50,
  commitMs: 30,
  // Below the block time: proposers holding transactions propose early (and others follow).
  busyBlockMs: 15,
  rebroadcastMs: 250,
};

class ListPool {
  txs: Tx[] = [];
  get size(): number {
    return this.txs.length;
  }
  selectForBlock(): Tx[] {
    return [...this.txs];
  }
  removeCommitted(hashes: readonly string[]): void {
    const gone = new Set(hashes);
    this.txs = this.txs.filter((tx) => !gone.has(tx.hash));
  }
  holds(tx: Tx): boolean {
    return this.txs.some((t) => t.hash === tx.hash && t.signature === tx.signature);
  }
}

export interface SimNode {
  index: number;
  account: DerivedAccount;
  store: MemoryStore;
  chain: Chain;
  pool: ListPool;
  engine: TendermintEngine;
  signer: ConsensusSigner;
  logPath: string;
  up: boolean;
  evidence: Evidence[];
  blocks: StoredBlock[];
  sync: BlockSync;
}

/** Decides whether a message from one node reaches another (true: deliver). */
export type DeliveryFilter = (from: SimNode, to: SimNode, message: ConsensusMessage) => boolean;

export class SimNetwork {
  readonly nodes: SimNode[] = [];
  readonly accounts: DerivedAccount[];
  readonly genesis: Genesis;
  private readonly dir: string;
  /** Drops what it returns false for; tests use it to make a node miss messages. */
  filter: DeliveryFilter = () => true;

  constructor(validators: number, stakes?: number[]) {
    this.accounts = deriveAccounts(
      "test test test test test test test test test test test junk",
      validators + 2,
    );
    this.dir = mkdtempSync(join(tmpdir(), "chain-node-sim-"));
    this.genesis = {
      chain_id: SIM_CHAIN_ID,
      network_id: 0,
      genesis_time: Date.now() - 1000,
      accounts: this.accounts.map((a) => ({ address: a.address, balance: 1_000_000 })),
      validators: this.accounts
        .slice(0, validators)
        .map((a, i) => ({ address: a.address, stake: stakes?.[i] ?? 1_000 })),
      consensus: {
        block_time_ms: FAST_TIMEOUTS.commitMs,
        min_validator_stake: 100,
        max_validators: 10,
        max_block_txs: 100,
        max_block_bytes: 1024 * 1024,
        max_tx_bytes: 100 * 1024,
      },
    };
  }

  async start(): Promise<void> {
    for (let index = 0; index < this.genesis.validators.length; index++) {
      const account = this.accounts[index] as DerivedAccount;
      const store = new MemoryStore();
      const chain = new Chain(store, this.genesis);
      await chain.open();
      const pool = new ListPool();
      const logPath = join(this.dir, `signed-${index}.jsonl`);
      const signer = ConsensusSigner.open(logPath, hexToBytes(account.privateKey));
      const node = {
        index,
        account,
        store,
        chain,
        pool,
        signer,
        logPath,
        up: true,
        evidence: [],
        blocks: [],
      } as Omit<SimNode, "engine" | "sync"> as SimNode;
      const host = new ChainConsensusHost({
        chain,
        pool,
        address: account.address,
        chainId: SIM_CHAIN_ID,
        maxTxBytes: 100 * 1024,
        buildBudgetMs: FAST_TIMEOUTS.proposeMs / 3,
        network: {
          broadcast: (message) => this.deliver(node, message),
          onBehind: (height) => void node.sync.trigger(height - 1),
        },
        events: {
          onBlock: (block) => node.blocks.push(block),
          onEvidence: (evidence) => node.evidence.push(evidence),
          log: () => undefined,
        },
      });
      node.engine = new TendermintEngine(host, { chainId: SIM_CHAIN_ID, timeouts: FAST_TIMEOUTS, signer });
      // Sync from the other nodes that are up, as p2p would serve it.
      const peersOf = () => this.nodes.filter((n) => n !== node && n.up && node.up);
      node.sync = new BlockSync(
        chain,
        {
          peers: () => peersOf().map((n) => ({ id: String(n.index), head: n.chain.head().header.number })),
          requestBlocks: async (peer, from, to) => {
            const source = this.nodes[Number(peer)];
            return source === undefined ? [] : structuredClone([...serveBlocks(source.store, from, to, 20)]);
          },
          penalize: () => undefined,
        },
        {
          chainId: SIM_CHAIN_ID,
          maxTxBytes: 100 * 1024,
          batch: 20,
          exclusive: (task) => node.engine.exclusive(task),
          pool,
          log: () => undefined,
        },
      );
      this.nodes.push(node);
    }
    for (const node of this.nodes) node.engine.start();
  }

  /** Sends as `from` to every other node that is up (used by tests to inject messages too). */
  deliver(from: SimNode, message: ConsensusMessage): void {
    if (!from.up) return;
    for (const to of this.nodes) {
      if (to === from || !to.up || !this.filter(from, to, message)) continue;
      const copy = structuredClone(message);
      setImmediate(() => {
        if (to.up) to.engine.receive(copy);
      });
    }
  }

  /** Delivers a message as if from outside (a byzantine validator the test plays). */
  inject(message: ConsensusMessage): void {
    for (const to of this.nodes) {
      if (!to.up) continue;
      const copy = structuredClone(message);
      setImmediate(() => to.engine.receive(copy));
    }
  }

  heads(): number[] {
    return this.nodes.map((n) => n.chain.head().header.number);
  }

  signingLog(node: SimNode): SignedRecord[] {
    return readSigningLog(readFileSync(node.logPath, "utf8"));
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.sync.stop()));
    await Promise.all(this.nodes.map((n) => n.engine.stop()));
    for (const n of this.nodes) n.signer.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
