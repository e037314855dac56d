/**
 * Long RPC fuzz runs: the same properties as test/rpc/fuzz.test.ts (test/fuzz/runRpcFuzz.ts), with
 * as many inputs as asked, against a dev node in its own process (test/fuzz/targetMain.ts).
 *
 *     npm run fuzz:rpc -- [--runs N] [--seed S]        (default 1,000,000 inputs, random seed)
 *     npm run fuzz:rpc -- --tx [--runs N] [--seed S]   (transaction mutations, test/fuzz/txMutations.ts)
 *
 * Reports inputs tried, inputs per second, the node's RSS before and after, and every failure
 * with its seed and counterexample. Exits 1 on any failure. The node is stopped in a `finally`.
 */
import { parseArgs } from "node:util";
import {
  assertStillServing,
  createFuzzContext,
  type FuzzReport,
  runRpcFuzz,
  snapshotState,
} from "../test/fuzz/runRpcFuzz.ts";
import { startFuzzTarget } from "../test/fuzz/target.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "1000000" },
    seed: { type: "string" },
    tx: { type: "boolean", default: false },
  },
});
const runs = Number(values.runs);
if (!Number.isSafeInteger(runs) || runs < 1)
  throw new Error(`--runs must be a positive integer, got ${values.runs}`);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

async function main(): Promise<number> {
  if (values.tx) {
    const { runTxFuzzScript } = await import("../test/fuzz/txMutations.ts");
    return runTxFuzzScript(runs, seed, out);
  }
  const node = await startFuzzTarget();
  const context = await createFuzzContext(node.url, node.addresses).catch(async (error: unknown) => {
    await node.stop();
    throw error;
  });
  try {
    out(`fuzz:rpc: ${runs} inputs, seed ${seed}, node pid ${node.pid} at ${node.url}`);
    const before = await snapshotState(context.target, node.addresses);
    const rssBefore = node.rssBytes();
    let peak = rssBefore;
    // Big totals run in slices, so progress shows and the RSS is sampled along the way.
    const slice = 50_000;
    const reports: FuzzReport[] = [];
    for (let done = 0, round = 0; done < runs; round++) {
      const total = Math.min(slice, runs - done);
      const report = await runRpcFuzz(context, { total, seed: seed + round * 97, stopOnFailure: false });
      reports.push(report);
      done += total;
      peak = Math.max(peak, node.rssBytes());
      const inputs = reports.reduce((sum, r) => sum + r.inputs, 0);
      const seconds = reports.reduce((sum, r) => sum + r.seconds, 0);
      out(
        `  ${inputs} inputs, ${(inputs / seconds).toFixed(0)}/s, node RSS ${mib(node.rssBytes())}, failures ${reports.reduce((s, r) => s + r.failures, 0)}`,
      );
      for (const p of report.properties) {
        if (p.failure !== undefined)
          out(`FAILURE in "${p.name}" (round seed ${seed + round * 97}):\n${p.failure}\n`);
      }
      if (!node.alive()) break;
    }
    const inputs = reports.reduce((sum, r) => sum + r.inputs, 0);
    const seconds = reports.reduce((sum, r) => sum + r.seconds, 0);
    let failures = reports.reduce((sum, r) => sum + r.failures, 0);
    if (!node.alive()) {
      out(`FAILURE: the node process exited:\n${node.output()}`);
      return 1;
    }
    await assertStillServing(context.target);
    const after = await snapshotState(context.target, node.addresses);
    if (JSON.stringify(after) !== JSON.stringify(before)) {
      failures += 1;
      out(`FAILURE: state changed:\nbefore ${JSON.stringify(before)}\nafter  ${JSON.stringify(after)}`);
    }
    const rssAfter = node.rssBytes();
    out(
      `done: ${inputs} inputs in ${seconds.toFixed(1)} s (${(inputs / seconds).toFixed(0)}/s); ` +
        `node RSS before ${mib(rssBefore)}, after ${mib(rssAfter)}, peak ${mib(peak)}; failures ${failures}`,
    );
    return failures === 0 ? 0 : 1;
  } finally {
    context.target.close();
    await node.stop();
  }
}

process.exitCode = await main();
