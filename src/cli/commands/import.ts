import { Command, Option } from "commander";
import { ImportRefusedError, importChain, readTestFaults } from "../../node/index.ts";
import { resolveNodeOptions } from "../options.ts";
import { progressOnStderr } from "../progress.ts";

interface ImportFlags {
  home: string;
  file: string;
}

/** `chain-node import`: an export replayed into a home, every block checked as sync checks it. */
export function importCommand(): Command {
  return new Command("import")
    .description(
      "replay an export into a home (a new one, or one holding a prefix of the same chain: continues from its head); the home's node must be stopped",
    )
    .addOption(new Option("--home <dir>", "node home to import into").makeOptionMandatory())
    .addOption(new Option("--file <file>", "export file (chain-node export)").makeOptionMandatory())
    .action(async (flags: ImportFlags) => {
      const progress = progressOnStderr("import", "blocks");
      const { retainStates, retainBlocks } = resolveNodeOptions({ home: flags.home }).storage;
      try {
        const summary = await importChain({
          home: flags.home,
          file: flags.file,
          faults: readTestFaults(process.env),
          // The home's [storage] retention (config.toml, CHAIN_NODE_STORAGE_*): import prunes as its node would.
          retention: { retainStates, retainBlocks },
          onProgress: (head, to) => progress.update(head, to),
        });
        progress.stop();
        console.log(
          `imported ${summary.imported} blocks into ${flags.home} (${summary.skipped} already there); head ${summary.head} of chain ${summary.chainId}`,
        );
        if (summary.wroteGenesis) console.log(`  genesis.json written from ${flags.file}`);
        console.log(
          "Start it with chain-node start --home (add config.toml and keys/ for a network node; docs/operations.md) or chain-node dev --home for a dev chain.",
        );
      } catch (error) {
        if (error instanceof ImportRefusedError) {
          throw new Error(`import refused (${error.reason}): ${error.message}`);
        }
        throw error;
      } finally {
        progress.stop();
      }
    });
}
