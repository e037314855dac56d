import type { PrivateKey } from "@libp2p/interface";
import type { Logger } from "pino";
import { BlocksByRangeProtocol } from "./blocksByRangeProtocol.ts";
import { RequestDeadlines } from "./deadlines.ts";
import { bootstrapPeers, peerIdInAddr } from "./discovery.ts";
import { PeerDiscovery } from "./discoveryLoop.ts";
import { errorMessage, P2pError, toP2pError } from "./errors.ts";
import { GossipRouter } from "./gossipRouter.ts";
import { createLibp2pNode, type Libp2pNode, listenMultiaddr } from "./libp2pNode.ts";
import { decodeNodeKey, peerIdOf } from "./nodeKey.ts";
import { type P2pOptions, type ResolvedP2pOptions, resolveP2pOptions } from "./options.ts";
import { PeerExchangeProtocol } from "./peerExchangeProtocol.ts";
import { PeerManager } from "./peerManager.ts";
import {
  BLOCKS_BY_RANGE_PROTOCOL,
  MAX_INBOUND_STREAMS,
  PEERS_PROTOCOL,
  SNAPSHOTS_PROTOCOL,
  STATUS_PROTOCOL,
} from "./protocols.ts";
import { RequestResponse } from "./requestResponse.ts";
import { SnapshotProtocol } from "./snapshotProtocol.ts";
import { parsePeerStatus } from "./status.ts";
import { StatusProtocol } from "./statusProtocol.ts";
import type { GossipTopic, P2pHandlers, PeerInfo, PeerStatus } from "./types.ts";

/** Discovery asks each peer for its peers at most once per this many status intervals. */
const DISCOVERY_EVERY_STATUS_INTERVALS = 5;
/** The maintenance tick (bootstrap redials, ban pruning), ms at most. */
const MAINTENANCE_MS = 250;

/**
 * The peer-to-peer network: libp2p over TCP with noise and yamux; a status handshake that keeps
 * out other chains; gossipsub for transactions, proposals and votes; blocks by range; peer
 * exchange; state snapshots; and bans for misbehaving peers. See docs/decisions/005-p2p.md.
 *
 * This class is the facade: it starts and stops libp2p, runs the timers and hands each call to
 * its part — the peer table, handshake verdict and bans (peerManager.ts), one file per protocol
 * over requestResponse.ts, discovery (discoveryLoop.ts) and gossip (gossipRouter.ts).
 *
 * Nothing a peer sends can throw out of it: every handler bounds its reads, has a deadline and
 * catches.
 */
export class P2pNetwork {
  readonly peerId: string;
  /** Called with every status a handshaken peer sends (handshake and refresh). Must not throw. */
  onPeerStatus?: ((peerId: string, status: PeerStatus) => void) | undefined;

  private readonly options: ResolvedP2pOptions;
  private readonly handlers: P2pHandlers;
  private readonly log: Logger;
  private readonly privateKey: PrivateKey;
  private readonly listenAddr: string;
  /** In-flight requests, served streams and dials, aborted by stop(). */
  private readonly deadlines: RequestDeadlines;
  private readonly peerManager: PeerManager;
  private readonly status: StatusProtocol;
  private readonly blocks: BlocksByRangeProtocol;
  private readonly peerExchange: PeerExchangeProtocol;
  private readonly snapshots: SnapshotProtocol;
  private readonly discovery: PeerDiscovery;
  private readonly gossip: GossipRouter;
  private readonly timers: NodeJS.Timeout[] = [];
  private node: Libp2pNode | undefined;
  private state: "new" | "starting" | "running" | "stopping" | "stopped" = "new";
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private statusTicks = 0;
  /** Removes our listener from `options.peerFilter` (set while running). */
  private stopFilterListener: (() => void) | undefined;

  constructor(options: P2pOptions, handlers: P2pHandlers) {
    this.options = resolveP2pOptions(options);
    this.handlers = handlers;
    this.log = options.logger.child({ module: "p2p" });
    this.privateKey = decodeNodeKey(options.nodeKey);
    this.peerId = peerIdOf(options.nodeKey);
    this.listenAddr = listenMultiaddr(options.host, options.port);
    const staticPeers = bootstrapPeers(options.bootstrap, this.peerId);
    const { maxPeers, maxMessageBytes, requestTimeoutMs } = this.options;
    const live = (): Libp2pNode | undefined => (this.state === "running" ? this.node : undefined);
    const log = this.log;

    this.deadlines = new RequestDeadlines(requestTimeoutMs);
    const peers = new PeerManager({
      selfId: this.peerId,
      maxPeers,
      requestTimeoutMs,
      penaltyCooldownMs: this.options.penaltyCooldownMs,
      staticIds: new Set(staticPeers.map((peer) => peer.id)),
      filter: this.options.peerFilter,
      live,
      log,
      onStatus: (peerId, status) => this.onPeerStatus?.(peerId, status),
      onReady: (entry) => {
        this.discovery.peerReady(entry.id);
        void this.discovery.askPeers(entry);
      },
    });
    this.peerManager = peers;
    const reqResp = new RequestResponse({ live, deadlines: this.deadlines, peers, log });
    this.status = new StatusProtocol({ live, reqResp, peers, ourStatus: () => handlers.status(), log });
    this.blocks = new BlocksByRangeProtocol({
      live,
      reqResp,
      peers,
      serveBlocks: (from, to) => handlers.serveBlocks(from, to),
      maxBlocksPerRequest: this.options.maxBlocksPerRequest,
      maxMessageBytes,
      log,
    });
    this.peerExchange = new PeerExchangeProtocol({ live, reqResp, peers, log });
    this.snapshots = new SnapshotProtocol({
      live,
      reqResp,
      peers,
      serveSnapshots: handlers.serveSnapshots,
      log,
    });
    this.discovery = new PeerDiscovery({
      staticPeers,
      selfId: this.peerId,
      maxPeers,
      live,
      peers,
      exchange: this.peerExchange,
      deadlines: this.deadlines,
      log,
    });
    this.gossip = new GossipRouter({
      live,
      peers,
      onGossip: (topic, payload, from) => handlers.onGossip(topic, payload, from),
      maxMessageBytes,
      log,
    });
  }

  /**
   * Opens the listener, joins the topics and starts dialing the static peers (without waiting for
   * them: a peer that is down is retried with backoff). Throws `P2pError("listen_failed")` when the
   * port cannot be opened. A network runs once: after stop(), make a new one.
   */
  async start(): Promise<void> {
    if (this.state !== "new") {
      if (this.starting !== undefined && this.state === "starting") return this.starting;
      if (this.state === "running") return;
      throw new P2pError("not_running", "a stopped P2pNetwork cannot be restarted");
    }
    this.state = "starting";
    this.starting = this.startNode();
    return this.starting;
  }

  private async startNode(): Promise<void> {
    const identity = parsePeerStatus(this.handlers.status());
    if (identity === undefined) {
      this.state = "stopped";
      throw new P2pError("invalid_argument", "handlers.status() returned a malformed status");
    }
    const topics = this.gossip.nameTopics(identity);
    this.peerManager.start(identity, topics);
    const { maxPeers, maxMessageBytes, requestTimeoutMs } = this.options;
    let node: Libp2pNode;
    try {
      node = await createLibp2pNode({
        privateKey: this.privateKey,
        listenAddr: this.listenAddr,
        announce: this.options.announce,
        listenHost: this.options.host,
        topics: [...topics],
        maxPeers,
        maxMessageBytes,
        requestTimeoutMs,
        isRefused: (peerId) => this.peerManager.isRefused(peerId),
      });
    } catch (err) {
      this.state = "stopped";
      throw toP2pError(err, "invalid_argument");
    }
    this.node = node;
    node.addEventListener("peer:connect", (evt) => {
      const entry = this.peerManager.onConnect(evt.detail);
      if (entry !== undefined) void this.status.exchange(entry);
    });
    node.addEventListener("peer:disconnect", (evt) => this.peerManager.onDisconnect(evt.detail));
    await node.handle(STATUS_PROTOCOL, (stream, connection) => this.status.serve(stream, connection), {
      maxInboundStreams: MAX_INBOUND_STREAMS.status,
    });
    await node.handle(
      BLOCKS_BY_RANGE_PROTOCOL,
      (stream, connection) => this.blocks.serve(stream, connection),
      {
        maxInboundStreams: MAX_INBOUND_STREAMS.blocks,
      },
    );
    await node.handle(PEERS_PROTOCOL, (stream, connection) => this.peerExchange.serve(stream, connection), {
      maxInboundStreams: MAX_INBOUND_STREAMS.peers,
    });
    await node.handle(SNAPSHOTS_PROTOCOL, (stream, connection) => this.snapshots.serve(stream, connection), {
      maxInboundStreams: MAX_INBOUND_STREAMS.snapshots,
    });
    this.gossip.attach(node.services.pubsub);
    try {
      await node.start();
    } catch (err) {
      this.state = "stopped";
      await Promise.resolve()
        .then(() => node.stop())
        .catch(() => undefined);
      throw new P2pError("listen_failed", `cannot listen on ${this.listenAddr}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    this.gossip.subscribe(node.services.pubsub);
    this.state = "running";
    this.stopFilterListener = this.options.peerFilter?.onChange(() => this.peerManager.cutFilteredOut());
    this.timers.push(setInterval(() => this.statusTick(), this.options.statusIntervalMs));
    this.timers.push(
      setInterval(() => this.maintenanceTick(), Math.min(MAINTENANCE_MS, this.options.statusIntervalMs)),
    );
    this.log.info(
      { peerId: this.peerId, addrs: this.listenAddrs(), static: this.discovery.staticCount },
      "p2p listening",
    );
    this.maintenanceTick();
  }

  /** Closes every connection, stream and timer. Idempotent; safe before start and during it. */
  async stop(): Promise<void> {
    if (this.stopping !== undefined) return this.stopping;
    this.stopping = this.stopNode();
    return this.stopping;
  }

  private async stopNode(): Promise<void> {
    if (this.state === "starting") await this.starting?.catch(() => undefined);
    if (this.state === "new" || this.state === "stopped") {
      this.state = "stopped";
      return;
    }
    this.state = "stopping";
    this.stopFilterListener?.();
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
    this.deadlines.abortAll();
    try {
      await this.node?.stop();
    } catch (err) {
      this.log.warn({ err }, "libp2p stop failed");
    }
    this.peerManager.clear();
    this.discovery.clear();
    this.state = "stopped";
    this.log.info("p2p stopped");
  }

  /** Full multiaddrs we listen on, each ending in `/p2p/<our id>`; empty when not listening. */
  listenAddrs(): string[] {
    if (this.node === undefined || this.state !== "running") return [];
    return this.node.getMultiaddrs().map((addr) => {
      const text = addr.toString();
      return peerIdInAddr(addr) === undefined ? `${text}/p2p/${this.peerId}` : text;
    });
  }

  /** True while the TCP listener is open. */
  listening(): boolean {
    return this.state === "running" && this.node !== undefined && this.node.getMultiaddrs().length > 0;
  }

  /** Connected peers that passed the handshake. */
  peerCount(): number {
    return this.peerManager.readyCount();
  }

  /** Handshaken peers with the latest status each sent. */
  peers(): PeerInfo[] {
    return this.peerManager.readyPeers();
  }

  /**
   * JSON-encodes `payload` and gossips it on `topic`. Never fails for lack of peers; does nothing
   * when the network is not running. Throws `P2pError("message_too_large")` above
   * `maxMessageBytes` and `P2pError("invalid_argument")` for what JSON cannot encode.
   */
  publish(topic: GossipTopic, payload: unknown): void {
    this.gossip.publish(topic, payload);
  }

  /**
   * Asks a handshaken peer for blocks `from..to` (inclusive). The answer is a JSON array of at
   * most `to - from + 1` items (the peer may clip the range or stop at its head). Throws
   * `P2pError`: `invalid_argument`, `not_connected`, `not_running`, `timeout` (counted: a peer
   * silent MAX_SILENT_REQUESTS times in a row is dropped), or — after penalizing the peer —
   * `message_too_large`, `bad_message`; `stream_error` when the stream broke.
   */
  requestBlocks(peerId: string, from: number, to: number): Promise<unknown[]> {
    return this.blocks.request(peerId, from, to);
  }

  /**
   * Asks a handshaken peer which state snapshots it offers: a JSON array of opaque items (at most
   * MAX_SNAPSHOT_LIST_ITEMS; empty from a peer that serves none). Throws `P2pError` as
   * requestBlocks does (`bad_message` and `message_too_large` after penalizing the peer, `timeout`
   * counted as silence). Wire format: snapshotProtocol.ts.
   */
  requestSnapshotList(peerId: string): Promise<unknown[]> {
    return this.snapshots.requestList(peerId);
  }

  /**
   * The raw bytes of the peer's snapshot manifest at `height` (at most 4 MiB), `undefined` when
   * the peer has none there. Throws `P2pError` as requestSnapshotList does; `invalid_argument`
   * for a height that is not a non-negative safe integer. Judging the bytes is the caller's job.
   */
  requestSnapshotManifest(peerId: string, height: number): Promise<Uint8Array | undefined> {
    return this.snapshots.requestManifest(peerId, height);
  }

  /**
   * The raw bytes of chunk `index` of the peer's snapshot at `height` (at most 16 MiB),
   * `undefined` when the peer has no such snapshot or chunk. Throws as requestSnapshotManifest.
   * A chunk whose hash is wrong is the caller's to punish, with `penalize`.
   */
  requestSnapshotChunk(peerId: string, height: number, index: number): Promise<Uint8Array | undefined> {
    return this.snapshots.requestChunk(peerId, height, index);
  }

  /**
   * Scores the peer down: disconnects it now and refuses it (dials both ways, through the
   * connection gater) for the cool-down, doubled on each repeat offence.
   */
  penalize(peerId: string, reason: string): void {
    this.peerManager.penalize(peerId, reason);
  }

  /** Every status interval: readiness, a status refresh from each peer, and now and then discovery. */
  private statusTick(): void {
    if (this.state !== "running") return;
    this.statusTicks++;
    const discover = this.statusTicks % DISCOVERY_EVERY_STATUS_INTERVALS === 0;
    for (const entry of this.peerManager.values()) {
      this.peerManager.maybeReady(entry);
      void this.status.exchange(entry);
      if (discover && entry.ready) void this.discovery.askPeers(entry);
    }
  }

  /** Redials static peers that are not connected, and forgets expired bans. */
  private maintenanceTick(): void {
    if (this.state !== "running") return;
    const now = Date.now();
    this.discovery.redialStatic(now);
    this.peerManager.pruneBans(now);
  }
}
