/**
 * Child process of test/unit/storage/commitTogether.test.ts: on the LMDB store at argv[2], a
 * journal write is under way (lmdb-js's writer thread holds the write lock and waits for this
 * thread to run the transaction's callback) each time a commitTogether begins, as when a node takes
 * a submission while it syncs. Prints "done <blocks> <journaled>" if it never hangs.
 */
import { LmdbStore } from "../../src/storage/index.ts";
import { openChain, produce, transfer } from "./smallChain.ts";

const ROUNDS = 300;
const dir = process.argv[2];
if (dir === undefined) throw new Error("usage: togetherRace.ts <dir>");
const store = new LmdbStore(dir);
const chain = await openChain(store);
const nonces = new Map<string, number>();
const tag = new Map<string, number>();
for (let round = 0; round < ROUNDS; round++) {
  const journaled = store.journal.savePending([{ seq: round, tx: transfer(tag, [round % 4, 4, 1]) }]);
  await new Promise((resolve) => setTimeout(resolve, 0)); // the journal's transaction has begun
  await chain.commitTogether(async () => {
    // Sync's work waits for other things (signature checks, the next event-loop turn) meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 1));
    await produce(chain, [transfer(nonces, [0, 1, 1])]);
  });
  await journaled;
}
process.stdout.write(`done ${chain.head().header.number} ${store.journal.loadPending().length}\n`);
await store.close();
