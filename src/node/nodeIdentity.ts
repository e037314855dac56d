import { networkInterfaces } from "node:os";
import { checkAnnounceAddrs, isLocalOnlyIp, listenMultiaddr } from "../p2p/index.ts";
import type { P2pSettings } from "./options.ts";

/** What another operator needs to reach this node: its peer id and the addresses it announces. */
export interface NodeIdentity {
  peerId: string;
  /** Full multiaddrs, each ending in `/p2p/<peer id>`: what goes in another node's `bootstrap`. */
  announce: string[];
  /**
   * True when p2p.announce is empty and the node listens on 0.0.0.0 / ::, so the addresses are
   * this machine's interfaces as seen now: behind NAT or in a container, set p2p.announce.
   */
  guessed: boolean;
}

/**
 * The addresses a node with these settings announces (p2p/addresses.ts says what identify
 * passes on): p2p.announce when set; else its listen address when that is one address; else,
 * for 0.0.0.0, the machine's interfaces that other hosts can reach.
 */
export function announcedAddrs(
  p2p: Pick<P2pSettings, "host" | "port" | "announce">,
  peerId: string,
): NodeIdentity {
  const withId = (addr: string) => `${addr}/p2p/${peerId}`;
  if (p2p.announce.length > 0) {
    return { peerId, announce: checkAnnounceAddrs(p2p.announce).map(withId), guessed: false };
  }
  const host = p2p.host;
  if (host !== "0.0.0.0" && host !== "::")
    return { peerId, announce: [withId(listenMultiaddr(host, p2p.port))], guessed: false };
  const ips = Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((entry) => (host === "::" || entry.family === "IPv4") && !isLocalOnlyIp(entry.address))
    .map((entry) => entry.address);
  return { peerId, announce: ips.map((ip) => withId(listenMultiaddr(ip, p2p.port))), guessed: true };
}
