import { existsSync, rmSync } from "node:fs";
import type { Genesis } from "../chain/index.ts";
import { type DerivedAccount, deriveAccounts } from "../crypto/index.ts";
import { homePaths, loadGenesis, saveGenesis, saveKey } from "./home.ts";
import { HomeLock } from "./homeLock.ts";

/** The public test mnemonic anvil and hardhat use: its keys are known to everyone. */
const DEV_MNEMONIC = "test test test test test test test test test test test junk";
const DEV_CHAIN_ID = 100;
const DEV_NETWORK_ID = 1;
const DEV_ACCOUNT_BALANCE = 1_000_000_000_000;
const DEV_VALIDATOR_STAKE = 1_000_000;

export function devAccounts(): DerivedAccount[] {
  return deriveAccounts(DEV_MNEMONIC, 10);
}

export function devGenesis(accounts: DerivedAccount[], genesisTime: number): Genesis {
  const validator = accounts[0] as DerivedAccount;
  return {
    chain_id: DEV_CHAIN_ID,
    network_id: DEV_NETWORK_ID,
    genesis_time: genesisTime,
    accounts: accounts.map((a) => ({ address: a.address, balance: DEV_ACCOUNT_BALANCE })),
    validators: [{ address: validator.address, stake: DEV_VALIDATOR_STAKE }],
    // A dev chain has one validator, its own key, by construction: no stake can reach this
    // minimum, and a selection that finds nobody keeps the set (chain/validatorSet.ts), so staking
    // works as on any chain but never hands block signing to a key the dev node does not hold.
    consensus: {
      block_time_ms: 1000,
      min_validator_stake: Number.MAX_SAFE_INTEGER,
      max_validators: 1,
      max_block_txs: 5000,
      max_block_bytes: 4 * 1024 * 1024,
      max_tx_bytes: 100 * 1024,
    },
  };
}

/**
 * Makes (or reuses) a dev home: genesis.json and the validator key of account 0. The genesis
 * time is fixed when the home is made, so restarts continue the same chain.
 */
export function prepareDevHome(
  home: string,
  reset: boolean,
): { genesis: Genesis; accounts: DerivedAccount[] } {
  const paths = homePaths(home);
  if (reset) {
    // Not from under a node that runs on it: refused (HomeInUseError) like a second start.
    if (existsSync(paths.data)) HomeLock.acquire(paths.data).release();
    rmSync(home, { recursive: true, force: true });
  }
  const accounts = devAccounts();
  if (!existsSync(paths.genesis)) saveGenesis(home, devGenesis(accounts, Date.now()));
  if (!existsSync(paths.validatorKey))
    saveKey(paths.validatorKey, (accounts[0] as DerivedAccount).privateKey);
  return { genesis: loadGenesis(home), accounts };
}
