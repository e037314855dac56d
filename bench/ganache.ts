/**
 * One peer side by side (issue 5): ganache 7.9.2, the npm Ethereum dev chain, against a chain-node
 * dev node in the same run, runs alternating (ours, then ganache), same load process and settings
 * as the other scenarios (bench/loadWorker.ts: 32 connections, warm-up + fixed duration).
 *
 *  1. `chain_getRecentBlockNumber` on our dev node vs `eth_blockNumber` on ganache, req/s; every
 *     response must equal the server's own answer fetched once before the runs.
 *  2. `chain_sendSignedTransaction` admitted tx/s (fresh keys, unordered, as bench/admission.ts)
 *     vs `eth_sendRawTransaction` accepted tx/s on ganache: legacy transfers pre-signed from 1,000
 *     keys funded at ganache's start, body i from key i % 1000 with nonce floor(i / 1000), sent in
 *     order, so consecutive bodies come from different senders and no nonce comes before its
 *     predecessor. One body list serves every ganache run, each run going on where the last stopped.
 *     Afterwards the bench asks ganache how many of them it mined (the senders' nonces and the sink's
 *     balance), to show the accepted ones were real.
 *
 * ganache is installed on demand into bench/.peers (bench/peers.ts); when that fails the scenario is
 * skipped (PeerSkipped, bench/ethPeer.ts) and the rest of the bench goes on. ganache runs in its own
 * process under the same pinned Node as everything else (bench/ganacheServer.ts) with its default
 * eager instamine: it executes and mines each transaction before answering, where our node only
 * admits to its pool.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BenchContext, cpuDetails } from "./context.ts";
import { minedTransfers, needPeers, presignPeerTransfers, startPeer, writeSenderKeys } from "./ethPeer.ts";
import type { LoadSpec } from "./loadWorker.ts";
import { loadRun, type Measured, responseProblem } from "./measure.ts";
import { PEER_VERSIONS } from "./peers.ts";
import { presignUserWrites } from "./presign.ts";
import { post, runJson, startDevNode } from "./procs.ts";
import { type ScenarioResult, series } from "./report.ts";

const DEV_CHAIN_ID = 100;
const GANACHE_CHAIN_ID = 1337;
/** Funded ganache senders; consecutive bodies rotate through them. */
const GANACHE_KEYS = 1000;
const GANACHE_LABEL = `ganache ${PEER_VERSIONS.ganache}`;

const OUR_READ = '{"jsonrpc":"2.0","id":1,"method":"chain_getRecentBlockNumber"}';
const GANACHE_READ = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';

/** The answer to `request`, checked to be a proper result; autocannon then expects exactly it. */
async function answerOf(url: string, request: string, what: string): Promise<string> {
  const reply = await post(url, request);
  const json = JSON.parse(reply.text) as { result?: unknown };
  if (reply.status !== 200 || json.result === undefined || json.result === null) {
    throw new Error(`${what} is not a proper result: ${reply.status} ${reply.text.slice(0, 300)}`);
  }
  return reply.text;
}

export async function ganacheScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  await needPeers(log);

  // Keys, then the pre-signing (separate processes) while both servers start.
  const keysFile = join(ctx.tmp, "ganache-keys.json");
  const senders = writeSenderKeys(GANACHE_KEYS, keysFile);
  const ganacheTxs = settings.ganacheTxs;
  const ourFiles = Array.from({ length: settings.runs }, (_, i) =>
    join(ctx.tmp, `ganache-ours-${i + 1}.json`),
  );
  log(
    `pre-signing ${ganacheTxs} ganache transfers from ${GANACHE_KEYS} keys and ` +
      `${settings.runs} × ${settings.admissionTxsPerRun} chain-node writes`,
  );
  const signStarted = Date.now();
  const signing = Promise.all([
    presignPeerTransfers(ctx, "ganache", keysFile, ganacheTxs, GANACHE_CHAIN_ID),
    ...ourFiles.map((file) =>
      runJson(`presign ${file}`, ["bench/presign.ts", String(settings.admissionTxsPerRun), file, "100"]),
    ),
  ]);

  // Awaited below, once the servers are up; a failure meanwhile (Ctrl-C kills the signers) must not
  // surface as an unhandled rejection first.
  signing.catch(() => undefined);

  const { peer: ganache, url: ganacheUrl } = await startPeer(GANACHE_LABEL, "bench/ganacheServer.ts", [
    keysFile,
    String(GANACHE_CHAIN_ID),
  ]).catch(async (error: unknown) => {
    await signing.catch(() => undefined);
    throw error;
  });
  // Without a uWebSockets.js binary for this Node ABI, ganache serves HTTP with its node:http fallback.
  const ganacheHttp = ganache.stderr().includes("Falling back to a NodeJS implementation")
    ? `node:http fallback (uWebSockets.js has no binary for Node ABI ${process.versions.modules})`
    : "uWebSockets.js";
  log(`${GANACHE_LABEL} at ${ganacheUrl}, ${GANACHE_KEYS} funded keys, HTTP: ${ganacheHttp}`);

  const home = join(ctx.tmp, "ganache-ours");
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, "config.toml"),
    `[pool]\nmax_txs = ${settings.runs * settings.admissionTxsPerRun + 1000}\n`,
  );
  const node = await startDevNode("chain-node (vs ganache)", home, settings.admissionNodeBlockTimeMs);
  log(`dev node at ${node.url} (block time ${settings.admissionNodeBlockTimeMs} ms)`);
  const [ganacheFile] = await signing;
  log(`pre-signed in ${((Date.now() - signStarted) / 1000).toFixed(1)} s (servers started meanwhile)`);

  const measure = async (
    what: string,
    figure: (r: Measured) => number,
    attempt: (previous: Measured | undefined) => Promise<Measured>,
  ) => {
    const result = await ctx.policy.run<Measured>(what, figure, attempt);
    const problem = responseProblem(result, what);
    if (problem !== undefined) ctx.problems.push(problem);
    return result;
  };

  // 1. Block number reads.
  const ourReadBody = await answerOf(node.url, OUR_READ, "chain_getRecentBlockNumber");
  const ganacheReadBody = await answerOf(ganacheUrl, GANACHE_READ, "ganache eth_blockNumber");
  const fixed = {
    mode: "fixed" as const,
    connections: settings.connections,
    durationS: settings.durationS,
    warmupS: settings.warmupS,
  };
  const ourReads: Measured[] = [];
  const ganacheReads: Measured[] = [];
  for (let run = 1; run <= settings.runs; run++) {
    const ours = await measure(
      `ganache-block-number run ${run} (chain-node)`,
      (r) => r.rps,
      () => loadRun({ ...fixed, url: node.url, body: OUR_READ, expectBody: ourReadBody }, node.pid),
    );
    const peer = await measure(
      `ganache-block-number run ${run} (ganache)`,
      (r) => r.rps,
      () =>
        loadRun(
          { ...fixed, url: ganacheUrl, body: GANACHE_READ, expectBody: ganacheReadBody },
          ganache.child.pid,
        ),
    );
    ourReads.push(ours);
    ganacheReads.push(peer);
    log(
      `block number run ${run}: chain-node ${Math.round(ours.rps)} req/s, ganache ${Math.round(peer.rps)} req/s`,
    );
  }

  // 2. Sending signed transactions. One of each checked before any timing.
  const ourCheck = await post(node.url, presignUserWrites(1, DEV_CHAIN_ID, 0)[0] as string);
  if (!/"result":"0x[0-9a-f]{64}"/.test(ourCheck.text)) {
    throw new Error(`chain_sendSignedTransaction did not admit a valid transaction: ${ourCheck.text}`);
  }
  const ganacheBodies = JSON.parse(readFileSync(ganacheFile, "utf8")) as string[];
  const ganacheCheck = await post(ganacheUrl, ganacheBodies[0] as string);
  if (!/"result":"0x[0-9a-f]{64}"/.test(ganacheCheck.text)) {
    throw new Error(`ganache did not accept a pre-signed transaction: ${ganacheCheck.text.slice(0, 300)}`);
  }
  let ganacheNext = 1; // the next unsent body: every ganache run goes on from there (nonce order)
  const presigned = {
    mode: "presigned" as const,
    connections: settings.connections,
    durationS: settings.durationS,
    warmupS: settings.warmupS,
  };
  const ourSends: Measured[] = [];
  const ganacheSends: Measured[] = [];
  for (let run = 1; run <= settings.runs; run++) {
    const ours = await measure(
      `ganache-send run ${run} (chain-node)`,
      (r) => r.admittedPerS ?? 0,
      (previous) => {
        const spec: LoadSpec = {
          ...presigned,
          url: node.url,
          bodiesFile: ourFiles[run - 1] as string,
          offset: previous?.bodiesUsed ?? 0,
        };
        return loadRun(spec, node.pid);
      },
    );
    const peer = await measure(
      `ganache-send run ${run} (ganache)`,
      (r) => r.admittedPerS ?? 0,
      async () => {
        const result = await loadRun(
          { ...presigned, url: ganacheUrl, bodiesFile: ganacheFile, offset: ganacheNext },
          ganache.child.pid,
        );
        ganacheNext = result.bodiesUsed ?? ganacheNext;
        return result;
      },
    );
    for (const [who, r] of [
      ["chain-node", ours],
      ["ganache", peer],
    ] as const) {
      if (Object.keys(r.rejected ?? {}).length > 0) {
        ctx.problems.push(`ganache-send run ${run} (${who}) had rejections: ${JSON.stringify(r.rejected)}`);
      }
      // Our node's run then ends early and its rate is taken up to its last admission
      // (loadWorker.ts), as in the admission scenario; ganache's transfers are shared by all its
      // runs, so running out there would leave later runs without any.
      if (r.exhausted && who === "ganache") {
        ctx.problems.push(`ganache-send run ${run} (${who}) ran out of pre-signed transactions`);
      }
    }
    ourSends.push(ours);
    ganacheSends.push(peer);
    log(
      `send run ${run}: chain-node ${Math.round(ours.admittedPerS ?? 0)} tx/s admitted` +
        `${ours.exhausted ? " (ran out of pre-signed transactions)" : ""}, ` +
        `ganache ${Math.round(peer.admittedPerS ?? 0)} tx/s accepted`,
    );
  }

  // What ganache really holds: wait until requests cut off at the end of the last run are done.
  let onChain = await minedTransfers(ganacheUrl, senders);
  for (let i = 0; i < 20 && onChain.mined < ganacheNext; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    onChain = await minedTransfers(ganacheUrl, senders);
  }
  const acceptedMeasured = ganacheSends.reduce((sum, r) => sum + (r.admitted ?? 0), 0);
  log(
    `ganache: ${ganacheNext} transfers sent, ${acceptedMeasured} accepted in the measured phases, ` +
      `${onChain.mined} mined (senders' nonces; sink balance ${onChain.sinkWei} wei), head block ${onChain.head}`,
  );
  if (onChain.mined < acceptedMeasured || onChain.sinkWei !== onChain.mined) {
    ctx.problems.push(
      `ganache mined ${onChain.mined} transfers (sink ${onChain.sinkWei} wei) but accepted ${acceptedMeasured}`,
    );
  }

  const ourReadSeries = series(ourReads.map((r) => r.rps));
  const ganacheReadSeries = series(ganacheReads.map((r) => r.rps));
  const ourSendSeries = series(ourSends.map((r) => r.admittedPerS ?? 0));
  const ganacheSendSeries = series(ganacheSends.map((r) => r.admittedPerS ?? 0));
  const peer = {
    ganacheVersion: PEER_VERSIONS.ganache,
    ganacheHttpServer: ganacheHttp,
    ganacheNode: process.version,
  };
  return [
    {
      id: "ganache-block-number",
      title: `\`chain_getRecentBlockNumber\` vs ${GANACHE_LABEL} \`eth_blockNumber\``,
      unit: "req/s",
      nodeLabel: "chain-node dev",
      baselineLabel: `req/s (${GANACHE_LABEL})`,
      node: ourReadSeries,
      baseline: ganacheReadSeries,
      ratio: ourReadSeries.median / ganacheReadSeries.median,
      details: {
        ...peer,
        nodeBody: ourReadBody,
        ganacheBody: ganacheReadBody,
        nodeLatencyP50Ms: ourReads.map((r) => r.latencyP50Ms),
        nodeLatencyP99Ms: ourReads.map((r) => r.latencyP99Ms),
        baselineLatencyP50Ms: ganacheReads.map((r) => r.latencyP50Ms),
        baselineLatencyP99Ms: ganacheReads.map((r) => r.latencyP99Ms),
        ...cpuDetails(ourReads, ganacheReads),
      },
    },
    {
      id: "ganache-send",
      title: `\`chain_sendSignedTransaction\` admitted vs ${GANACHE_LABEL} \`eth_sendRawTransaction\` accepted (instamine)`,
      unit: "tx/s",
      nodeLabel: "chain-node dev",
      baselineLabel: `tx/s (${GANACHE_LABEL})`,
      node: ourSendSeries,
      baseline: ganacheSendSeries,
      ratio: ourSendSeries.median / ganacheSendSeries.median,
      details: {
        ...peer,
        ganacheSenders: GANACHE_KEYS,
        ganachePresigned: ganacheTxs,
        ganacheSent: ganacheNext,
        ganacheAcceptedMeasured: ganacheSends.map((r) => r.admitted),
        ganacheMined: onChain.mined,
        ganacheSinkWei: onChain.sinkWei,
        ganacheHeadBlock: onChain.head,
        ganacheRejected: ganacheSends.map((r) => r.rejected),
        ganacheExhausted: ganacheSends.map((r) => r.exhausted),
        nodeAdmitted: ourSends.map((r) => r.admitted),
        nodeRejected: ourSends.map((r) => r.rejected),
        nodeLatencyP50Ms: ourSends.map((r) => r.latencyP50Ms),
        nodeLatencyP99Ms: ourSends.map((r) => r.latencyP99Ms),
        baselineLatencyP50Ms: ganacheSends.map((r) => r.latencyP50Ms),
        baselineLatencyP99Ms: ganacheSends.map((r) => r.latencyP99Ms),
        ...cpuDetails(ourSends, ganacheSends),
      },
    },
  ];
}
