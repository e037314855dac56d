import { Command } from "commander";
import {
  ChainNode,
  createLogger,
  homePaths,
  loadGenesis,
  loadOrCreateNodeKey,
  loadValidatorKey,
  type StateSyncProgress,
} from "../../node/index.ts";
import { type CommonFlags, commonOptions, resolveNodeOptions } from "../options.ts";
import { type PasswordFlags, passwordOptions, readPassword } from "../password.ts";
import { progressOnStderr } from "../progress.ts";
import { runUntilSignal } from "../signals.ts";

export function startCommand(): Command {
  const command = new Command("start").description(
    "run a node of a network (a validator if keys/validator.json holds a key of the validator set)",
  );
  // The password options unlock keys/validator.json when it is an encrypted keystore (docs/keys.md).
  for (const option of [...commonOptions(".chain-node/node"), ...passwordOptions()])
    command.addOption(option);
  command.action(async (flags: CommonFlags & PasswordFlags) => {
    const genesis = loadGenesis(flags.home);
    const options = resolveNodeOptions(flags);
    const log = createLogger(options.logLevel, options.logFormat);
    const validator = await loadValidatorKey(homePaths(flags.home).validatorKey, () =>
      readPassword(flags, "the validator key (keys/validator.json)"),
    );
    const nodeKey = loadOrCreateNodeKey(flags.home);
    // A state sync before start ([sync] state_sync) draws a bar on a terminal; the log has it too.
    const bar = process.stderr.isTTY === true ? progressOnStderr("state sync", "chunks") : undefined;
    const onStateSyncProgress = (progress: StateSyncProgress) => {
      if (progress.phase === "fetching") bar?.update(progress.chunksDone, progress.chunksTotal);
      else if (progress.phase === "rebuilding") bar?.stop();
    };
    const node = await ChainNode.start(
      options,
      genesis,
      { kind: "network", validator, nodeKey, onStateSyncProgress },
      log,
    ).finally(() => bar?.stop());
    console.log(`chain-node ${options.name}
  RPC URL      ${node.rpcUrl}
  p2p          ${node.p2pAddrs.join(" ") || "(not listening)"}
  chain id     ${genesis.chain_id}
  network id   ${genesis.network_id}
  validator    ${validator?.address ?? "(none: full node)"}`);
    await runUntilSignal(() => node.stop());
  });
  return command;
}
