import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import {
  Chain,
  type Commit,
  type Genesis,
  hashHeader,
  precommitVote,
  signVote,
  type Tx,
  verifySignedTx,
} from "../../../src/chain/index.ts";
import { type DerivedAccount, hexToBytes, inlineVerifier } from "../../../src/crypto/index.ts";
import { devAccounts, devGenesis } from "../../../src/node/index.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  encodeExportBlock,
  encodeExportHeader,
  exportHeaderOf,
  IMPORT_REFUSALS,
  type ImportRefusal,
  ImportRefusedError,
  importBlocks,
  parseExportBlock,
  parseExportHeader,
  type SyncBlock,
  serveBlocks,
} from "../../../src/sync/index.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";
import { withTempDir } from "../../helpers/tempDir.ts";
import { signTx, transferBody } from "../../helpers/testNode.ts";

/**
 * The export file (src/sync/exportFile.ts): its header and block lines, and importBlocks' refusals
 * of every kind, each with what stays committed. The source is a dev chain of BLOCKS blocks of
 * signed transfers, each with its validator's certificate.
 */

const BLOCKS = 8;
const accounts = devAccounts();
const validator = accounts[0] as DerivedAccount;
const genesis = devGenesis(accounts, 1_700_000_000_000);
const limits = { chainId: genesis.chain_id, maxTxBytes: genesis.consensus.max_tx_bytes };

function certify(number: number, hash: string, key = validator.privateKey): Commit {
  const vote = precommitVote(genesis.chain_id, number, 0, hash);
  return { height: number, round: 0, block_hash: hash, signatures: [signVote(vote, hexToBytes(key))] };
}

/** A dev chain of `count` blocks, each with three signed transfers; its blocks as an export serves them. */
async function sourceChain(count: number): Promise<{ store: MemoryStore; blocks: SyncBlock[] }> {
  const store = new MemoryStore();
  const chain = new Chain(store, genesis);
  await chain.open();
  for (let height = 1; height <= count; height++) {
    const txs: Tx[] = [1, 2, 3].map((i) => {
      const from = accounts[i] as DerivedAccount;
      const to = (accounts[9] as DerivedAccount).address;
      const input = signTx(from.privateKey, transferBody(from.address, to, height, height - 1, `b${height}`));
      return verifySignedTx(input as never, limits);
    });
    const executed = await chain.execute(txs, validator.address, genesis.genesis_time + height * 1000);
    await chain.commit(executed, certify(height, executed.hash), [validator.address]);
  }
  return { store, blocks: [...serveBlocks(store, 1, count, count)] };
}

let source: { store: MemoryStore; blocks: SyncBlock[] };
const headerLine = (from = 1, to = BLOCKS) =>
  encodeExportHeader(exportHeaderOf(genesis, source.store.getBlock(0) as never, from, to)).trimEnd();
const blockLines = (blocks = source.blocks) => blocks.map((b) => encodeExportBlock(b).trimEnd());

async function* linesOf(lines: readonly string[]): AsyncGenerator<string> {
  for (const line of lines) yield line;
}

async function freshChain(of: Genesis = genesis): Promise<{ chain: Chain; store: MemoryStore }> {
  const store = new MemoryStore();
  const chain = new Chain(store, of);
  await chain.open();
  return { chain, store };
}

/** Imports `lines` (header line first) into `chain`. */
function importLines(
  chain: Chain,
  store: MemoryStore | LmdbStore,
  lines: readonly string[],
  groupBlocks = 3,
) {
  const [first = "", ...rest] = lines;
  return importBlocks(chain, parseExportHeader(first), linesOf(rest), {
    ...limits,
    storedHash: (n) => store.getBlock(n)?.hash,
    groupBlocks,
  });
}

async function assertRefused(
  run: Promise<unknown> | (() => unknown),
  reason: ImportRefusal,
  message: RegExp,
): Promise<ImportRefusedError> {
  let caught: unknown;
  try {
    await (typeof run === "function" ? run() : run);
  } catch (error) {
    caught = error;
  }
  assert.ok(
    caught instanceof ImportRefusedError,
    `refused with an ImportRefusedError, got ${String(caught)}`,
  );
  assert.equal(caught.reason, reason, caught.message);
  assert.match(caught.message, message);
  assert.ok(!caught.message.includes("\n"), "one line");
  return caught;
}

/** A copy of block `number` of the source with `change` applied (a deep copy: the source stays intact). */
function alteredBlocks(number: number, change: (block: SyncBlock) => void): SyncBlock[] {
  return source.blocks.map((block) => {
    if (block.header.number !== number) return block;
    const copy = structuredClone(block);
    change(copy);
    return copy;
  });
}

describe("export file", () => {
  before(async () => {
    source = await sourceChain(BLOCKS);
    assert.equal(source.blocks.length, BLOCKS);
  });

  describe("header", () => {
    it("round-trips, names its format, version, chain and genesis", () => {
      const header = parseExportHeader(headerLine());
      assert.equal(header.format, EXPORT_FORMAT);
      assert.equal(header.version, EXPORT_VERSION);
      assert.equal(header.chain_id, genesis.chain_id);
      assert.equal(header.genesis_hash, source.store.getBlock(0)?.hash);
      assert.deepEqual([header.from, header.to], [1, BLOCKS]);
      assert.deepEqual(header.genesis, genesis);
    });

    it("refuses what is not an export, another version, and a genesis that does not match its hash", async () => {
      const good = JSON.parse(headerLine()) as Record<string, unknown>;
      const line = (patch: Record<string, unknown>) => JSON.stringify({ ...good, ...patch });
      await assertRefused(() => parseExportHeader("PK\u0003\u0004"), "bad_format", /first line is not JSON/);
      await assertRefused(() => parseExportHeader("[1,2]"), "bad_format", /not a chain-node export/);
      await assertRefused(() => parseExportHeader(line({ format: "other" })), "bad_format", /format/);
      await assertRefused(() => parseExportHeader(line({ version: 2 })), "bad_format", /version 2 .*\(1\)/);
      await assertRefused(() => parseExportHeader(line({ from: 0 })), "bad_format", /range 0\.\./);
      await assertRefused(
        () => parseExportHeader(line({ chain_id: 101 })),
        "bad_format",
        /genesis does not make/,
      );
      await assertRefused(
        () => parseExportHeader(line({ genesis: { ...genesis, genesis_time: 1 } })),
        "bad_format",
        /genesis does not make/,
      );
      await assertRefused(
        () => parseExportHeader(line({ genesis: { chain_id: 100 } })),
        "bad_format",
        /genesis/,
      );
    });

    it("lists every refusal reason once", () => {
      assert.equal(new Set(IMPORT_REFUSALS).size, IMPORT_REFUSALS.length);
    });
  });

  describe("import", () => {
    it("replays every block into a fresh home: same hashes, same certificates, same state root", async () => {
      const { chain, store } = await freshChain();
      const result = await importLines(chain, store, [headerLine(), ...blockLines(), ""]);
      assert.deepEqual(result, { imported: BLOCKS, skipped: 0, head: BLOCKS });
      for (let n = 0; n <= BLOCKS; n++) {
        assert.deepEqual(
          store.getBlock(n),
          source.store.getBlock(n),
          `block ${n} is stored as in the source`,
        );
      }
      assert.deepEqual(
        [...serveBlocks(store, 1, BLOCKS, BLOCKS)],
        source.blocks,
        "and serves the same export",
      );
    });

    it("into LMDB, in groups through commitTogether, with signatures checked on a verifier", async () => {
      await withTempDir("export-lmdb", async (dir) => {
        const store = new LmdbStore(dir);
        try {
          const chain = new Chain(store, genesis);
          await chain.open();
          const [first = "", ...rest] = [headerLine(), ...blockLines()];
          const progress: number[] = [];
          const result = await importBlocks(chain, parseExportHeader(first), linesOf(rest), {
            ...limits,
            storedHash: (n) => store.getBlock(n)?.hash,
            verifier: inlineVerifier,
            groupBlocks: 3,
            onProgress: (head) => progress.push(head),
          });
          assert.equal(result.head, BLOCKS);
          assert.deepEqual(progress, [3, 6, 8], "one durable group of up to three blocks at a time");
          assert.equal(store.getBlock(BLOCKS)?.hash, source.store.getBlock(BLOCKS)?.hash);
        } finally {
          await store.close();
        }
      });
    });

    it("resumes a home that holds a prefix, checking the blocks it already has", async () => {
      const { chain, store } = await freshChain();
      await importLines(chain, store, [headerLine(1, 3), ...blockLines(source.blocks.slice(0, 3))]);
      assert.equal(chain.head().header.number, 3);
      const result = await importLines(chain, store, [headerLine(), ...blockLines()]);
      assert.deepEqual(result, { imported: BLOCKS - 3, skipped: 3, head: BLOCKS });
      // Again: nothing to do.
      assert.deepEqual(await importLines(chain, store, [headerLine(), ...blockLines()]), {
        imported: 0,
        skipped: BLOCKS,
        head: BLOCKS,
      });
      // A file from 4 on continues a home at 3.
      const other = await freshChain();
      await importLines(other.chain, other.store, [
        headerLine(1, 3),
        ...blockLines(source.blocks.slice(0, 3)),
      ]);
      await importLines(other.chain, other.store, [
        headerLine(4, BLOCKS),
        ...blockLines(source.blocks.slice(3)),
      ]);
      assert.equal(other.chain.head().hash, source.store.getBlock(BLOCKS)?.hash);
    });

    it("refuses a file of another chain", async () => {
      const otherGenesis = { ...genesis, genesis_time: genesis.genesis_time + 1 };
      const { chain, store } = await freshChain(otherGenesis);
      await assertRefused(
        importLines(chain, store, [headerLine(), ...blockLines()]),
        "wrong_chain",
        /the file is of chain 100 \(genesis 0x[0-9a-f]{64}\), the home of chain 100 \(genesis 0x/,
      );
      assert.equal(chain.head().header.number, 0, "nothing imported");
    });

    it("refuses a file that starts after the home's head + 1", async () => {
      const { chain, store } = await freshChain();
      await assertRefused(
        importLines(chain, store, [headerLine(4, BLOCKS), ...blockLines(source.blocks.slice(3))]),
        "gap",
        /starts at block 4 but the home's head is 0: import blocks 1\.\.3 first/,
      );
    });

    it("refuses a cut or corrupt line, keeping the blocks before it", async () => {
      const lines = [headerLine(), ...blockLines()];
      const cut = [...lines.slice(0, 5), (lines[5] ?? "").slice(0, 100)];
      const { chain, store } = await freshChain();
      const error = await assertRefused(importLines(chain, store, cut), "corrupt_line", /line 6 is not JSON/);
      assert.equal(error.height, undefined);
      assert.equal(chain.head().header.number, 4, "blocks 1..4 (lines 2..5) are committed");
      // Rerun with the whole file: it continues.
      assert.equal((await importLines(chain, store, lines)).imported, BLOCKS - 4);

      const shapeless = [...lines.slice(0, 3), JSON.stringify({ header: { number: 3 } })];
      await assertRefused(
        importLines((await freshChain()).chain, store, shapeless),
        "corrupt_line",
        /line 4 is not a block in the export's shape/,
      );
      const skipped = [lines[0] ?? "", ...lines.slice(1, 3), ...lines.slice(4)];
      const fresh = await freshChain();
      await assertRefused(
        importLines(fresh.chain, fresh.store, skipped),
        "corrupt_line",
        /line 4 holds block 4, expected block 3/,
      );
      assert.ok(parseExportBlock(lines[1] ?? "", 2).header.number === 1);
    });

    it("refuses a file that ends before its last block", async () => {
      const lines = [headerLine(), ...blockLines()].slice(0, -2);
      const { chain, store } = await freshChain();
      await assertRefused(
        importLines(chain, store, lines),
        "truncated",
        new RegExp(`ends after block ${BLOCKS - 2} but its header says it holds blocks up to ${BLOCKS}`),
      );
      assert.equal(chain.head().header.number, BLOCKS - 2, "what it held is imported");
    });

    it("refuses a block whose certificate fails, naming the height and why", async () => {
      const forged = alteredBlocks(5, (block) => {
        block.commit = certify(5, block.commit.block_hash, (accounts[1] as DerivedAccount).privateKey);
      });
      const { chain, store } = await freshChain();
      const error = await assertRefused(
        importLines(chain, store, [headerLine(), ...blockLines(forged)]),
        "invalid_block",
        /^block 5 is refused: commit: /,
      );
      assert.equal(error.height, 5);
      assert.equal(chain.head().header.number, 4, "the blocks before it are committed");

      const elsewhere = alteredBlocks(5, (block) => {
        block.commit = source.blocks[5]?.commit as Commit;
      });
      await assertRefused(
        importLines((await freshChain()).chain, store, [headerLine(), ...blockLines(elsewhere)]),
        "invalid_block",
        /block 5 is refused: commit is for another block/,
      );
    });

    it("refuses a block whose state root is not what its execution makes, even with a valid certificate", async () => {
      const wrongRoot = alteredBlocks(3, (block) => {
        block.header.state_root = `0x${"ab".repeat(32)}`;
        // Re-signed by the validator: the certificate is valid, only execution can tell.
        block.commit = certify(3, hashHeader(block.header));
      });
      const { chain, store } = await freshChain();
      await assertRefused(
        importLines(chain, store, [headerLine(), ...blockLines(wrongRoot)]),
        "invalid_block",
        /^block 3 is refused: block 3: header differs from execution in state_root$/,
      );
      assert.equal(chain.head().header.number, 2);
    });

    it("refuses a file whose blocks differ from those the home already holds", async () => {
      const { chain, store } = await freshChain();
      await importLines(chain, store, [headerLine(), ...blockLines()]);
      const changed = alteredBlocks(2, (block) => {
        block.header.timestamp += 1;
      });
      await assertRefused(
        importLines(chain, store, [headerLine(), ...blockLines(changed)]),
        "invalid_block",
        /block 2 of the file differs from the home's block 2/,
      );
    });
  });
});
