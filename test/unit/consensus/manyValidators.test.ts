import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { consensusTimeouts, defaultConsensusTimeouts } from "../../../src/node/options.ts";
import { runConsensusSim } from "../../helpers/consensusSim.ts";

/**
 * The network past one machine, on a manual clock: 100 validators of equal stake, 33 of them
 * silent (just under 1/3), every message delayed 20–300 ms per receiver, the node's own timeouts.
 * Every height must commit, on every live validator, with one block. Re-sending is left out here
 * (the bench runs it: bench/consensusSim.ts) because with no message lost it changes nothing but
 * the run time.
 */
describe("100 validators, 33 silent, 20-300 ms delays (simulated)", () => {
  it("commit every height, the same block everywhere", async () => {
    const result = await runConsensusSim({
      validators: 100,
      silent: 33,
      heights: 8,
      minDelayMs: 20,
      maxDelayMs: 300,
      seed: 1,
      timeouts: { ...consensusTimeouts(defaultConsensusTimeouts, 1_000), rebroadcastMs: 3_600_000 },
    });
    assert.equal(result.live, 67);
    assert.deepEqual(
      result.heights.map((h) => h.committedBy),
      Array(8).fill(67),
      "every live validator committed every height",
    );
    assert.equal(result.maxBlocksPerHeight, 1, "no fork");
    // A silent proposer costs its heights a round: seed 1 puts silent validators in the rotation.
    assert.ok(
      result.heights.some((h) => h.round > 0),
      "some height needed a later round",
    );
    assert.equal(result.behind, 0, "no validator fell behind with every message delivered");
  });
});
