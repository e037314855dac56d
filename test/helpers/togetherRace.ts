/**
 * Child process of test/unit/storage/commitTogether.test.ts: on the LMDB store at argv[2], 300
 * rounds of a journal write racing a commitTogether, as when a node takes a submission while it
 * syncs. Prints "done <blocks> <journaled>" if it never hangs.
 *
 * - "underWay" (default): the journal write is under way (lmdb-js's writer thread holds the
 *   journal's write lock and waits for this thread to run the transaction's callback) as a
 *   commitTogether begins. With the journal in the chain's environment, this hung (the lock was
 *   that environment's); it stays as a guard.
 * - "during": the journal write is asked for inside the first of two steps, while the range's
 *   write is open.
 */
import { LmdbStore } from "../../src/storage/index.ts";
import { openChain, produce, transfer } from "./smallChain.ts";

const ROUNDS = 300;
const [dir, mode = "underWay"] = process.argv.slice(2);
if (dir === undefined || (mode !== "underWay" && mode !== "during")) {
  throw new Error("usage: togetherRace.ts <dir> [underWay|during]");
}
const store = new LmdbStore(dir);
const chain = await openChain(store);
const nonces = new Map<string, number>();
const tag = new Map<string, number>();
const journal = (round: number) =>
  store.journal.savePending([{ seq: round, tx: transfer(tag, [round % 4, 4, 1]) }]);
for (let round = 0; round < ROUNDS; round++) {
  let journaled: Promise<void> | undefined;
  if (mode === "underWay") {
    journaled = journal(round);
    await new Promise((resolve) => setTimeout(resolve, 0)); // the journal's transaction has begun
  }
  await chain.commitTogether(mode === "underWay" ? [1] : [1, 2], async (step) => {
    if (mode === "during" && step === 1) journaled = journal(round);
    // Sync's steps wait for other things (signature checks, the next event-loop turn) meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 1));
    await produce(chain, [transfer(nonces, [0, 1, 1])]);
    return true;
  });
  await journaled;
}
process.stdout.write(`done ${chain.head().header.number} ${store.journal.loadPending().length}\n`);
await store.close();
