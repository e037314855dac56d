import { isIPv4, isIPv6 } from "node:net";
import { CODE_IP4, CODE_IP6, CODE_P2P, type Multiaddr, multiaddr } from "@multiformats/multiaddr";
import { P2pError } from "./errors.ts";

/**
 * Which addresses a node hands to whom. An address that only works on the machine that holds it
 * (loopback, unspecified, link-local) is useless — worse, misleading — to a peer on another host:
 * it would dial its own 127.0.0.1. So such addresses are told only to peers that are themselves on
 * this machine (a local testnet), and dialled only when the peer that named them is local too.
 */

/** True for an IP that only means something on the machine (or link) that uses it. */
export function isLocalOnlyIp(ip: string): boolean {
  if (isIPv4(ip)) {
    const [a, b] = ip.split(".").map(Number) as [number, number];
    return a === 127 || a === 0 || (a === 169 && b === 254);
  }
  if (isIPv6(ip)) {
    const lower = ip.toLowerCase();
    if (lower === "::" || lower === "::1") return true;
    if (/^fe[89ab]/.test(lower)) return true; // fe80::/10, link-local
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
    return mapped !== null && isLocalOnlyIp(mapped[1] as string);
  }
  return false;
}

/** The IP a multiaddr starts with, if it names one (a `/dns4/…` address does not). */
function ipOf(addr: Multiaddr): string | undefined {
  const first = addr.getComponents()[0];
  return first?.code === CODE_IP4 || first?.code === CODE_IP6 ? first.value : undefined;
}

/** True when the address is only usable on the machine that announced it. */
function isLocalOnlyAddr(addr: Multiaddr): boolean {
  const ip = ipOf(addr);
  return ip !== undefined && isLocalOnlyIp(ip);
}

/**
 * Checks `p2p.announce` entries: multiaddrs without `/p2p` (the node adds its own id) and not
 * unspecified (0.0.0.0 cannot be dialled). Throws `P2pError("invalid_argument")` naming the entry.
 */
export function checkAnnounceAddrs(entries: readonly string[]): string[] {
  return entries.map((entry) => {
    let addr: Multiaddr;
    try {
      addr = multiaddr(entry);
    } catch {
      throw new P2pError("invalid_argument", `p2p.announce: ${JSON.stringify(entry)} is not a multiaddr`);
    }
    if (addr.getComponents().some((c) => c.code === CODE_P2P)) {
      throw new P2pError(
        "invalid_argument",
        `p2p.announce: leave /p2p/<id> out of ${entry} (the node adds its own)`,
      );
    }
    const ip = ipOf(addr);
    if (ip === "0.0.0.0" || ip === "::") {
      throw new P2pError(
        "invalid_argument",
        `p2p.announce: ${entry} is unspecified; name the address peers dial`,
      );
    }
    return addr.toString();
  });
}

/**
 * What identify tells every peer: the `announce` addresses exactly when the operator set them;
 * otherwise the listen addresses libp2p found, without local-only ones — unless the node listens
 * on loopback itself, where loopback is all there is (a local testnet).
 */
export function announceFilter(
  announce: readonly string[],
  listenHost: string,
): (addrs: Multiaddr[]) => Multiaddr[] {
  // libp2p gives only the announce addresses when there are some (with our /p2p/<id> added).
  if (announce.length > 0) return (addrs) => addrs;
  const host = listenHost === "localhost" ? "127.0.0.1" : listenHost;
  const listensLocally = isLocalOnlyIp(host) && host !== "0.0.0.0" && host !== "::";
  return (addrs) => (listensLocally ? addrs : addrs.filter((addr) => !isLocalOnlyAddr(addr)));
}

/**
 * The addresses of a peer as we may pass them on to `requester` (peer exchange): local-only ones
 * only to a requester that is itself connected to us over a local-only address (same machine).
 */
export function addrsForRequester(addrs: readonly Multiaddr[], requesterAddr: Multiaddr): Multiaddr[] {
  if (isLocalOnlyAddr(requesterAddr)) return [...addrs];
  return addrs.filter((addr) => !isLocalOnlyAddr(addr));
}

/**
 * The addresses a peer exchange answer names that we may dial: local-only ones only when the peer
 * that answered is reached over a local-only address itself (a peer on another host that names
 * 127.0.0.1 means its own machine, never ours).
 */
export function dialableFrom(addrs: readonly Multiaddr[], informantAddr: Multiaddr | undefined): Multiaddr[] {
  if (informantAddr !== undefined && isLocalOnlyAddr(informantAddr)) return [...addrs];
  return addrs.filter((addr) => !isLocalOnlyAddr(addr));
}
