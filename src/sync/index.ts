/**
 * sync: catching up from peers. Fetches blocks by range, verifies each certificate against the
 * validator set of its height, re-executes each block (transactions, state root) and commits.
 * Owns: when and what to fetch, and judging what peers serve. Does not own: transport (a
 * BlockSource is given), execution rules (chain).
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
