import { existsSync } from "node:fs";
import { Command, Option } from "commander";
import {
  createLogger,
  encryptKeystore,
  homePaths,
  initHome,
  type NodeOptions,
  randomPrivateKey,
  validatorEntryPath,
} from "../../node/index.ts";
import { logOptions, parseIntFlag } from "../options.ts";
import { type PasswordFlags, passwordOptions, readNewPassword } from "../password.ts";
import { keystoreScrypt } from "./keys.ts";

interface InitFlags extends PasswordFlags {
  home: string;
  chainId: number;
  networkId: number;
  rpcPort: number;
  p2pPort: number;
  name: string;
  encryptKey?: boolean;
  p2pHost?: string;
  p2pAnnounce?: string[];
  stake?: number;
  balance?: number;
  genesis?: string;
  bootstrap?: string[];
  logLevel?: NodeOptions["logLevel"];
  logFormat?: NodeOptions["logFormat"];
}

export function initCommand(): Command {
  const command = new Command("init");
  for (const option of [...logOptions(), ...passwordOptions()]) command.addOption(option);
  return command
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
    .addOption(new Option("--p2p-host <ip>", "p2p listen address (0.0.0.0: reachable from other hosts)"))
    .addOption(
      new Option("--p2p-announce <multiaddrs...>", "addresses other nodes dial this one at (p2p.announce)"),
    )
    .addOption(
      new Option("--stake <n>", "this validator's genesis stake (in its validator entry)").argParser(
        parseIntFlag(1, Number.MAX_SAFE_INTEGER),
      ),
    )
    .addOption(
      new Option("--balance <n>", "this validator's genesis balance (in its validator entry)").argParser(
        parseIntFlag(0, Number.MAX_SAFE_INTEGER),
      ),
    )
    .addOption(
      new Option(
        "--genesis <file>",
        "join an existing network: use this genesis.json (a full node; no entry)",
      ).conflicts(["stake", "balance"]),
    )
    .addOption(
      new Option("--bootstrap <multiaddrs...>", "peers to dial first (multiaddrs ending in /p2p/<id>)"),
    )
    .addOption(
      new Option(
        "--encrypt-key",
        "write keys/validator.json as a password-encrypted v3 keystore (docs/keys.md)",
      ),
    )
    .action(async (flags: InitFlags) => {
      // A password without --encrypt-key would leave the key in clear while the operator thinks otherwise.
      if (!flags.encryptKey && (flags.passwordFile ?? flags.passwordEnv) !== undefined) {
        throw new Error("--password-file and --password-env need --encrypt-key");
      }
      // Checked before asking for a password; initHome checks again.
      if (existsSync(homePaths(flags.home).genesis)) throw new Error(`${flags.home} is already initialised`);
      const encryptedValidatorKey = flags.encryptKey
        ? await encryptKeystore(
            randomPrivateKey(),
            await readNewPassword(flags, "the validator key"),
            keystoreScrypt(),
          )
        : undefined;
      const result = initHome(flags.home, {
        chainId: flags.chainId,
        networkId: flags.networkId as 0 | 1,
        rpcPort: flags.rpcPort,
        p2pPort: flags.p2pPort,
        name: flags.name,
        encryptedValidatorKey,
        p2pHost: flags.p2pHost,
        announce: flags.p2pAnnounce,
        stake: flags.stake,
        balance: flags.balance,
        genesisFile: flags.genesis,
        bootstrap: flags.bootstrap,
      });
      const log = createLogger(flags.logLevel ?? "info", flags.logFormat);
      log.debug({ ...homePaths(flags.home) }, "home written");
      console.log(`initialised ${flags.home}
  validator  ${result.address}
  peer id    ${result.peerId}`);
      for (const addr of result.identity.announce) console.log(`  announce   ${addr}`);
      if (result.identity.guessed) {
        console.log("  (this machine's interfaces: behind NAT or in a container, set --p2p-announce)");
      }
      if (result.genesisHash !== undefined) {
        console.log(
          `  genesis    block 0 ${result.genesisHash}\nStart it with: chain-node start --home ${flags.home}`,
        );
        return;
      }
      console.log(`Start it alone with: chain-node start --home ${flags.home}
To build a network, give this entry (also in ${validatorEntryPath(flags.home)}) to whoever
assembles the genesis (chain-node genesis add-validator), then install the genesis they send
(chain-node genesis install). It holds no key.
${JSON.stringify(result.entry)}`);
    });
}
