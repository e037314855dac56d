/**
 * chain: the domain core — types, transaction verification, the permission table, the state tree
 * with its Merkle root, block execution, commit certificates and genesis.
 * Owns: what is valid and what a block does to state. Does not own: storage (declares ChainStore),
 * the pool, consensus rounds, networking or RPC.
 */
export { blockSize, commitHash, GENESIS_PROPOSER, hashHeader, transactionsHash, txSize } from "./block.ts";
export {
  type BlockCheckContext,
  InvalidBlockError,
  type ProposedBlock,
  UNORDERED_TX_WINDOW_MS,
  signatureJobOf,
  signatureProves,
} from "./blockCheck.ts";
export { Chain, type ChainOptions, type ExecutedBlock } from "./chain.ts";
export type { BlockWrite, ChainStore, StateChangeEvent } from "./chainStore.ts";
export { type CommitCheck, precommitVote, signVote, verifyCommit } from "./commit.ts";
export {
  EXEC_FAILURE_CODES,
  type ExecFailureReason,
  TX_REJECT_REASONS,
  type TxRejectDetail,
  type TxRejectReason,
  TxRejectedError,
} from "./errors.ts";
export { executeTx } from "./execute.ts";
export { type Genesis, genesisBlock, parseGenesis } from "./genesis.ts";
export { historyAddresses, historyAddressesExecuted } from "./history.ts";
export { Listeners } from "./listeners.ts";
export { type ClassifiedOperation, classifyOperation } from "./operation.ts";
export { balancePath, noncePath, stakePath } from "./path.ts";
export {
  balanceOf,
  nonceOf,
  type StateChanges,
  StateOverlay,
  type StateReader,
  stakeOf,
} from "./state.ts";
export {
  checkManifestChain,
  chunkInfo,
  chunksHash,
  chunkItems,
  decodeManifest,
  encodeManifest,
  genesisItems,
  manifestHash,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type SnapshotChunkInfo,
  SnapshotError,
  type SnapshotErrorCode,
  type SnapshotManifest,
  snapshotTxs,
  snapshotValidatorSets,
  unorderedLookbackMs,
} from "./snapshot.ts";
export { SnapshotAssembler, type SnapshotRestore } from "./snapshotRestore.ts";
export {
  checkSnapshotTrust,
  type LinkedBlock,
  type TrustAnchor,
  type TrustCheck,
  trustRange,
} from "./snapshotTrust.ts";
export {
  type LeafProof,
  type StateHistoryStore,
  type StateReadLimits,
  StateReads,
  StateUnavailableError,
  type ValueProof,
} from "./stateReads.ts";
export {
  buildStateTrie,
  EMPTY_ROOT,
  type StateCommitment,
  StateTrie,
  type TrieNodeReader,
  type TrieWrite,
} from "./stateTrie.ts";
/** Where a stored trie record's RLP (what is hashed) ends, before its children's ids. */
export { rlpLength } from "./trieCodec.ts";
export { runSteps, TimeSlices } from "./timeSlices.ts";
export {
  isQuorum,
  selectValidators,
  stakeChangesOf,
  totalStake,
  VALIDATOR_SET_DELAY,
  type ValidatorSetChange,
} from "./validatorSet.ts";
export {
  prepareSignedTx,
  txBody,
  txFromCheck,
  type TxVerifyOptions,
  verifySignedTx,
} from "./transaction.ts";
export { normalizeReadPath, readValue, TooManyLeavesError } from "./valueRead.ts";
export type {
  BlockHeader,
  Commit,
  ConfirmedTx,
  JsonValue,
  SetValueOperation,
  SignedTxInput,
  StoredBlock,
  Tx,
  TxBody,
  TxLocation,
  TxResult,
  Validator,
  Vote,
} from "./types.ts";
