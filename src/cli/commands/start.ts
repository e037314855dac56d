import { Command } from "commander";
import {
  ChainNode,
  createLogger,
  homePaths,
  loadGenesis,
  loadKey,
  loadOrCreateNodeKey,
} from "../../node/index.ts";
import { type CommonFlags, commonOptions, resolveNodeOptions } from "../options.ts";
import { runUntilSignal } from "../signals.ts";

export function startCommand(): Command {
  const command = new Command("start").description(
    "run a node of a network (a validator if keys/validator.json holds a key of the validator set)",
  );
  for (const option of commonOptions(".chain-node/node")) command.addOption(option);
  command.action(async (flags: CommonFlags) => {
    const genesis = loadGenesis(flags.home);
    const options = resolveNodeOptions(flags);
    const log = createLogger(options.logLevel);
    const validator = loadKey(homePaths(flags.home).validatorKey);
    const nodeKey = loadOrCreateNodeKey(flags.home);
    const node = await ChainNode.start(options, genesis, { kind: "network", validator, nodeKey }, log);
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
