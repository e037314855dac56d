import type { Multiaddr } from "@multiformats/multiaddr";
import type { Logger } from "pino";
import type { RequestDeadlines } from "./deadlines.ts";
import { dialableFrom } from "./addresses.ts";
import { Backoff, groupAddrs, type PeerAddrs } from "./discovery.ts";
import { errorMessage } from "./errors.ts";
import type { LiveNode } from "./libp2pNode.ts";
import type { PeerExchangeProtocol } from "./peerExchangeProtocol.ts";
import type { PeerEntry, PeerManager } from "./peerManager.ts";

/** Redial backoff for static and discovered peers. */
const REDIAL_INITIAL_MS = 500;
const REDIAL_MAX_MS = 15_000;
/** Discovered peers remembered (for their dial backoff) at most. */
const MAX_DISCOVERED = 1024;

interface StaticPeer extends PeerAddrs {
  backoff: Backoff;
  dialing: boolean;
}

/**
 * Finding peers: the static (bootstrap) peers are redialed with backoff whenever they are not
 * connected; each ready peer is asked for its peers, and those we lack are dialed (with their own
 * backoff) while we are under maxPeers. The pure parts (addresses, Backoff) are in discovery.ts;
 * the network's timers call `redialStatic` and `askPeers`.
 */
export class PeerDiscovery {
  private readonly static: StaticPeer[];
  private readonly selfId: string;
  private readonly maxPeers: number;
  private readonly live: LiveNode;
  private readonly peers: PeerManager;
  private readonly exchange: PeerExchangeProtocol;
  private readonly deadlines: RequestDeadlines;
  private readonly log: Logger;
  private readonly discovered = new Map<string, Backoff>();
  private readonly dialing = new Set<string>();

  constructor(parts: {
    staticPeers: readonly PeerAddrs[];
    selfId: string;
    maxPeers: number;
    live: LiveNode;
    peers: PeerManager;
    exchange: PeerExchangeProtocol;
    deadlines: RequestDeadlines;
    log: Logger;
  }) {
    this.static = parts.staticPeers.map((peer) => ({
      ...peer,
      backoff: new Backoff(REDIAL_INITIAL_MS, REDIAL_MAX_MS),
      dialing: false,
    }));
    this.selfId = parts.selfId;
    this.maxPeers = parts.maxPeers;
    this.live = parts.live;
    this.peers = parts.peers;
    this.exchange = parts.exchange;
    this.deadlines = parts.deadlines;
    this.log = parts.log;
  }

  get staticCount(): number {
    return this.static.length;
  }

  /** The peer became ready: a later drop redials it from the initial delay again. */
  peerReady(peerId: string): void {
    this.discovered.get(peerId)?.succeeded();
    this.static.find((peer) => peer.id === peerId)?.backoff.succeeded();
  }

  /** Asks a handshaken peer for its peers and dials the ones we lack, up to maxPeers. */
  async askPeers(entry: PeerEntry): Promise<void> {
    if (!this.wantsPeers()) return;
    const entries = await this.exchange.request(entry);
    if (entries === undefined) return;
    // A peer on another host that names a loopback address means its own machine, not ours.
    const informant = this.live()?.getConnections(entry.peerId)[0]?.remoteAddr;
    for (const candidate of groupAddrs(entries).peers) {
      const addrs = dialableFrom(candidate.addrs, informant);
      if (addrs.length > 0) this.dialDiscovered({ ...candidate, addrs });
    }
  }

  /** Redials the static peers that are neither connected, nor being dialed, nor refused, once due. */
  redialStatic(now: number): void {
    for (const peer of this.static) {
      if (peer.dialing || this.peers.has(peer.id) || this.dialing.has(peer.id)) continue;
      if (this.peers.isRefused(peer.id) || !peer.backoff.due(now)) continue;
      peer.dialing = true;
      this.dial(peer.id, peer.addrs, peer.backoff, "static", () => {
        peer.dialing = false;
      });
    }
  }

  /** Forgets the dials in flight (the network stopped; stop() aborted them). */
  clear(): void {
    this.dialing.clear();
  }

  private wantsPeers(): boolean {
    return this.live() !== undefined && this.peers.admittedCount() + this.dialing.size < this.maxPeers;
  }

  private dialDiscovered(candidate: PeerAddrs): void {
    const { id } = candidate;
    if (id === this.selfId || this.peers.has(id) || this.dialing.has(id) || this.peers.isRefused(id)) return;
    if (!this.wantsPeers()) return;
    let backoff = this.discovered.get(id);
    if (backoff === undefined) {
      backoff = new Backoff(REDIAL_INITIAL_MS, REDIAL_MAX_MS);
      this.discovered.set(id, backoff);
      if (this.discovered.size > MAX_DISCOVERED) {
        const oldest = this.discovered.keys().next().value;
        if (oldest !== undefined) this.discovered.delete(oldest);
      }
    }
    if (!backoff.due(Date.now())) return;
    this.dial(id, candidate.addrs, backoff, "discovered");
  }

  private dial(
    id: string,
    addrs: Multiaddr[],
    backoff: Backoff,
    kind: "static" | "discovered",
    done?: () => void,
  ): void {
    const node = this.live();
    if (node === undefined) return;
    this.dialing.add(id);
    // Counted as a failure until the peer becomes ready (peerReady resets it): a peer that
    // accepts the connection and then drops us (full, another chain) is retried ever more slowly.
    backoff.failed(Date.now());
    const controller = this.deadlines.track();
    node
      .dial(addrs, { signal: controller.signal })
      .then(() => this.log.debug({ peer: id, kind }, "dialed"))
      .catch((err: unknown) => this.log.debug({ peer: id, kind, err: errorMessage(err) }, "dial failed"))
      .finally(() => {
        this.deadlines.untrack(controller);
        this.dialing.delete(id);
        done?.();
      });
  }
}
