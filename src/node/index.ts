/**
 * node: wiring. The only layer that knows every concrete class; composes options, opens the home,
 * starts and stops the parts in order.
 */
export { applyConfig, loadConfig, type NodeConfig } from "./config.ts";
export { DEV_MNEMONIC, devAccounts, devGenesis, prepareDevHome } from "./devChain.ts";
export { homePaths, type KeyFile, loadGenesis, loadKey, saveGenesis, saveKey } from "./home.ts";
export { createLogger, type Logger } from "./logger.ts";
export {
  createTestnet,
  initHome,
  loadOrCreateNodeKey,
  type TestnetFile,
  type TestnetNode,
} from "./networkHome.ts";
export { ChainNode, type NodeMode } from "./node.ts";
export { defaultNodeOptions, type NodeOptions } from "./options.ts";
export { NODE_VERSION } from "./version.ts";
