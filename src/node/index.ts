/**
 * node: wiring. The only layer that knows every concrete class; composes options, opens the home,
 * starts and stops the parts in order.
 */
export {
  applyConfig,
  type ConfigLayer,
  type ConfigSource,
  envLayer,
  fileLayer,
  flagLayer,
  loadConfig,
  type NodeConfig,
  type ResolvedConfig,
  resolveConfig,
  type ValueSource,
} from "./config.ts";
export { type BackupManifest, backupHome } from "./backup.ts";
export { exportChain, importChain } from "./chainExport.ts";
// What `chain-node import` refuses, with its reason (src/sync/exportFile.ts).
export { ImportRefusedError } from "../sync/index.ts";
// What a state sync before start reports (node/stateSyncStart.ts; `start` draws it as a bar).
export type { StateSyncProgress } from "../sync/index.ts";
export { configJson, renderConfigToml } from "./configShow.ts";
// Test-only knobs (CHAIN_NODE_TEST_*), read at the process's edge and carried in NodeOptions.faults.
export { readTestFaults, TEST_FAULT_VARIABLES, type TestFaults } from "../faults/index.ts";
export { devAccounts, devGenesis, prepareDevHome } from "./devChain.ts";
export { homePaths, type KeyFile, loadGenesis, saveKey } from "./home.ts";
export {
  assertKeyNameFree,
  createKey,
  type KeyInfo,
  KeyringError,
  type KeyringErrorCode,
  keystoreScryptFor,
  listKeys,
  loadValidatorKey,
  nextFreeKeyName,
  type PasswordSource,
  randomPrivateKey,
  showKey,
  unlockKey,
} from "./keyring.ts";
export {
  decryptKeystore,
  encryptKeystore,
  isKeystoreJson,
  KeystoreError,
  type KeystoreErrorCode,
  type KeystoreV3,
  keystoreAddress,
  parseKeystore,
  STANDARD_SCRYPT,
  type ScryptParams,
} from "./keystore.ts";
export { createLogger, type LogFormat, type Logger } from "./logger.ts";
export {
  createTestnet,
  homeIdentity,
  initHome,
  loadOrCreateNodeKey,
  type TestnetFile,
  type TestnetNode,
} from "./networkHome.ts";
export { ChainNode, type NodeMode } from "./node.ts";
export {
  addValidators,
  installGenesis,
  readValidatorEntry,
  setBootstrap,
  type ValidatorEntry,
  validatorEntryPath,
} from "./genesisFlow.ts";
export type { NodeIdentity } from "./nodeIdentity.ts";
export { defaultNodeOptions, type NodeOptions, threadFor } from "./options.ts";
export {
  type ConfigSection,
  envName,
  SETTINGS,
  type Setting,
  settingId,
} from "./settings.ts";
export { createSnapshot, restoreSnapshot } from "./snapshots.ts";
export { NODE_VERSION } from "./version.ts";
