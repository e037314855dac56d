import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { Genesis } from "../chain/index.ts";
import { homePaths, writeAtomically } from "./home.ts";

/**
 * Block 0's hash for a genesis, remembered per home, so that opening a home does not rebuild block
 * 0 from genesis.json to compare it with the stored one: the state root of a million genesis
 * accounts takes about 10 s to compute, digesting the genesis about 1 s (docs/decisions/022).
 *
 * The record (`data/genesis-check.json`) maps a digest of the genesis (sha256 of its JSON) to the
 * hash block 0 has when built from that genesis. That is a function of the genesis alone, so a
 * record is either for the genesis at hand (its digest matches) or ignored: an edited genesis.json
 * is built and compared again. The chain still compares the stored block 0 with the hash, so a
 * data directory of another chain is refused as before. Only whoever can write the home can forge
 * a record, and they can replace its chain data as well.
 */
interface GenesisCheck {
  digest: string;
  hash: string;
}

/** sha256 of the genesis as JSON (its keys in the order the file gave them). */
export function genesisDigest(genesis: Genesis): string {
  return createHash("sha256").update(JSON.stringify(genesis)).digest("hex");
}

/** Block 0's hash recorded in `home` for the genesis whose digest is `digest`, if any. */
export function rememberedGenesisHash(home: string, digest: string): string | undefined {
  const path = homePaths(home).genesisCheck;
  if (!existsSync(path)) return undefined;
  try {
    const record = JSON.parse(readFileSync(path, "utf8")) as Partial<GenesisCheck>;
    return record.digest === digest && typeof record.hash === "string" ? record.hash : undefined;
  } catch {
    return undefined; // a torn or foreign file: built and compared, then written again
  }
}

/** Records block 0's hash for the genesis of `digest`, once the chain has checked it (atomically). */
export function rememberGenesisHash(home: string, digest: string, hash: string): void {
  const record: GenesisCheck = { digest, hash };
  writeAtomically(homePaths(home).genesisCheck, `${JSON.stringify(record)}\n`);
}
