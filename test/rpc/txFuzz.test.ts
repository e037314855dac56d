import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { rpcResult } from "../fuzz/rpcArbitraries.ts";
import { type FuzzTarget, startFuzzTarget } from "../fuzz/target.ts";
import { createTxFuzzContext, FUZZ_POOL, runTxFuzz, type TxFuzzContext } from "../fuzz/txMutations.ts";

/**
 * Mutated transactions against chain_sendSignedTransaction of a real node, judged by an oracle
 * built on the reference signer (@ainblockchain/ain-util's ecVerifySig) and a well-formedness
 * predicate written from DESIGN.md §3 (test/fuzz/txMutations.ts). The node accepts exactly what
 * the oracle accepts, with the hash ain-util computes; every refusal is -32602 or -32003 with a
 * reason. `npm run fuzz:rpc -- --tx --runs N` runs the same property for longer.
 */

/** Mutations in CI (ain-util signs and verifies in pure JS: the file takes about 28 s here). TX_FUZZ_RUNS overrides. */
const CI_MUTATIONS = Number(process.env.TX_FUZZ_RUNS ?? 3_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_106);

describe("transaction fuzzing against the reference signer", () => {
  let node: FuzzTarget;
  let context: TxFuzzContext;
  before(async () => {
    node = await startFuzzTarget({ pool: FUZZ_POOL });
    context = await createTxFuzzContext(node.url, node.privateKeys);
  });
  after(async () => {
    context?.target.close();
    await node?.stop();
  });

  it(`admits exactly what ain-util verifies and DESIGN §3 calls well-formed (${CI_MUTATIONS} mutations)`, async (t) => {
    const details = await runTxFuzz(context, CI_MUTATIONS, SEED);
    const { stats } = context;
    t.diagnostic(
      `${stats.sent} sent in ${stats.seconds.toFixed(1)} s (${stats.httpSeconds.toFixed(1)} s of replies, summed over concurrent requests): ${stats.accepted} accepted, ${stats.rejected} rejected, ${stats.undecided} undecided`,
    );
    t.diagnostic(`by mutation: ${JSON.stringify(stats.byKind)}`);
    t.diagnostic(`refusals: ${JSON.stringify(stats.reasons)}`);
    const cause =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    assert.ok(!details.failed, `${fc.defaultReportMessage(details) ?? ""}\n${cause}`);
    assert.ok(stats.sent >= CI_MUTATIONS, `${stats.sent} mutations sent`);
    // The run must exercise both sides of the oracle, or it proves little.
    assert.ok(stats.accepted >= 100, `${stats.accepted} accepted`);
    assert.ok(stats.rejected >= 1000, `${stats.rejected} rejected`);
    assert.ok(node.alive(), `the node is still running:\n${node.output()}`);
    assert.equal(typeof (await rpcResult<number>(context.target, "chain_getRecentBlockNumber")), "number");
  });
});
