import { Command, Option } from "commander";
import { createLogger, createTestnet, type NodeOptions } from "../../node/index.ts";
import { logOptions, parseIntFlag } from "../options.ts";

interface TestnetFlags {
  validators: number;
  fullNodes: number;
  out: string;
  basePort: number;
  chainId: number;
  blockTime: number;
  logLevel?: NodeOptions["logLevel"];
  logFormat?: NodeOptions["logFormat"];
  hosts?: string[];
}

export function testnetCommand(): Command {
  const command = new Command("testnet");
  for (const option of logOptions()) command.addOption(option);
  return command
    .description("create the homes of a local network: N validators and M full nodes on 127.0.0.1")
    .addOption(new Option("--validators <n>", "validators").default(4).argParser(parseIntFlag(1, 50)))
    .addOption(
      new Option("--full-nodes <m>", "non-validating nodes").default(0).argParser(parseIntFlag(0, 50)),
    )
    .addOption(new Option("--out <dir>", "where the homes and testnet.json go").makeOptionMandatory())
    .addOption(
      new Option("--base-port <p>", "node i: RPC on p + i, p2p on p + 100 + i")
        .default(26600)
        .argParser(parseIntFlag(1, 65_000)),
    )
    .addOption(
      new Option("--chain-id <id>", "chain id (at most 109: v must fit one byte)")
        .default(101)
        .argParser(parseIntFlag(0, 109)),
    )
    .addOption(
      new Option("--block-time <ms>", "block time in genesis")
        .default(1000)
        .argParser(parseIntFlag(1, 3_600_000)),
    )
    .addOption(
      new Option(
        "--hosts <ips>",
        "one IP per node, comma-separated: node i lives on host i (same ports everywhere; p2p on 0.0.0.0, announcing its IP)",
      ).argParser((value) => value.split(",").map((ip) => ip.trim())),
    )
    .action((flags: TestnetFlags) => {
      const testnet = createTestnet({
        validators: flags.validators,
        fullNodes: flags.fullNodes,
        out: flags.out,
        basePort: flags.basePort,
        chainId: flags.chainId,
        blockTimeMs: flags.blockTime,
        hosts: flags.hosts,
      });
      const log = createLogger(flags.logLevel ?? "info", flags.logFormat);
      for (const node of testnet.nodes) log.debug({ ...node }, "node home written");
      console.log(`testnet in ${flags.out} (chain id ${testnet.chain_id}); start each node with:`);
      for (const node of testnet.nodes) {
        console.log(
          `  chain-node start --home ${node.home}    # ${node.rpc_url}${node.validator ? "" : " (full node)"}`,
        );
      }
    });
}
