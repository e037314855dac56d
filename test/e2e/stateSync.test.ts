import assert from "node:assert/strict";
import { appendFileSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { TEST_FAULT_VARIABLES } from "../../src/faults/index.ts";
import { sendRoundRobin } from "../helpers/chainChecks.ts";
import { rpc } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";
import { Testnet } from "../helpers/testnet.ts";

/**
 * State sync in real processes (issue 17): four validators take a snapshot every 20 blocks, cut
 * into small chunks so that there are many (a test knob), two of them serving every chunk with a
 * byte flipped. A full node with an empty home and `[sync] state_sync` joins from the trusted
 * block 2: it takes a snapshot, refuses the corrupt chunks (penalizing that validator) and gets
 * them from the others, restores, block-syncs the rest and follows the chain, answering the same
 * balances and blocks as the validators; blocks below its snapshot answer `pruned`.
 */

const VALIDATORS = [0, 1, 2, 3];
const FULL = 4;
/** Two of four serve corrupt chunks: on a loaded machine one may lag and offer another snapshot. */
const CORRUPT = [2, 3];
/** Rare enough that the snapshot the validators share is still their newest when the node joins. */
const INTERVAL = 20;
const CHUNK_BYTES = "1500";

const snapshotsOf = (home: string): string[] => {
  const dir = join(home, "data", "snapshots");
  return existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".snapshot")) : [];
};

describe("state sync: a full node joins a running network from a snapshot (processes)", {
  timeout: 180_000,
}, () => {
  let net: Testnet | undefined;
  before(async () => {
    net = await Testnet.create(VALIDATORS.length, 1, 300);
  });
  after(() => net?.stopAll());

  it("restores a trusted snapshot fetched from several validators, refuses corrupt chunks, then follows the chain", async (t) => {
    const testnet = net as Testnet;
    const homeOf = (i: number) => testnet.file.nodes[i]?.home as string;
    for (const i of VALIDATORS) {
      appendFileSync(join(homeOf(i), "config.toml"), `\n[snapshot]\ninterval = ${INTERVAL}\nkeep = 2\n`);
    }
    await Promise.all(
      VALIDATORS.map((i) =>
        testnet.start(i, {
          env: {
            [TEST_FAULT_VARIABLES.snapshotChunkBytes]: CHUNK_BYTES,
            ...(CORRUPT.includes(i) ? { [TEST_FAULT_VARIABLES.corruptSnapshotChunks]: "1" } : {}),
          },
        }),
      ),
    );
    // Some state beyond genesis, then blocks until every validator offers a snapshot.
    await sendRoundRobin(testnet, VALIDATORS, { count: 24, amount: 3, tag: "before" });
    await waitFor(
      "a snapshot on every validator",
      async () => (VALIDATORS.every((i) => snapshotsOf(homeOf(i)).length > 0) ? true : undefined),
      60_000,
    );

    const trusted = await rpc<{ hash: string }>(testnet.url(0), "chain_getBlockByNumber", { number: 2 });
    appendFileSync(
      join(homeOf(FULL), "config.toml"),
      `\n[sync]\nstate_sync = true\ntrust_height = 2\ntrust_hash = "${trusted.hash}"\n`,
    );
    const started = Date.now();
    const starting = testnet.start(FULL, { logLevel: "info" });
    // Before its RPC serves, the port answers probes: /ready is 503 with the state sync's progress.
    const fullUrl = testnet.url(FULL);
    const probe = await waitFor(
      "/ready during state sync",
      async () => {
        const reply = await fetch(`${fullUrl}/ready`).catch(() => undefined);
        return reply?.status === 503
          ? ((await reply.json()) as { reasons: string[]; state_sync: unknown })
          : undefined;
      },
      30_000,
    );
    assert.deepEqual(probe.reasons, ["state_sync"], "the probe answered while the state was restored");
    await starting;
    const joinMs = Date.now() - started;
    const output = testnet.output(FULL);
    assert.match(output, /state sync: restored/, "it restored a snapshot");
    assert.match(output, /chunk \d+: [^\n]*peer served a bad snapshot part/, "a corrupt chunk was refused");
    const restoredLine = output.split("\n").find((line) => line.includes("state sync: restored")) ?? "";
    const restoredAt = Number(/"height":(\d+)/.exec(restoredLine)?.[1]);
    assert.ok(
      restoredAt >= INTERVAL && restoredAt % INTERVAL === 0,
      `restored at block ${restoredAt}: ${restoredLine}`,
    );

    // Transactions keep flowing; the full node follows, and agrees with the validators.
    await sendRoundRobin(testnet, VALIDATORS, { count: 8, amount: 1, tag: "after" });
    const target = (await testnet.head(0)) + 3;
    await waitFor(
      "the full node to follow",
      async () => ((await testnet.head(FULL)) >= target ? true : undefined),
      60_000,
    );
    const common = Math.min(await testnet.head(FULL), await testnet.head(0));
    for (const number of [restoredAt, restoredAt + 1, common]) {
      const ours = await rpc<{ hash: string }>(testnet.url(FULL), "chain_getBlockByNumber", { number });
      const theirs = await rpc<{ hash: string }>(testnet.url(0), "chain_getBlockByNumber", { number });
      assert.equal(ours.hash, theirs.hash, `block ${number}`);
    }
    await waitFor(
      "the same balances on the full node and a validator",
      async () => {
        const heads = [await testnet.head(FULL), await testnet.head(0)];
        if (heads[0] !== heads[1]) return undefined;
        for (const account of testnet.file.accounts) {
          const [ours, theirs] = await Promise.all(
            [FULL, 0].map((i) =>
              rpc<number>(testnet.url(i), "chain_getBalance", { address: account.address }),
            ),
          );
          if (ours !== theirs) return undefined;
        }
        return true;
      },
      30_000,
    );
    await assert.rejects(
      rpc(testnet.url(FULL), "chain_getBlockByNumber", { number: 1 }),
      /"reason":"pruned"/,
      "a block below the snapshot answers pruned",
    );
    t.diagnostic(`joined by state sync at block ${restoredAt} in ${joinMs} ms (process start included)`);
  });
});
