/**
 * The crash loop of test/e2e/crashLoop.test.ts at length: a `chain-node dev` process under a
 * steady stream of signed transfers, SIGKILLed at a random moment 50–800 ms after the load
 * starts, restarted, 100 times by default; after each restart no reported block is lost or
 * changed and every acknowledged transaction is committed or pending; at the end the chain is
 * re-executed on a never-killed in-memory chain with the same state root at every height.
 *
 *     npm run crash:loop [-- --kills N] [-- --seed S]
 *
 * On a failure the home is kept for inspection and the exit code is 1. The node process is
 * killed however the run ends.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect, parseArgs } from "node:util";
import { runCrashLoop } from "../test/helpers/crashLoop.ts";

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: process.env.CRASH_KILLS ?? "100" },
    seed: { type: "string", default: process.env.CRASH_SEED ?? String(Date.now() % 1_000_000) },
  },
});
const kills = Number(values.kills);
const seed = Number(values.seed);
if (!Number.isSafeInteger(kills) || kills < 1 || !Number.isSafeInteger(seed)) {
  process.stderr.write("usage: npm run crash:loop -- [--kills N ≥ 1] [--seed S]\n");
  process.exit(2);
}

const home = mkdtempSync(join(tmpdir(), "chain-node-crashloop-"));
const say = (line: string) => process.stdout.write(`${line}\n`);
say(`crash loop: ${kills} kills, seed ${seed}, home ${home}`);
try {
  const report = await runCrashLoop({ home, kills, seed, blockTimeMs: 100, progress: say });
  say(
    `ok: ${report.kills} kills in ${(report.elapsedMs / 1000).toFixed(1)} s; ${report.acknowledged} acknowledged / ${report.committed} committed transfers; ${report.blocksSeen} blocks seen before kills all kept; ${report.replayed} heights replayed with equal state roots; lost: nothing`,
  );
  rmSync(home, { recursive: true, force: true });
} catch (error) {
  process.stderr.write(`FAILED (seed ${seed}; home kept at ${home}):\n${inspect(error)}\n`);
  process.exitCode = 1;
}
