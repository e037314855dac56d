import { Command, Option } from "commander";
import { exportChain } from "../../node/index.ts";
import { parseIntFlag } from "../options.ts";
import { progressOnStderr } from "../progress.ts";

interface ExportFlags {
  home: string;
  out: string;
  from?: number;
  to?: number;
}

/** `chain-node export`: a home's blocks with their certificates, as a file `import` replays. */
export function exportCommand(): Command {
  return new Command("export")
    .description(
      "write a home's genesis and committed blocks (transactions, certificates) to a file; the node may be running",
    )
    .addOption(new Option("--home <dir>", "node home to read").makeOptionMandatory())
    .addOption(new Option("--out <file>", "file to write (must not exist)").makeOptionMandatory())
    .addOption(
      new Option("--from <n>", "first block (default 1)").argParser(parseIntFlag(1, Number.MAX_SAFE_INTEGER)),
    )
    .addOption(
      new Option("--to <n>", "last block (default: the head)").argParser(
        parseIntFlag(0, Number.MAX_SAFE_INTEGER),
      ),
    )
    .action(async (flags: ExportFlags) => {
      const progress = progressOnStderr("export", "blocks");
      try {
        const summary = await exportChain({
          home: flags.home,
          out: flags.out,
          from: flags.from,
          to: flags.to,
          onProgress: (done, total) => progress.update(done, total),
        });
        progress.stop();
        console.log(
          `exported blocks ${summary.from}..${summary.to} of chain ${summary.chainId} (${summary.blocks} blocks, ${summary.bytes} bytes) to ${flags.out}`,
        );
      } finally {
        progress.stop();
      }
    });
}
