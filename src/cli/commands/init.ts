import { Command, Option } from "commander";
import { initHome } from "../../node/index.ts";
import { parseIntFlag } from "../options.ts";

interface InitFlags {
  home: string;
  chainId: number;
  networkId: number;
  rpcPort: number;
  p2pPort: number;
  name: string;
}

export function initCommand(): Command {
  return new Command("init")
    .description(
      "create a node home: config.toml, genesis.json (this validator alone), node and validator keys",
    )
    .addOption(new Option("--home <dir>", "node home to create").makeOptionMandatory())
    .addOption(
      new Option("--chain-id <id>", "chain id (at most 109: v must fit one byte)")
        .default(101)
        .argParser(parseIntFlag(0, 109)),
    )
    .addOption(
      new Option("--network-id <id>", "network id (0 main, 1 test)").default(1).argParser(parseIntFlag(0, 1)),
    )
    .addOption(
      new Option("--rpc-port <port>", "JSON-RPC port").default(8545).argParser(parseIntFlag(0, 65535)),
    )
    .addOption(
      new Option("--p2p-port <port>", "peer-to-peer port").default(26656).argParser(parseIntFlag(0, 65535)),
    )
    .addOption(new Option("--name <name>", "node name shown by net_nodeInfo").default("node"))
    .action((flags: InitFlags) => {
      const { address, peerId } = initHome(flags.home, {
        chainId: flags.chainId,
        networkId: flags.networkId as 0 | 1,
        rpcPort: flags.rpcPort,
        p2pPort: flags.p2pPort,
        name: flags.name,
      });
      console.log(`initialised ${flags.home}
  validator  ${address}
  peer id    ${peerId}
Start it with: chain-node start --home ${flags.home}`);
    });
}
