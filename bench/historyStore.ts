/**
 * The history bench's store (bench/history.ts): an LmdbStore filled through `commitBlock` with
 * synthetic blocks of valid-shaped committed transfers (no execution: the index only reads each
 * transaction's sender, path and result), and the node's own RPC routes over it.
 *
 * The mix: 100,000 accounts; each transaction is a transfer, and three hot accounts take a large
 * share: one sends 10 % of all transactions, one receives 10 %, one sends 4 % and receives 4 %.
 * At 1,000,000 transactions that is about 100,000, 100,000 and 80,000 entries for them, about 15
 * for an ordinary account, and about 2,000,000 index entries in all (a sender and a recipient per
 * transfer).
 */
import { type BlockWrite, type ConfirmedTx, StateReads, type StoredBlock } from "../src/chain/index.ts";
import { toChecksumAddress } from "../src/crypto/index.ts";
import { createLogger } from "../src/node/index.ts";
import {
  createRoutes,
  defaultRpcServerOptions,
  type RpcChainView,
  RpcServer,
  type Route,
} from "../src/rpc/index.ts";
import type { LmdbStore } from "../src/storage/index.ts";
import { seededRandom } from "../test/helpers/seededRandom.ts";

const ACCOUNTS = 100_000;
const T0 = 1_700_000_000_000;
const SIGNATURE = `0x${"ab".repeat(97)}`;

const addresses: string[] = [];
/** Account `i`'s checksum address (made once, then cached). */
export function accountAddress(i: number): string {
  addresses[i] ??= toChecksumAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`);
  return addresses[i] as string;
}

export const HOT = {
  sender: accountAddress(0),
  receiver: accountAddress(1),
  both: accountAddress(2),
} as const;

const hex32 = (n: number, tag: number) =>
  `0x${tag.toString(16).padStart(8, "0")}${n.toString(16).padStart(56, "0")}`;

/** Commits blocks 1.. of `txsPerBlock` transfers each until `totalTxs`; returns the blocks made. */
export async function fillStore(
  store: LmdbStore,
  totalTxs: number,
  txsPerBlock: number,
  onBlock: (number: number) => void = () => {},
): Promise<number> {
  const random = seededRandom(18);
  const anyone = () => accountAddress(2 + Math.floor(random() * (ACCOUNTS - 2)));
  let made = 0;
  let parent = hex32(0, 0xb);
  for (let number = 1; made < totalTxs; number++) {
    const hash = hex32(number, 0xb);
    const txs: ConfirmedTx[] = [];
    for (let index = 0; index < txsPerBlock && made < totalTxs; index++, made++) {
      const r = random();
      const [from, to] =
        r < 0.1
          ? [HOT.sender, anyone()]
          : r < 0.2
            ? [anyone(), HOT.receiver]
            : r < 0.24
              ? [HOT.both, anyone()]
              : r < 0.28
                ? [anyone(), HOT.both]
                : [anyone(), anyone()];
      txs.push({
        tx: {
          hash: hex32(made, 0x7),
          address: from,
          signature: SIGNATURE,
          timestamp: T0 + number * 1000,
          nonce: -1,
          operation: { type: "SET_VALUE", ref: `/transfer/${from}/${to}/k${made}/value`, value: 1 },
        },
        block_number: number,
        block_hash: hash,
        index,
        result: { code: 0 },
      });
    }
    const block: StoredBlock = {
      header: {
        parent_hash: parent,
        number,
        timestamp: T0 + number * 1000,
        proposer: accountAddress(3),
        transactions_hash: hex32(number, 0xc),
        state_root: hex32(number, 0xd),
        last_commit_hash: hex32(number, 0xe),
        size: 0,
      },
      hash,
      tx_hashes: txs.map((confirmed) => confirmed.tx.hash),
      validators: [accountAddress(3)],
      commit: null,
    };
    const write: BlockWrite = {
      block,
      txs,
      journalRemovals: [],
      stateChanges: new Map(),
      trie: { nodes: [], retired: [] },
      stakeChanges: new Map(),
    };
    await store.commitBlock(write);
    parent = hash;
    onBlock(number);
  }
  return store.headNumber() ?? 0;
}

/** The node's RPC routes over a store that only reads: no pool, no peers. */
export function readOnlyRoutes(store: LmdbStore): Map<string, Route> {
  const chain: RpcChainView = {
    headNumber: () => store.headNumber() ?? 0,
    getBlock: (number) => store.getBlock(number),
    blocksFrom: () => store.blocksFrom(),
    getBlockNumber: (hash) => store.getBlockNumber(hash),
    getConfirmedTx: (hash) => store.getConfirmedTx(hash),
    balanceOf: () => 0,
    stakeOf: () => 0,
    nonceOf: () => 0,
    isValidator: () => false,
    addressHistory: (address, query) => store.addressHistory(address, query),
  };
  const refuse = () => Promise.reject(new Error("the history bench's server takes no transactions"));
  return createRoutes({
    chain,
    // The state reads are the store's own; the bench asks for history only.
    state: new StateReads(store, { maxValueLeaves: 10_000, maxProofLeaves: 256 }),
    pool: { submit: refuse, submitBatch: refuse, pending: () => [], getPending: () => undefined },
    network: {
      listening: () => false,
      peerCount: () => 0,
      syncing: () => false,
      networkId: () => 0,
      chainId: () => 0,
      nodeInfo: () => ({ name: "history-bench", location: "", version: "bench" }),
    },
    limits: { maxBlockRange: 100, maxBatchItems: 100 },
  });
}

/** Serves `routes` over HTTP with the node's server and its default limits, on 127.0.0.1:`port`. */
export async function serveRoutes(routes: Map<string, Route>, port: number): Promise<RpcServer> {
  const server = new RpcServer(routes, { ...defaultRpcServerOptions, port }, createLogger("silent"));
  await server.listen();
  return server;
}
