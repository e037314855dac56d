import type {
  BlockWrite,
  ChainStore,
  ConfirmedTx,
  JsonValue,
  StoredBlock,
  Validator,
} from "../../src/chain/index.ts";

/** A ChainStore in memory: commitBlock applies the whole write at once. */
export class MemoryStore implements ChainStore {
  readonly blocks = new Map<number, StoredBlock>();
  readonly numbers = new Map<string, number>();
  readonly txs = new Map<string, ConfirmedTx>();
  readonly state = new Map<string, JsonValue>();
  readonly trie = new Map<number, Uint8Array>();
  readonly trieRoots = new Map<string, number>();
  readonly stakes = new Map<string, number>();
  readonly validatorSets = new Map<number, Validator[]>();
  head: number | undefined;
  commits = 0;
  /** When set, the next commitBlock fails before writing anything (a crash or a full disk). */
  failNext = false;

  headNumber(): number | undefined {
    return this.head;
  }

  getBlock(number: number): StoredBlock | undefined {
    return this.blocks.get(number);
  }

  getBlockNumber(hash: string): number | undefined {
    return this.numbers.get(hash);
  }

  getConfirmedTx(hash: string): ConfirmedTx | undefined {
    return this.txs.get(hash);
  }

  getLeaf(path: string): JsonValue | undefined {
    return this.state.get(path);
  }

  *leafPathsBelow(path: string): Iterable<string> {
    for (const key of this.state.keys()) if (key.startsWith(`${path}/`)) yield key;
  }

  *stakers(): Iterable<Validator> {
    for (const [address, stake] of this.stakes) yield { address, stake };
  }

  validatorSetAt(height: number): Validator[] | undefined {
    let found: number | undefined;
    for (const from of this.validatorSets.keys())
      if (from <= height && (found === undefined || from > found)) found = from;
    return found === undefined ? undefined : this.validatorSets.get(found);
  }

  getTrieNode(id: number): Uint8Array | undefined {
    return this.trie.get(id);
  }

  getTrieRoot(rootHex: string): number | undefined {
    return this.trieRoots.get(rootHex);
  }

  nextTrieNodeId(): number {
    let next = 0;
    for (const id of this.trie.keys()) next = Math.max(next, id + 1);
    return next;
  }

  async commitBlock(write: BlockWrite): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error("disk full");
    }
    // Copy everything: the chain may reuse its maps after the promise resolves.
    const block = structuredClone(write.block);
    this.blocks.set(block.header.number, block);
    if (write.parent !== undefined)
      this.blocks.set(write.parent.header.number, structuredClone(write.parent));
    this.numbers.set(block.hash, block.header.number);
    for (const confirmed of write.txs) this.txs.set(confirmed.tx.hash, structuredClone(confirmed));
    for (const [path, value] of write.stateChanges) {
      if (value === null) this.state.delete(path);
      else this.state.set(path, structuredClone(value));
    }
    for (const [id, record] of write.trie.nodes) this.trie.set(id, record.slice());
    if (write.trie.root !== undefined) this.trieRoots.set(write.trie.root.hash, write.trie.root.id);
    for (const [address, stake] of write.stakeChanges) {
      if (stake === 0) this.stakes.delete(address);
      else this.stakes.set(address, stake);
    }
    if (write.validatorSet !== undefined) {
      this.validatorSets.set(write.validatorSet.fromHeight, structuredClone(write.validatorSet.validators));
    }
    this.head = block.header.number;
    this.commits += 1;
  }
}
