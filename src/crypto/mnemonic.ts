import { HDKey } from "@scure/bip32";
import { mnemonicToSeedSync } from "@scure/bip39";
import { privateKeyToAddress } from "./address.ts";
import { bytesToHex } from "./hex.ts";

export interface DerivedAccount {
  address: string;
  privateKey: string;
}

/**
 * Accounts at m/44'/60'/0'/0/i, the path anvil and hardhat use for their test accounts. The
 * common parent m/44'/60'/0'/0 is derived once: each level computes a public key in JavaScript,
 * and deriving every full path from the root took about 4× as long (a dev node does this at
 * every start).
 */
export function deriveAccounts(mnemonic: string, count: number): DerivedAccount[] {
  const parent = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive("m/44'/60'/0'/0");
  const accounts: DerivedAccount[] = [];
  for (let i = 0; i < count; i++) {
    const key = parent.deriveChild(i).privateKey;
    if (key === null) throw new Error(`derivation failed at index ${i}`);
    accounts.push({ address: privateKeyToAddress(key), privateKey: bytesToHex(key) });
  }
  return accounts;
}
