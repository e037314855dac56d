/**
 * Child process of test/unit/storage/commitTogether.test.ts: on the LMDB store at argv[2], commits
 * block 1 on its own, then blocks 2 and 3 inside one commitTogether, and dies by SIGKILL before
 * that write ends (nothing flushed, no close), as a node killed in the middle of a synced range.
 */
import { LmdbStore } from "../../src/storage/index.ts";
import { type Move, openChain, produce, transfer } from "./smallChain.ts";

const dir = process.argv[2];
if (dir === undefined) throw new Error("usage: togetherCrash.ts <dir>");
const store = new LmdbStore(dir);
const chain = await openChain(store);
const nonces = new Map<string, number>();
await produce(chain, [transfer(nonces, [0, 1, 10])]);
const moves: Move[] = [
  [1, 2, 20],
  [2, 3, 30],
];
await chain.commitTogether(moves, async (move) => {
  await produce(chain, [transfer(nonces, move)]);
  if (move === moves.at(-1)) {
    process.stdout.write(`inside ${chain.head().header.number}\n`);
    process.kill(process.pid, "SIGKILL");
  }
  return true;
});
