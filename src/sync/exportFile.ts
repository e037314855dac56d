import {
  type Genesis,
  genesisBlock,
  hashHeader,
  parseGenesis,
  type StoredBlock,
  type Tx,
} from "../chain/index.ts";
import type { SignatureVerifier } from "../crypto/index.ts";
import {
  commitSyncBlock,
  isSyncBlock,
  type SyncBlock,
  type SyncChain,
  type SyncLimits,
  TOGETHER_MAX_TXS,
  verifyBlockSignatures,
} from "./blockSync.ts";

/**
 * The export file of `chain-node export` / `import`: newline-delimited JSON, so that it is
 * written and read as a stream. The first line is an ExportHeader (format, version, chain id,
 * genesis hash, the range, and the genesis itself: a fresh home is made from it); then one line per
 * block `from..to`, in order, each a SyncBlock exactly as blocks-by-range serves it to a syncing
 * peer (header, transactions, the parent's certificate it carries, its own certificate). Blocks
 * are checked on import exactly as block sync checks them (commitSyncBlock).
 */

export const EXPORT_FORMAT = "chain-node-export";
/** Bumped when a line's meaning changes; a reader refuses any version it does not know. */
export const EXPORT_VERSION = 1;

export interface ExportHeader {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  chain_id: number;
  /** The hash of block 0, which `genesis` makes. */
  genesis_hash: string;
  /** The first and last block of the file (from ≥ 1: block 0 is made from the genesis). */
  from: number;
  to: number;
  genesis: Genesis;
}

/** Why an export file or one of its blocks is refused (DESIGN.md §12: a clear line). */
export const IMPORT_REFUSALS = [
  /** Not an export file, or one of a version this node does not read. */
  "bad_format",
  /** Another chain: chain id or genesis differs from the home's. */
  "wrong_chain",
  /** A line that is not a block in the shape and order the header promises. */
  "corrupt_line",
  /** The file ends before its last block. */
  "truncated",
  /** The file starts after the home's head + 1: blocks in between are missing. */
  "gap",
  /** A block that fails a check (certificate, execution, state root), or differs from the home's. */
  "invalid_block",
] as const;
export type ImportRefusal = (typeof IMPORT_REFUSALS)[number];

export class ImportRefusedError extends Error {
  override readonly name = "ImportRefusedError";
  readonly reason: ImportRefusal;
  /** The block concerned, when there is one. */
  readonly height: number | undefined;

  constructor(reason: ImportRefusal, message: string, height?: number) {
    super(message);
    this.reason = reason;
    this.height = height;
  }
}

export function encodeExportHeader(header: ExportHeader): string {
  return `${JSON.stringify(header)}\n`;
}

export function encodeExportBlock(block: SyncBlock): string {
  return `${JSON.stringify(block)}\n`;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isHeight = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/** The first line of an export file, checked: format, version, range, and genesis against its hash. */
export function parseExportHeader(line: string): ExportHeader {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ImportRefusedError("bad_format", "not a chain-node export file (its first line is not JSON)");
  }
  if (!isRecord(value) || value.format !== EXPORT_FORMAT) {
    throw new ImportRefusedError(
      "bad_format",
      `not a chain-node export file (format is not "${EXPORT_FORMAT}")`,
    );
  }
  if (value.version !== EXPORT_VERSION) {
    throw new ImportRefusedError(
      "bad_format",
      `export format version ${JSON.stringify(value.version)} is not one this node reads (${EXPORT_VERSION})`,
    );
  }
  const { chain_id, genesis_hash, from, to } = value;
  if (!isHeight(chain_id) || typeof genesis_hash !== "string" || !isHeight(from) || !isHeight(to)) {
    throw new ImportRefusedError(
      "bad_format",
      "export header: chain_id, genesis_hash, from and to are required",
    );
  }
  if (from < 1 || to < from - 1) {
    throw new ImportRefusedError("bad_format", `export header: the range ${from}..${to} is not valid`);
  }
  let genesis: Genesis;
  try {
    genesis = parseGenesis(value.genesis);
  } catch (error) {
    throw new ImportRefusedError("bad_format", `export header: ${(error as Error).message}`);
  }
  if (genesis.chain_id !== chain_id || genesisBlock(genesis).hash !== genesis_hash) {
    throw new ImportRefusedError(
      "bad_format",
      "export header: its genesis does not make the chain id and genesis hash it names",
    );
  }
  return { format: EXPORT_FORMAT, version: EXPORT_VERSION, chain_id, genesis_hash, from, to, genesis };
}

/** One block line (line `lineNumber` of the file), in the SyncBlock shape; not yet checked. */
export function parseExportBlock(line: string, lineNumber: number): SyncBlock {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new ImportRefusedError("corrupt_line", `line ${lineNumber} is not JSON (a corrupt or cut line)`);
  }
  if (!isSyncBlock(value)) {
    throw new ImportRefusedError("corrupt_line", `line ${lineNumber} is not a block in the export's shape`);
  }
  return value;
}

export interface ImportOptions extends SyncLimits {
  /**
   * The hash of block `number` in the home: a block the file holds at or below the head must
   * match it. Undefined for a block the home no longer keeps (pruned), which is not compared.
   */
  storedHash(number: number): string | undefined;
  /** Checks transaction signatures ahead of execution, on worker threads (see verifyBlockSignatures). */
  verifier?: SignatureVerifier;
  /** Blocks applied in one commitTogether at most (fewer when they hold TOGETHER_MAX_TXS transactions). */
  groupBlocks?: number;
  /** After each group is durable: the new head and the file's last block. */
  onProgress?(head: number, to: number): void;
}

export interface ImportResult {
  /** Blocks committed by this run. */
  imported: number;
  /** Blocks the home already held (a resumed import), checked against the file. */
  skipped: number;
  head: number;
}

const DEFAULT_GROUP_BLOCKS = 256;

/**
 * Applies the blocks of an export (the lines after its header, numbered from 2) to `chain`: those
 * at or below the head are compared with the home's, the others checked and committed exactly as
 * block sync does, a group at a time through `chain.commitTogether`, so that each block is
 * all-or-nothing on a crash and an import killed at any point resumes from the head. Throws an
 * ImportRefusedError at the first problem; the blocks before it stay committed.
 */
export async function importBlocks(
  chain: SyncChain,
  header: ExportHeader,
  lines: AsyncIterable<string>,
  options: ImportOptions,
): Promise<ImportResult> {
  const genesisHash = options.storedHash(0);
  if (header.chain_id !== options.chainId || header.genesis_hash !== genesisHash) {
    throw new ImportRefusedError(
      "wrong_chain",
      `the file is of chain ${header.chain_id} (genesis ${header.genesis_hash}), the home of chain ${options.chainId} (genesis ${genesisHash})`,
    );
  }
  const startHead = chain.head().header.number;
  if (header.from > startHead + 1) {
    throw new ImportRefusedError(
      "gap",
      `the file starts at block ${header.from} but the home's head is ${startHead}: import blocks ${startHead + 1}..${header.from - 1} first`,
    );
  }
  const limits: SyncLimits = { chainId: options.chainId, maxTxBytes: options.maxTxBytes };
  const maxGroup = options.groupBlocks ?? DEFAULT_GROUP_BLOCKS;
  let group: SyncBlock[] = [];
  let groupTxs = 0;
  let imported = 0;
  let skipped = 0;

  const flush = async (): Promise<void> => {
    if (group.length === 0) return;
    const blocks = group;
    group = [];
    groupTxs = 0;
    const verified = blocks.map((block) =>
      options.verifier === undefined
        ? Promise.resolve(undefined)
        : verifyBlockSignatures(options.verifier, block, limits),
    );
    let refusal: ImportRefusedError | undefined;
    let index = 0;
    await chain.commitTogether(blocks, async (block) => {
      const alreadyVerified: ((tx: Tx) => boolean) | undefined = await verified[index++];
      const result = await commitSyncBlock(chain, block, limits, alreadyVerified);
      if ("refused" in result) {
        refusal = new ImportRefusedError(
          "invalid_block",
          `block ${block.header.number} is refused: ${result.refused}`,
          block.header.number,
        );
        return false;
      }
      imported++;
      return true;
    });
    if (refusal !== undefined) throw refusal;
    options.onProgress?.(chain.head().header.number, header.to);
  };

  let expected = header.from;
  let lineNumber = 1;
  try {
    for await (const line of lines) {
      lineNumber++;
      if (line === "") continue;
      const block = parseExportBlock(line, lineNumber);
      const number = block.header.number;
      if (number !== expected || number > header.to) {
        throw new ImportRefusedError(
          "corrupt_line",
          `line ${lineNumber} holds block ${number}, expected ${expected > header.to ? "the end of the file" : `block ${expected}`}`,
        );
      }
      expected++;
      if (number <= startHead) {
        const stored = options.storedHash(number);
        // A block the home no longer keeps (pruned, or below a restored snapshot) is not compared.
        if (stored !== undefined && stored !== hashHeader(block.header)) {
          throw new ImportRefusedError(
            "invalid_block",
            `block ${number} of the file differs from the home's block ${number}`,
            number,
          );
        }
        skipped++;
        continue;
      }
      group.push(block);
      groupTxs += block.txs.length;
      if (group.length >= maxGroup || groupTxs >= TOGETHER_MAX_TXS) await flush();
    }
  } catch (error) {
    // What was read before a bad line is valid on its own: committed, so a rerun resumes after it.
    if (error instanceof ImportRefusedError && error.reason === "corrupt_line") await flush();
    throw error;
  }
  await flush();
  if (expected <= header.to) {
    throw new ImportRefusedError(
      "truncated",
      `the file ends after block ${expected - 1} but its header says it holds blocks up to ${header.to}`,
      expected,
    );
  }
  return { imported, skipped, head: chain.head().header.number };
}

/** The export's header for a home of `genesis` whose stored block 0 is `storedGenesis`. */
export function exportHeaderOf(
  genesis: Genesis,
  storedGenesis: StoredBlock,
  from: number,
  to: number,
): ExportHeader {
  if (genesisBlock(genesis).hash !== storedGenesis.hash) {
    throw new Error(`the home's genesis.json does not make its stored block 0 (${storedGenesis.hash})`);
  }
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    chain_id: genesis.chain_id,
    genesis_hash: storedGenesis.hash,
    from,
    to,
    genesis,
  };
}
