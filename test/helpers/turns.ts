import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Turns of the event loop that ran while `work` was under way, each checked by `check` (given the
 * turn's number, from 1): how tests show that work leaves the loop free, and what it sees then.
 */
export async function turnsWhile(work: Promise<unknown>, check: (turn: number) => void): Promise<number> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  let turns = 0;
  while (!done) {
    await nextTurn();
    if (done) break;
    turns++;
    check(turns);
  }
  await settled;
  return turns;
}
