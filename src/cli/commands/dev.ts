import { Command, Option } from "commander";
import { ChainNode, createLogger, prepareDevHome } from "../../node/index.ts";
import { hexToBytes } from "../../crypto/index.ts";
import { type CommonFlags, commonOptions, parseIntFlag, resolveNodeOptions } from "../options.ts";
import { runUntilSignal } from "../signals.ts";

interface DevFlags extends CommonFlags {
  blockTime?: number;
  reset?: boolean;
}

export function devCommand(): Command {
  const command = new Command("dev").description(
    "run a one-validator development chain with ten funded test accounts (keys are public)",
  );
  for (const option of commonOptions(".chain-node/dev")) command.addOption(option);
  command
    .addOption(
      new Option("--block-time <ms>", "minimum interval between blocks, ms").argParser(
        parseIntFlag(1, 3_600_000),
      ),
    )
    .option("--reset", "wipe the dev home first")
    .action(async (flags: DevFlags) => {
      const { genesis, accounts } = prepareDevHome(flags.home, flags.reset === true);
      const options = resolveNodeOptions(flags);
      options.rpc.cors = true; // dev mode: browser dApps on another origin may call it
      options.blockTimeMs = flags.blockTime;
      const log = createLogger(options.logLevel, options.logFormat);
      const validator = accounts[0];
      if (validator === undefined) throw new Error("no dev accounts");
      const node = await ChainNode.start(
        options,
        genesis,
        {
          kind: "dev",
          validator: { address: validator.address, privateKey: hexToBytes(validator.privateKey) },
        },
        log,
      );
      console.log(`\nchain-node dev chain
  RPC URL      ${node.rpcUrl}
  explorer     ${node.rpcUrl}/explorer
  chain id     ${genesis.chain_id}
  network id   ${genesis.network_id}
  block time   ${options.blockTimeMs ?? genesis.consensus.block_time_ms} ms (blocks are made when transactions are pending)
  home         ${flags.home}

Accounts (balance ${accounts.length > 0 ? genesis.accounts[0]?.balance : 0} each; account 0 is the validator):`);
      accounts.forEach((account, i) => {
        console.log(`  (${i}) ${account.address}  private key ${account.privateKey}`);
      });
      console.log(
        "\nWARNING: these keys come from the public test mnemonic. Anyone can spend from them: never use them for value.\n",
      );
      await runUntilSignal(() => node.stop());
    });
  return command;
}
