import { Command, Option } from "commander";
import { createSnapshot, readTestFaults, restoreSnapshot } from "../../node/index.ts";
import { parseIntFlag } from "../options.ts";

/** `snapshot create` and `snapshot restore` (docs/operations.md, "Snapshots"). */
export function snapshotCommand(): Command {
  const command = new Command("snapshot").description(
    "state snapshots: write one from a home (stopped or running), or start a new home from one",
  );
  command
    .command("create")
    .description("write a snapshot of the home's head block and state to a file")
    .addOption(new Option("--home <dir>", "node home (it may be running)").makeOptionMandatory())
    .addOption(new Option("--out <file>", "snapshot file to write").makeOptionMandatory())
    .addOption(
      new Option(
        "--height <n>",
        "the head's height, or that of a snapshot the node took ([snapshot] interval)",
      ).argParser(parseIntFlag(0, 0xffffffff)),
    )
    .action(async (flags: { home: string; out: string; height?: number }) => {
      const started = Date.now();
      const { manifest, manifestHash, copied, bytes } = await createSnapshot({
        home: flags.home,
        out: flags.out,
        height: flags.height,
        faults: readTestFaults(process.env),
      });
      console.log(`snapshot ${copied ? "copied" : "written"}: ${flags.out}
  chain id     ${manifest.chain_id}
  height       ${manifest.height}
  block hash   ${manifest.block_hash}
  state root   ${manifest.state_root}
  manifest     ${manifestHash}
  leaves       ${manifest.leaf_count}
  chunks       ${manifest.chunks.length}
  bytes        ${bytes}
  took         ${Date.now() - started} ms`);
    });
  command
    .command("restore")
    .description("fill a home that holds no chain data from a snapshot file (writes genesis.json if absent)")
    .addOption(new Option("--home <dir>", "node home to restore into").makeOptionMandatory())
    .addOption(new Option("--file <file>", "snapshot file").makeOptionMandatory())
    .action(async (flags: { home: string; file: string }) => {
      const started = Date.now();
      const { manifest, wroteStore, wroteGenesis } = await restoreSnapshot({
        home: flags.home,
        file: flags.file,
        faults: readTestFaults(process.env),
      });
      console.log(`restored ${flags.home} at height ${manifest.height}
  chain id     ${manifest.chain_id}
  block hash   ${manifest.block_hash}
  state root   ${manifest.state_root} (rebuilt and checked)
  data         ${wroteStore ? "written" : "already restored by an earlier run"}
  genesis.json ${wroteGenesis ? "written from the snapshot" : "kept (same chain)"}
  took         ${Date.now() - started} ms
Start it with: chain-node start --home ${flags.home} (or chain-node dev --home ${flags.home} for a dev chain)`);
    });
  return command;
}
