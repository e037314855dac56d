import { Command, Option } from "commander";
import { homeIdentity } from "../../node/index.ts";
import { type CommonFlags, commonOptions, resolveNodeOptions } from "../options.ts";

interface IdFlags extends CommonFlags {
  json?: boolean;
}

/**
 * `chain-node id --home DIR`: the node's peer id and the multiaddrs it announces, each ending in
 * /p2p/<id>: what another operator puts in `p2p.bootstrap`. The settings resolve as `start`
 * resolves them (config.toml, CHAIN_NODE_*, flags), so `--p2p-announce` shows its effect.
 */
export function idCommand(): Command {
  const command = new Command("id").description(
    "print the node's peer id and the addresses it announces (what other nodes bootstrap from)",
  );
  for (const option of commonOptions(".chain-node/node")) command.addOption(option);
  command.addOption(new Option("--json", "print {peer_id, announce, guessed} as JSON"));
  return command.action((flags: IdFlags) => {
    const options = resolveNodeOptions(flags);
    const identity = homeIdentity(flags.home, options.p2p);
    if (flags.json) {
      console.log(
        JSON.stringify({ peer_id: identity.peerId, announce: identity.announce, guessed: identity.guessed }),
      );
      return;
    }
    console.log(`peer id   ${identity.peerId}`);
    for (const addr of identity.announce) console.log(`announce  ${addr}`);
    if (identity.announce.length === 0)
      console.log("announce  (none: set p2p.announce to an address other hosts reach)");
    if (identity.guessed) {
      console.error(
        `note: p2p.host is ${options.p2p.host} and p2p.announce is empty, so these are this machine's interfaces; behind NAT or in a container, set p2p.announce (--p2p-announce, CHAIN_NODE_P2P_ANNOUNCE)`,
      );
    }
  });
}
