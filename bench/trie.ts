/**
 * The state trie alone (bench part `trie`, issue 20): StateTrie over an in-memory node table, fed
 * the leaf changes Chain.execute makes for blocks of 5,000 transfers (two balances, a nonce, the
 * transfer's value and result code), at 10,000 and at 1,000,000 funded accounts. No LMDB and no
 * transactions: bench/execution.ts measures those. Per transfer, the trie's time (apply and root,
 * the block's node records, commit) against keccak256 of the same block's new nodes hashed alone,
 * in the same run: how far the trie's own work lies above the hashing it cannot avoid.
 */
import {
  balancePath,
  buildStateTrie,
  type JsonValue,
  noncePath,
  rlpLength,
  type StateChanges,
  StateTrie,
  type TrieNodeReader,
} from "../src/chain/index.ts";
import { keccak256, keccakReady, toChecksumAddress } from "../src/crypto/index.ts";
import type { BenchContext } from "./context.ts";
import { type ScenarioResult, series } from "./report.ts";

const TXS_PER_BLOCK = 5_000;
const WARMUP_BLOCKS = 2;

/**
 * Trie node records by id, as the store keeps them: off the JavaScript heap, in chunks of bytes
 * (two million records in a Map would make every major GC mark them, which the node's LMDB
 * store does not), handed out as views the way LMDB hands out copies.
 */
class NodeTable implements TrieNodeReader {
  private static readonly CHUNK_BYTES = 64 * 1024 * 1024;
  private readonly chunks: Uint8Array[] = [new Uint8Array(NodeTable.CHUNK_BYTES)];
  private used = 0;
  /** Per id: chunk index, offset and length; ids are dense from 0 (Chain numbers them so). */
  private where = new Float64Array(3 * 1024 * 1024);
  private readonly roots = new Map<string, number>();
  private next = 0;

  getTrieNode = (id: number): Uint8Array | undefined => {
    if (id >= this.next || this.where[3 * id + 2] === 0) return undefined;
    const chunk = this.chunks[this.where[3 * id] as number] as Uint8Array;
    const at = this.where[3 * id + 1] as number;
    return chunk.subarray(at, at + (this.where[3 * id + 2] as number));
  };
  getTrieRoot = (rootHex: string) => this.roots.get(rootHex);
  nextTrieNodeId = () => this.next;

  store(
    nodes: Iterable<readonly [number, Uint8Array]>,
    root: { hash: string; id: number } | undefined,
  ): void {
    for (const [id, record] of nodes) {
      if (this.used + record.length > NodeTable.CHUNK_BYTES) {
        this.chunks.push(new Uint8Array(NodeTable.CHUNK_BYTES));
        this.used = 0;
      }
      while (3 * id + 3 > this.where.length) {
        const grown = new Float64Array(this.where.length * 2);
        grown.set(this.where);
        this.where = grown;
      }
      (this.chunks.at(-1) as Uint8Array).set(record, this.used);
      this.where.set([this.chunks.length - 1, this.used, record.length], 3 * id);
      this.used += record.length;
      this.next = Math.max(this.next, id + 1);
    }
    if (root !== undefined) this.roots.set(root.hash, root.id);
  }
}

interface BlockFigures {
  /** Trie time per transfer, µs. */
  trieUs: number;
  /** keccak256 of the block's new nodes alone, µs per transfer. */
  hashUs: number;
  nodesPerTransfer: number;
}

/** One size: genesis built in one pass, then `blocks` blocks of random transfers. */
function runSize(accounts: number, blocks: number): BlockFigures[] {
  const addresses = Array.from({ length: accounts }, (_, i) =>
    toChecksumAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`),
  );
  const balances = new Array<number>(accounts).fill(1e12);
  const nonces = new Array<number>(accounts).fill(0);
  const genesis = new Map<string, JsonValue>();
  for (const address of addresses) {
    genesis.set(balancePath(address), 1e12);
    genesis.set(noncePath(address), 0);
  }
  const table = new NodeTable();
  const built = buildStateTrie(genesis, 0);
  table.store(built.write.nodes, built.write.root);
  genesis.clear();
  const trie = new StateTrie(table, built.rootHex);
  const figures: BlockFigures[] = [];
  let seq = 0;
  for (let b = 0; b < blocks; b++) {
    const changes: StateChanges = new Map();
    for (let t = 0; t < TXS_PER_BLOCK; t++) {
      const from = Math.floor(Math.random() * accounts);
      const to = Math.floor(Math.random() * accounts);
      const fromAddress = addresses[from] as string;
      const toAddress = addresses[to] as string;
      nonces[from] = (nonces[from] as number) + 1;
      balances[from] = (balances[from] as number) - 1;
      balances[to] = (balances[to] as number) + 1;
      changes.set(noncePath(fromAddress), nonces[from] as number);
      changes.set(balancePath(fromAddress), balances[from] as number);
      changes.set(balancePath(toAddress), balances[to] as number);
      const ref = `/transfer/${fromAddress}/${toAddress}/${seq++}`;
      changes.set(`${ref}/value`, 1);
      changes.set(`${ref}/result/code`, 0);
    }
    const started = performance.now();
    void trie.apply(changes); // no pause given: it runs to the end before returning
    const write = trie.pendingWrite();
    const records = [...write.nodes];
    trie.markCommitted();
    const trieMs = performance.now() - started;
    const hashStarted = performance.now();
    for (const [, record] of records) keccak256(record.subarray(0, rlpLength(record)));
    const hashMs = performance.now() - hashStarted;
    table.store(records, write.root);
    figures.push({
      trieUs: (trieMs * 1000) / TXS_PER_BLOCK,
      hashUs: (hashMs * 1000) / TXS_PER_BLOCK,
      nodesPerTransfer: records.length / TXS_PER_BLOCK,
    });
  }
  return figures.slice(WARMUP_BLOCKS);
}

export async function trieScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  await keccakReady;
  const results: ScenarioResult[] = [];
  for (const accounts of [10_000, ctx.settings.execLargeAccounts]) {
    ctx.log(`trie: ${accounts.toLocaleString("en-US")} accounts, ${ctx.settings.execBlocks} blocks`);
    const figures = runSize(accounts, ctx.settings.execBlocks + WARMUP_BLOCKS);
    const trie = series(figures.map((f) => f.trieUs));
    const hash = series(figures.map((f) => f.hashUs));
    const nodes = series(figures.map((f) => f.nodesPerTransfer));
    ctx.log(
      `trie: ${trie.median.toFixed(1)} µs a transfer, its nodes' keccak ${hash.median.toFixed(1)} µs, ${nodes.median.toFixed(1)} nodes`,
    );
    results.push({
      id: `trie-${accounts}`,
      title: `state trie alone, ${accounts.toLocaleString("en-US")} accounts: µs per transfer (5 leaves), vs keccak of its new nodes`,
      unit: "µs",
      nodeLabel: "trie",
      baselineLabel: "µs (its new nodes' keccak alone)",
      node: trie,
      baseline: hash,
      ratio: trie.median / hash.median,
      details: {
        accounts,
        txsPerBlock: TXS_PER_BLOCK,
        newNodesPerTransfer: nodes.median,
        trieUsPerNewNode: trie.median / nodes.median,
      },
    });
  }
  return results;
}
