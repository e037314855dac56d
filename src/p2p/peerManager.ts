import type { Libp2p, PeerId } from "@libp2p/interface";
import { peerIdFromString } from "@libp2p/peer-id";
import type { Logger } from "pino";
import { errorMessage } from "./errors.ts";
import { PeerBans } from "./peerBans.ts";
import { parsePeerStatus, statusMismatch } from "./status.ts";
import type { PeerFilter, PeerInfo, PeerStatus } from "./types.ts";

/**
 * A connected peer. `status` is set once its status showed our chain; it counts as a peer
 * (`ready`) once gossipsub also knows its subscriptions to all our topics, so that anything we
 * publish from then on reaches it (gossipsub sends a message only to peers it knows subscribed;
 * one published earlier is lost for that peer). A peer whose subscriptions do not arrive within
 * the request timeout counts anyway.
 */
export interface PeerEntry {
  id: string;
  peerId: PeerId;
  status: PeerStatus | undefined;
  /** When `status` was first set. */
  statusAt: number;
  /** Our topics the peer subscribed to. */
  topics: Set<string>;
  ready: boolean;
  statusInFlight: boolean;
  /** Consecutive failed status exchanges. */
  failures: number;
  /**
   * Consecutive block or peer requests it left unanswered until they timed out (status
   * exchanges count in `failures`: a peer answering those but not these is still mute).
   */
  silentRequests: number;
  /** When we last asked it for its peers (0 = never). */
  peersAskedAt: number;
}

/** What the peer manager needs of libp2p: who is connected, and hanging up. */
export type PeerConnections = Pick<Libp2p, "getConnections" | "hangUp">;

export interface PeerManagerOptions {
  /** Our own peer id: never penalized. */
  selfId: string;
  /** Handshaken peers at most (static peers are admitted beyond it). */
  maxPeers: number;
  /** How long a peer's subscriptions may take before it counts anyway, ms. */
  requestTimeoutMs: number;
  /** The first ban of a penalized peer, ms (see PeerBans). */
  penaltyCooldownMs: number;
  /** The ids of the bootstrap peers. */
  staticIds: ReadonlySet<string>;
  /** Peers we may talk to; `undefined` allows all. */
  filter: PeerFilter | undefined;
  /** libp2p while the network runs, else `undefined` (see LiveNode). */
  live: () => PeerConnections | undefined;
  log: Logger;
  /** Every status a ready peer sends (handshake and refresh). */
  onStatus(peerId: string, status: PeerStatus): void;
  /** A peer has just become ready (it counts from now on). */
  onReady(entry: PeerEntry): void;
}

/** Requests in a row a peer may leave unanswered (timeouts) before it is disconnected. */
const MAX_SILENT_REQUESTS = 3;

/**
 * The peer table and who may be in it: the handshake's verdict on a status (our chain or not,
 * room under maxPeers), when a peer counts, penalties and bans, refusals of other chains, the
 * peer filter, and disconnecting. It sends nothing itself: the protocols call it.
 */
export class PeerManager {
  private readonly options: PeerManagerOptions;
  private readonly log: Logger;
  private readonly entries = new Map<string, PeerEntry>();
  private readonly bans: PeerBans;
  /** Our chain identity, fixed at start: peers must match it. */
  private identity: PeerStatus | undefined;
  /** Our gossip topic names, fixed at start. */
  private topics: ReadonlySet<string> = new Set();

  constructor(options: PeerManagerOptions) {
    this.options = options;
    this.log = options.log;
    this.bans = new PeerBans(options.penaltyCooldownMs);
  }

  /** Sets what the handshake compares against and the topics a ready peer subscribes to. */
  start(identity: PeerStatus, topics: ReadonlySet<string>): void {
    this.identity = identity;
    this.topics = topics;
  }

  /** Our chain identity once started. */
  get chainIdentity(): PeerStatus | undefined {
    return this.identity;
  }

  /** Forgets every peer (the network stopped). Bans stay. */
  clear(): void {
    this.entries.clear();
  }

  // --- the table ---------------------------------------------------------------------------------

  get(peerId: string): PeerEntry | undefined {
    return this.entries.get(peerId);
  }

  has(peerId: string): boolean {
    return this.entries.has(peerId);
  }

  /** Every connected peer, handshaken or not (the live iterator: do not add or remove while in it). */
  values(): IterableIterator<PeerEntry> {
    return this.entries.values();
  }

  /** Whether `entry` is still the table's entry for its peer (not dropped, not reconnected since). */
  isCurrent(entry: PeerEntry): boolean {
    return this.entries.get(entry.id) === entry;
  }

  /** Connected peers that passed the handshake. */
  readyCount(): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.ready) count++;
    return count;
  }

  /** Handshaken peers with the latest status each sent. */
  readyPeers(): PeerInfo[] {
    const out: PeerInfo[] = [];
    for (const entry of this.entries.values()) {
      if (entry.ready && entry.status !== undefined) out.push({ id: entry.id, status: { ...entry.status } });
    }
    return out;
  }

  /** Peers whose status showed our chain, counted or about to be (what maxPeers bounds). */
  admittedCount(): number {
    let count = 0;
    for (const entry of this.entries.values()) if (entry.status !== undefined) count++;
    return count;
  }

  /** The entry of a peer that may talk to us, made on first contact; `undefined` (and hung up) when refused. */
  entryFor(peerId: PeerId): PeerEntry | undefined {
    if (this.options.live() === undefined) return undefined;
    const id = peerId.toString();
    if (this.isRefused(id)) {
      this.disconnect(id);
      return undefined;
    }
    let entry = this.entries.get(id);
    if (entry === undefined) {
      entry = {
        id,
        peerId,
        status: undefined,
        statusAt: 0,
        topics: new Set(),
        ready: false,
        statusInFlight: false,
        failures: 0,
        silentRequests: 0,
        peersAskedAt: 0,
      };
      this.entries.set(id, entry);
    }
    return entry;
  }

  /** A connection opened: the peer's entry, ready for the handshake, or `undefined` when refused. */
  onConnect(peerId: PeerId): PeerEntry | undefined {
    const entry = this.entryFor(peerId);
    if (entry !== undefined) this.log.debug({ peer: entry.id }, "connection open");
    return entry;
  }

  onDisconnect(peerId: PeerId): void {
    const id = peerId.toString();
    const entry = this.entries.get(id);
    this.entries.delete(id);
    if (entry?.ready === true) this.log.info({ peer: id, peers: this.readyCount() }, "peer disconnected");
  }

  // --- the handshake and readiness ---------------------------------------------------------------

  /**
   * Takes a status the peer sent (in its request or its answer). Malformed: penalized. Another
   * chain: refused. Returns whether the peer is (still) handshaken.
   */
  acceptStatus(entry: PeerEntry, raw: unknown): boolean {
    const status = parsePeerStatus(raw);
    if (status === undefined) {
      this.penalize(entry.id, "malformed status");
      return false;
    }
    const identity = this.identity;
    const mismatch = identity === undefined ? "not started" : statusMismatch(identity, status);
    if (mismatch !== undefined) {
      this.refuse(entry.id, mismatch);
      this.disconnect(entry.id);
      return false;
    }
    if (this.options.live() === undefined || !this.isCurrent(entry)) return false;
    if (entry.status === undefined) {
      if (this.admittedCount() >= this.options.maxPeers && !this.options.staticIds.has(entry.id)) {
        this.log.debug({ peer: entry.id }, "peer dropped: maxPeers reached");
        this.disconnect(entry.id);
        return false;
      }
      entry.statusAt = Date.now();
    }
    entry.status = status;
    if (entry.ready) this.reportStatus(entry, status);
    else this.maybeReady(entry);
    return true;
  }

  /** Counts the peer once it has a status and known subscriptions (or waited long enough for them). */
  maybeReady(entry: PeerEntry): void {
    const { status } = entry;
    if (entry.ready || status === undefined || this.options.live() === undefined) return;
    const subscribed = entry.topics.size === this.topics.size;
    if (!subscribed && Date.now() - entry.statusAt < this.options.requestTimeoutMs) return;
    entry.ready = true;
    this.log.info(
      { peer: entry.id, head: status.head_number, peers: this.readyCount(), gossip: subscribed },
      "peer connected",
    );
    this.reportStatus(entry, status);
    this.options.onReady(entry);
  }

  /** gossipsub learned which topics a peer (un)subscribed: our topics count toward its readiness. */
  onSubscriptionChange(
    peerId: PeerId,
    subscriptions: readonly { topic: string; subscribe: boolean }[],
  ): void {
    const entry = this.entries.get(peerId.toString());
    if (entry === undefined) return;
    for (const { topic, subscribe } of subscriptions) {
      if (!this.topics.has(topic)) continue;
      if (subscribe) entry.topics.add(topic);
      else entry.topics.delete(topic);
    }
    this.maybeReady(entry);
  }

  private reportStatus(entry: PeerEntry, status: PeerStatus): void {
    try {
      this.options.onStatus(entry.id, { ...status });
    } catch (err) {
      this.log.error({ err }, "onPeerStatus threw");
    }
  }

  // --- scores, bans and the filter ---------------------------------------------------------------

  /** Refused for now: banned, or not allowed by the peer filter. */
  isRefused(peerId: string): boolean {
    return !this.isAllowed(peerId) || this.bans.isBanned(peerId, Date.now());
  }

  /** Whether the peer filter (if any) lets us talk to the peer. */
  isAllowed(peerId: string): boolean {
    return this.options.filter?.allows(peerId) ?? true;
  }

  /**
   * Scores the peer down: disconnects it now and refuses it (dials both ways, through the
   * connection gater) for the cool-down, doubled on each repeat offence.
   */
  penalize(peerId: string, reason: string): void {
    if (peerId === this.options.selfId) return;
    const banMs = this.bans.penalize(peerId, reason, Date.now());
    this.log.info({ peer: peerId, reason, banMs }, "peer penalized");
    this.disconnect(peerId);
  }

  /**
   * Refuses a peer that is not of our chain: not an offence, but it may not come back for a while.
   * The caller hangs up (at once, or once our status answer is out).
   */
  refuse(peerId: string, reason: string): void {
    this.bans.refuse(peerId, reason, Date.now());
    this.log.info({ peer: peerId, reason }, "peer refused: not our chain");
  }

  /**
   * A request to the peer timed out: no ban (see isPeerFault), but a peer that stays silent
   * through MAX_SILENT_REQUESTS requests in a row is disconnected, so a mute peer cannot stall
   * sync or discovery for long. It may reconnect at once; an answer to one resets the count.
   */
  lateAnswer(entry: PeerEntry, what: string): void {
    entry.silentRequests++;
    this.log.debug({ peer: entry.id, what, silent: entry.silentRequests }, "request timed out");
    if (entry.silentRequests < MAX_SILENT_REQUESTS || !this.isCurrent(entry)) return;
    this.log.info({ peer: entry.id, reason: what }, "peer dropped: it leaves requests unanswered");
    this.disconnect(entry.id);
  }

  /**
   * The peer filter changed: closes our connections to the peers it no longer allows (dials both
   * ways are refused and their gossip dropped through isRefused and isAllowed). Not an offence: no
   * ban, so once allowed again a static peer is redialed as usual.
   */
  cutFilteredOut(): void {
    const connected = new Set(this.entries.keys());
    for (const connection of this.options.live()?.getConnections() ?? []) {
      connected.add(connection.remotePeer.toString());
    }
    for (const id of connected) {
      if (this.isAllowed(id)) continue;
      this.log.info({ peer: id }, "peer cut off by the peer filter");
      this.disconnect(id);
    }
  }

  /** Forgets bans that ended long enough ago (see PeerBans.prune). */
  pruneBans(now: number): void {
    this.bans.prune(now);
  }

  /** Drops the peer from our books now and closes its connections. */
  disconnect(peerId: string): void {
    const entry = this.entries.get(peerId);
    this.entries.delete(peerId);
    const node = this.options.live();
    if (node === undefined) return;
    let id = entry?.peerId;
    if (id === undefined) {
      try {
        id = peerIdFromString(peerId);
      } catch {
        return;
      }
    }
    node
      .hangUp(id)
      .catch((err: unknown) => this.log.debug({ peer: peerId, err: errorMessage(err) }, "hang up failed"));
  }
}
