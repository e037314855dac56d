/**
 * Admission: `chain_sendSignedTransaction` admitted per second, against the rate at which one core
 * recovers secp256k1 signers (bench/recoverRate.ts), the two alternating.
 *
 * The node is a fresh dev node with a block time of an hour, so no block is made while the runs
 * last (the pool is never drained, and block execution and commits do not share the event loop
 * with admission), and a `config.toml` pool limit above every transaction of every run, so nothing
 * is refused for room. The transactions are pre-signed before any timing (bench/presign.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BenchContext, cpuDetails } from "./context.ts";
import type { LoadSpec } from "./loadWorker.ts";
import { loadRun, type Measured, type MeasuredRecover, recoverRun, responseProblem } from "./measure.ts";
import { presignUserWrites } from "./presign.ts";
import { post, runJson, startDevNode } from "./procs.ts";
import { type ScenarioResult, series } from "./report.ts";

const DEV_CHAIN_ID = 100;

/** Transactions per `chain_sendSignedTransactionBatch` call in the batch scenario. */
const BATCH_TXS = 100;

/** Pre-signs each run's transactions in its own process (both cores) into `files`. */
function presignFiles(files: string[], perFile: number, perCall = 1): Promise<unknown> {
  return Promise.all(
    files.map((file) =>
      runJson(`presign ${file}`, [
        "bench/presign.ts",
        String(perFile),
        file,
        String(DEV_CHAIN_ID),
        String(perCall),
      ]),
    ),
  );
}

export async function admissionScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  const home = join(ctx.tmp, "admission");
  // Batches admit faster than single calls: their runs get more transactions (at 2× the batch
  // runs of 2026-11-26 ran out at about 17,000/s before the 1 s warm-up and 5 s had passed).
  const batchTxsPerRun = 3 * settings.admissionTxsPerRun;
  const total = settings.runs * (settings.admissionTxsPerRun + batchTxsPerRun);
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.toml"), `[pool]\nmax_txs = ${total + 1000}\n`);

  const files = Array.from({ length: settings.runs }, (_, i) => join(ctx.tmp, `admission-${i + 1}.json`));
  const batchFiles = Array.from({ length: settings.runs }, (_, i) =>
    join(ctx.tmp, `admission-batch-${i + 1}.json`),
  );
  log(`pre-signing ${total} transactions from ${total} fresh keys`);
  const signing = presignFiles(files, settings.admissionTxsPerRun).then(() =>
    presignFiles(batchFiles, batchTxsPerRun, BATCH_TXS),
  );
  // Marked handled now: if the node fails to start (or Ctrl-C kills the signers) while this is
  // pending, the failure that is reported is the node's, not an unhandled rejection.
  signing.catch(() => undefined);
  // No blocks: a pool holding a block's worth is otherwise committed back to back whatever the
  // block time (docs/decisions/017), and the rows measured admission beside execution.
  const node = await startDevNode("chain-node (admission)", home, settings.admissionNodeBlockTimeMs, 30_000, {
    CHAIN_NODE_TEST_HOLD_BLOCKS: "1",
  });
  await signing;
  log(`dev node for admission at ${node.url} (making no blocks: CHAIN_NODE_TEST_HOLD_BLOCKS)`);
  const reply = await post(node.url, presignUserWrites(1, DEV_CHAIN_ID, 0)[0] as string);
  if (!/"result":"0x[0-9a-f]{64}"/.test(reply.text)) {
    throw new Error(`chain_sendSignedTransaction did not admit a valid transaction: ${reply.text}`);
  }

  const admitted: Measured[] = [];
  const recovered: MeasuredRecover[] = [];
  const batched: Measured[] = [];
  for (let run = 1; run <= settings.runs; run++) {
    const what = `admission run ${run}`;
    const result = await ctx.policy.run<Measured>(
      what,
      (r) => r.admittedPerS ?? 0,
      (previous) => {
        // A repeated run continues with the transactions the disturbed one did not send.
        const spec: LoadSpec = {
          mode: "presigned",
          url: node.url,
          bodiesFile: files[run - 1] as string,
          offset: previous?.bodiesUsed ?? 0,
          connections: settings.connections,
          durationS: settings.durationS,
          warmupS: settings.warmupS,
        };
        return loadRun(spec, node.pid);
      },
    );
    const problem = responseProblem(result, what);
    if (problem !== undefined) ctx.problems.push(problem);
    if (Object.keys(result.rejected ?? {}).length > 0) {
      ctx.problems.push(`${what} had rejections: ${JSON.stringify(result.rejected)}`);
    }
    admitted.push(result);
    const recover = await ctx.policy.run<MeasuredRecover>(
      `recover run ${run}`,
      (r) => r.rawPerS,
      () => recoverRun(settings.recoverSecondsPerLoop),
    );
    recovered.push(recover);
    ctx.recover = recovered;
    const batchWhat = `batch admission run ${run}`;
    const batch = await ctx.policy.run<Measured>(
      batchWhat,
      (r) => r.admittedPerS ?? 0,
      (previous) =>
        loadRun(
          {
            mode: "presigned",
            url: node.url,
            bodiesFile: batchFiles[run - 1] as string,
            offset: previous?.bodiesUsed ?? 0,
            txsPerBody: BATCH_TXS,
            connections: settings.connections,
            durationS: settings.durationS,
            warmupS: settings.warmupS,
          },
          node.pid,
        ),
    );
    const batchProblem = responseProblem(batch, batchWhat);
    if (batchProblem !== undefined) ctx.problems.push(batchProblem);
    if (Object.keys(batch.rejected ?? {}).length > 0) {
      ctx.problems.push(`${batchWhat} had rejections: ${JSON.stringify(batch.rejected)}`);
    }
    batched.push(batch);
    log(
      `${what}: ${Math.round(result.admittedPerS ?? 0)} tx/s admitted` +
        `${result.exhausted ? " (ran out of pre-signed transactions)" : ""}; ` +
        `recover ${Math.round(recover.rawPerS)}/s; batches ${Math.round(batch.admittedPerS ?? 0)} tx/s` +
        `${batch.exhausted ? " (ran out of pre-signed transactions)" : ""}`,
    );
  }

  const nodeSeries = series(admitted.map((r) => r.admittedPerS ?? 0));
  const raw = series(recovered.map((r) => r.rawPerS));
  const full = series(recovered.map((r) => r.recoverSignerPerS));
  const details = {
    secp256k1Backend: recovered[0]?.backend,
    admitted: admitted.map((r) => r.admitted),
    durationS: admitted.map((r) => r.durationS),
    exhausted: admitted.map((r) => r.exhausted),
    rejected: admitted.map((r) => r.rejected),
    latencyP50Ms: admitted.map((r) => r.latencyP50Ms),
    latencyP99Ms: admitted.map((r) => r.latencyP99Ms),
    recoverOtherCpuPct: recovered.map((r) => Math.round(r.otherCpuPct ?? 0)),
    ...cpuDetails(admitted, []),
  };
  const batchSeries = series(batched.map((r) => r.admittedPerS ?? 0));
  const title = "`chain_sendSignedTransaction` admitted";
  return [
    {
      id: "admission-vs-recover",
      title: `${title} vs secp256k1 recover (1 core)`,
      unit: "tx/s",
      nodeLabel: "chain-node dev",
      baselineLabel: "recover/s",
      node: nodeSeries,
      baseline: raw,
      ratio: nodeSeries.median / raw.median,
      details,
    },
    {
      id: "admission-vs-recoverSigner",
      title: `${title} vs \`recoverSigner\` (recover + address, 1 core)`,
      unit: "tx/s",
      nodeLabel: "chain-node dev",
      baselineLabel: "checks/s",
      node: nodeSeries,
      baseline: full,
      ratio: nodeSeries.median / full.median,
      details: {},
    },
    {
      id: "batch-admission-vs-recover",
      title: `\`chain_sendSignedTransactionBatch\` (${BATCH_TXS} per call) admitted vs secp256k1 recover (1 core)`,
      unit: "tx/s",
      nodeLabel: "chain-node dev",
      baselineLabel: "recover/s",
      node: batchSeries,
      baseline: raw,
      ratio: batchSeries.median / raw.median,
      details: {
        admitted: batched.map((r) => r.admitted),
        durationS: batched.map((r) => r.durationS),
        exhausted: batched.map((r) => r.exhausted),
        rejected: batched.map((r) => r.rejected),
        latencyP50Ms: batched.map((r) => r.latencyP50Ms),
        latencyP99Ms: batched.map((r) => r.latencyP99Ms),
        ...cpuDetails(batched, []),
      },
    },
  ];
}
