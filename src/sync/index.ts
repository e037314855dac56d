/**
 * sync: catching up from peers. Fetches blocks by range, verifies each certificate against the
 * validator set of its height, re-executes each block (transactions, state root) and commits.
 * Owns: when and what to fetch, and judging what peers serve; the export file of `chain-node
 * export`/`import` (exportFile.ts), whose blocks are the same SyncBlocks judged the same way
 * (commitSyncBlock). Does not own: transport (a BlockSource is given), execution rules (chain),
 * files (node/ reads and writes them).
 */
export {
  type BlockReader,
  type BlockSource,
  BlockSync,
  groupsOf,
  type SyncBlock,
  type SyncChain,
  type SyncOptions,
  type SyncPeer,
  type SyncPool,
  serveBlocks,
  TOGETHER_MAX_TXS,
} from "./blockSync.ts";
export {
  type SnapshotSource,
  StateSync,
  type StateSyncOptions,
  type StateSyncProgress,
} from "./stateSync.ts";
export {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportHeader,
  encodeExportBlock,
  encodeExportHeader,
  exportHeaderOf,
  IMPORT_REFUSALS,
  type ImportOptions,
  ImportRefusedError,
  type ImportRefusal,
  type ImportResult,
  importBlocks,
  parseExportBlock,
  parseExportHeader,
} from "./exportFile.ts";
