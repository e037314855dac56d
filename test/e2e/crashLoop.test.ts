import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { runCrashLoop } from "../helpers/crashLoop.ts";

/**
 * Random SIGKILLs of a dev node under a steady stream of signed transfers (test/helpers/crashLoop.ts
 * has the checks). 20 kills here; CRASH_KILLS raises it, CRASH_SEED repeats a run's kill delays;
 * `npm run crash:loop` (scripts/crashLoop.ts) does 100.
 */
const KILLS = Number(process.env.CRASH_KILLS ?? 20);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);

describe("crash loop: random SIGKILL under load (chain-node dev)", () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-crashloop-"));
  after(() => rmSync(home, { recursive: true, force: true }));

  it(`loses no block and no acknowledged transaction over ${KILLS} kills, and replays to the same state roots`, async (t) => {
    t.diagnostic(`seed ${SEED} (CRASH_SEED=${SEED} repeats the kill delays)`);
    const report = await runCrashLoop({ home, kills: KILLS, seed: SEED, blockTimeMs: 100 });
    t.diagnostic(
      `crash loop: ${report.kills} kills, ${report.acknowledged} acknowledged / ${report.committed} committed transfers, ${report.blocksSeen} blocks seen before kills kept, ${report.replayed} heights replayed with equal state roots, ${report.elapsedMs} ms`,
    );
  });
});
