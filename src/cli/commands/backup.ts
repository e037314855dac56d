import { Command, Option } from "commander";
import { backupHome } from "../../node/index.ts";

interface BackupFlags {
  home: string;
  out: string;
  withKeys?: boolean;
  compact?: boolean;
}

/** `chain-node backup`: a consistent copy of a (running) node's home that starts as it is. */
export function backupCommand(): Command {
  return new Command("backup")
    .description(
      "copy a home (LMDB's consistent copy of data/, genesis.json, config.toml) while its node runs; keys only with --with-keys",
    )
    .addOption(new Option("--home <dir>", "node home to copy").makeOptionMandatory())
    .addOption(
      new Option("--out <dir>", "directory to create (must not exist, or be empty)").makeOptionMandatory(),
    )
    .addOption(
      new Option("--with-keys", "copy keys/ too (validator and node keys: secrets; docs/operations.md)"),
    )
    .addOption(new Option("--compact", "leave LMDB's free pages out of the copy (slower, smaller)"))
    .action(async (flags: BackupFlags) => {
      const manifest = await backupHome({
        home: flags.home,
        out: flags.out,
        withKeys: flags.withKeys === true,
        compact: flags.compact === true,
      });
      console.log(
        `backed up ${flags.home} (chain ${manifest.chain_id}, head ${manifest.head}) to ${flags.out}; keys ${manifest.with_keys ? "copied" : "not copied (--with-keys copies them)"}`,
      );
    });
}
