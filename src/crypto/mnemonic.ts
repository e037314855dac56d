import { HDKey } from "@scure/bip32";
import { mnemonicToSeedSync } from "@scure/bip39";
import { privateKeyToAddress } from "./address.ts";
import { bytesToHex } from "./hex.ts";

export interface DerivedAccount {
  address: string;
  privateKey: string;
}

/** Accounts at m/44'/60'/0'/0/i, the path anvil and hardhat use for their test accounts. */
export function deriveAccounts(mnemonic: string, count: number): DerivedAccount[] {
  const root = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic));
  const accounts: DerivedAccount[] = [];
  for (let i = 0; i < count; i++) {
    const key = root.derive(`m/44'/60'/0'/0/${i}`).privateKey;
    if (key === null) throw new Error(`derivation failed at index ${i}`);
    accounts.push({ address: privateKeyToAddress(key), privateKey: bytesToHex(key) });
  }
  return accounts;
}
