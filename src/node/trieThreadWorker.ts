/**
 * The trie thread (trieThread.ts): holds the state's Merkle-Patricia trie (StateTrie) and does a
 * block's trie work for the chain, one message at a time, in the order they were sent. Committed
 * nodes are read from the store's environment (shared with the node's other threads).
 */
import { parentPort, workerData } from "node:worker_threads";
import { StateTrie, type TrieWrite } from "../chain/index.ts";
import { keccakReady } from "../crypto/index.ts";
import { openSharedTrieNodes, packSpans } from "../storage/index.ts";
import { FAILED, type PackedTrieWrite, type TrieReply, type TrieRequest } from "./trieThread.ts";

const port = parentPort;
const data = workerData as { path?: string; residentDepth?: number } | null;
if (port === null || typeof data?.path !== "string")
  throw new Error("trieThreadWorker runs as a worker thread");

await keccakReady;
const nodes = openSharedTrieNodes(data.path);
const options = data.residentDepth === undefined ? {} : { residentDepth: data.residentDepth };
let trie: StateTrie | undefined;

const opened = (): StateTrie => {
  if (trie === undefined) throw new Error("the trie thread has no trie open");
  return trie;
};

/** The block's trie write in three buffers, moved to the chain's thread rather than copied. */
function packed(write: TrieWrite): { write: PackedTrieWrite; transfer: ArrayBuffer[] } {
  const records = [...write.nodes];
  const ids = Float64Array.from(records, ([id]) => id);
  const { bytes, ends } = packSpans(records.map(([, record]) => record));
  const retired = Float64Array.from(write.retired);
  const { root, parent } = write;
  return {
    write: {
      ids,
      ends,
      bytes,
      retired,
      ...(root === undefined ? {} : { root }),
      ...(parent === undefined ? {} : { parent }),
    },
    transfer: [ids.buffer, ends.buffer, bytes.buffer, retired.buffer],
  };
}

async function handle(request: TrieRequest): Promise<void> {
  switch (request.op) {
    case "open": {
      const { rootHex, rootId, nextId } = request;
      trie = undefined;
      nodes.renew();
      trie = new StateTrie(
        { getTrieNode: nodes.getTrieNode, getTrieRoot: () => rootId, nextTrieNodeId: () => nextId },
        rootHex,
        options,
      );
      return;
    }
    case "apply": {
      let reply: TrieReply;
      let transfer: ArrayBuffer[] = [];
      try {
        const current = opened();
        const rootHex = await current.apply(request.changes);
        const write = packed(current.pendingWrite());
        reply = { seq: request.seq, rootHex, write: write.write };
        transfer = write.transfer;
      } catch (error) {
        reply = { seq: request.seq, error: error instanceof Error ? error.message : String(error) };
      }
      port?.postMessage(reply, transfer);
      return;
    }
    case "markCommitted":
      // Without `underWay` the block is durable: its nodes are read from the store from now on.
      if (!request.underWay) nodes.renew();
      opened().markCommitted(request.underWay);
      return;
    case "written":
      nodes.renew();
      opened().written();
      return;
    case "discard":
      trie?.discard();
      return;
    case "close":
      await nodes.close();
      process.exit(0);
  }
}

// One message at a time, in order: each waits for the one before it. A message that fails
// other than an apply (which answers with its error) leaves a trie that cannot be trusted: the
// thread says why and exits, and the chain opens its trie again on a new one (TrieThread.open).
let queue = Promise.resolve();
port.on("message", (request: TrieRequest) => {
  queue = queue.then(() =>
    handle(request).catch((error: unknown) => {
      port.postMessage({ seq: FAILED, error: error instanceof Error ? error.message : String(error) });
      process.exit(1);
    }),
  );
});
port.postMessage({ ready: true });
