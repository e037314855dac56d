import { peerIdFromString } from "@libp2p/peer-id";
import { CODE_P2P, type Multiaddr, multiaddr } from "@multiformats/multiaddr";
import { P2pError } from "./errors.ts";
import { MAX_PEER_ADDR_CHARS, MAX_PEER_ADDRS } from "./protocols.ts";

/** A dialable peer: its id and the addresses to try (each ending in `/p2p/<id>`). */
export interface PeerAddrs {
  id: string;
  addrs: Multiaddr[];
}

/** The peer id a multiaddr names in its `/p2p/` component, if any. */
export function peerIdInAddr(addr: Multiaddr): string | undefined {
  const component = addr.getComponents().find((c) => c.code === CODE_P2P);
  return component?.value;
}

/**
 * Groups multiaddr strings by the peer id in their `/p2p/` component. Entries that do not parse
 * or name no peer are returned in `invalid` (the caller decides whether that is an offence).
 */
export function groupAddrs(entries: readonly string[]): { peers: PeerAddrs[]; invalid: string[] } {
  const byId = new Map<string, Multiaddr[]>();
  const invalid: string[] = [];
  for (const entry of entries) {
    let addr: Multiaddr;
    try {
      addr = multiaddr(entry);
    } catch {
      invalid.push(entry);
      continue;
    }
    const id = peerIdInAddr(addr);
    if (id === undefined) {
      invalid.push(entry);
      continue;
    }
    const list = byId.get(id);
    if (list === undefined) byId.set(id, [addr]);
    else list.push(addr);
  }
  return { peers: [...byId].map(([id, addrs]) => ({ id, addrs })), invalid };
}

/**
 * A peers answer as the protocol allows: an array of at most `MAX_PEER_ADDRS` strings of at most
 * `MAX_PEER_ADDR_CHARS` characters, or `undefined`.
 */
export function parsePeersResponse(value: unknown): string[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_PEER_ADDRS) return undefined;
  if (!value.every((entry) => typeof entry === "string" && entry.length <= MAX_PEER_ADDR_CHARS)) {
    return undefined;
  }
  return value as string[];
}

/** Exponential backoff for redials: `initialMs`, doubling up to `maxMs`, reset on success. */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private delayMs: number;
  private nextAt = 0;

  constructor(initialMs: number, maxMs: number) {
    this.initialMs = initialMs;
    this.maxMs = maxMs;
    this.delayMs = initialMs;
  }

  /** Whether an attempt may start now. */
  due(now: number): boolean {
    return now >= this.nextAt;
  }

  /** An attempt failed: wait the current delay, then double it. */
  failed(now: number): void {
    this.nextAt = now + this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, this.maxMs);
  }

  /** An attempt succeeded: the next failure starts from the initial delay again. */
  succeeded(): void {
    this.delayMs = this.initialMs;
    this.nextAt = 0;
  }
}

/**
 * The static peers of the `bootstrap` option, without ourselves. Throws
 * `P2pError("invalid_argument")` for an entry that is not a multiaddr ending in `/p2p/<id>`.
 */
export function bootstrapPeers(bootstrap: readonly string[], selfId: string): PeerAddrs[] {
  const { peers, invalid } = groupAddrs(bootstrap);
  if (invalid.length > 0) {
    throw new P2pError(
      "invalid_argument",
      `bootstrap entries need a multiaddr ending in /p2p/<id>: ${invalid.join(", ")}`,
    );
  }
  for (const peer of peers) {
    try {
      peerIdFromString(peer.id);
    } catch (err) {
      throw new P2pError("invalid_argument", `bootstrap peer id ${peer.id} is not a peer id`, { cause: err });
    }
  }
  return peers.filter((peer) => peer.id !== selfId);
}
