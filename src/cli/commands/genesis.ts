import { Command, Option } from "commander";
import {
  addValidators,
  homeIdentity,
  installGenesis,
  readValidatorEntry,
  setBootstrap,
} from "../../node/index.ts";
import { resolveNodeOptions } from "../options.ts";

/**
 * `chain-node genesis add-validator|install`: a genesis that validators on separate hosts build
 * together (docs/deployment.md). Keys never leave their host: an entry carries an address, a stake
 * and the addresses peers dial (node/genesisFlow.ts).
 */
export function genesisCommand(): Command {
  const command = new Command("genesis").description(
    "build a shared genesis from validator entries (add-validator) and put it into homes (install)",
  );
  command.addCommand(
    new Command("add-validator")
      .description("add validator entries (files, or JSON text) to the home's genesis.json")
      .addOption(new Option("--home <dir>", "the home that assembles the genesis").makeOptionMandatory())
      .argument("<entries...>", "validator entry files (validator-entry.json) or their JSON text")
      .action((entries: string[], flags: { home: string }) => {
        const parsed = entries.map(readValidatorEntry);
        const { genesis, added } = addValidators(flags.home, parsed);
        const own = homeIdentity(flags.home, resolveNodeOptions({ home: flags.home }).p2p);
        const peers = setBootstrap(
          flags.home,
          [...currentBootstrap(flags.home), ...parsed.flatMap((entry) => entry.announce)],
          own.peerId,
        );
        console.log(
          `${flags.home}/genesis.json: ${genesis.validators.length} validators (${added.length} added: ${added.join(", ") || "none"})`,
        );
        console.log("Send it to every host, with these bootstrap addresses:");
        for (const addr of [...own.announce, ...peers]) {
          console.log(`  ${addr}`);
        }
      }),
  );
  command.addCommand(
    new Command("install")
      .description("put a shared genesis.json into a home (checked against what the home holds)")
      .addOption(new Option("--home <dir>", "the node home").makeOptionMandatory())
      .addOption(new Option("--genesis <file>", "the shared genesis.json").makeOptionMandatory())
      .addOption(
        new Option("--bootstrap <multiaddrs...>", "peers to dial first (this node's own address is skipped)"),
      )
      .addOption(new Option("--as-full-node", "install although the genesis lacks this home's validator"))
      .action((flags: { home: string; genesis: string; bootstrap?: string[]; asFullNode?: boolean }) => {
        const { genesis, hash, validates } = installGenesis(flags.home, flags.genesis, {
          asFullNode: flags.asFullNode === true,
        });
        const ownId = homeIdentity(flags.home, resolveNodeOptions({ home: flags.home }).p2p).peerId;
        const peers =
          flags.bootstrap === undefined
            ? currentBootstrap(flags.home)
            : setBootstrap(flags.home, flags.bootstrap, ownId);
        console.log(
          `${flags.home}: chain ${genesis.chain_id}, block 0 ${hash}, ${genesis.validators.length} validators`,
        );
        console.log(validates ? "  this home validates" : "  this home runs as a full node");
        console.log(`  bootstrap: ${peers.length === 0 ? "none (set --bootstrap)" : peers.join(" ")}`);
        console.log(`Start it with: chain-node start --home ${flags.home}`);
      }),
  );
  return command;
}

const currentBootstrap = (home: string): string[] => resolveNodeOptions({ home }).p2p.bootstrap;
