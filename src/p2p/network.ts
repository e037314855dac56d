import { type Message, TopicValidatorResult } from "@libp2p/gossipsub";
import type { PeerId, PrivateKey } from "@libp2p/interface";
import { peerIdFromString } from "@libp2p/peer-id";
import type { Multiaddr } from "@multiformats/multiaddr";
import type { Logger } from "pino";
import { Backoff, groupAddrs, type PeerAddrs, peerIdInAddr } from "./discovery.ts";
import { RequestDeadlines } from "./deadlines.ts";
import { errorMessage, P2PError, toP2PError } from "./errors.ts";
import { decodeJson, encodeJson } from "./framing.ts";
import { verdictToResult } from "./gossip.ts";
import { createLibp2pNode, type Libp2pNode, listenMultiaddr } from "./libp2pNode.ts";
import { decodeNodeKey, peerIdOf } from "./nodeKey.ts";
import { type P2POptions, type ResolvedP2POptions, resolveP2POptions } from "./options.ts";
import { type PeerEntry, PeerManager } from "./peerManager.ts";
import {
  BLOCKS_BY_RANGE_PROTOCOL,
  MAX_INBOUND_STREAMS,
  PEERS_PROTOCOL,
  STATUS_PROTOCOL,
  topicName,
} from "./protocols.ts";
import { BlocksByRangeProtocol } from "./blocksByRangeProtocol.ts";
import { PeerExchangeProtocol } from "./peerExchangeProtocol.ts";
import { RequestResponse } from "./requestResponse.ts";
import { StatusProtocol } from "./statusProtocol.ts";
import { parsePeerStatus } from "./status.ts";
import {
  GOSSIP_TOPICS,
  type GossipTopic,
  type P2PHandlers,
  type PeerInfo,
  type PeerStatus,
} from "./types.ts";

interface StaticPeer extends PeerAddrs {
  backoff: Backoff;
  dialing: boolean;
}

/** Discovery asks each peer for its peers at most once per this many status intervals. */
const DISCOVERY_EVERY_STATUS_INTERVALS = 5;
/** Redial backoff for static and discovered peers. */
const REDIAL_INITIAL_MS = 500;
const REDIAL_MAX_MS = 15_000;
/** Discovered peers remembered (for their dial backoff) at most. */
const MAX_DISCOVERED = 1024;
/** The maintenance tick (bootstrap redials, discovery, ban pruning), ms at most. */
const MAINTENANCE_MS = 250;

/**
 * The peer-to-peer network: libp2p over TCP with noise and yamux; a status handshake that keeps
 * out other chains; gossipsub for transactions, proposals and votes; blocks by range; peer
 * exchange; and bans for misbehaving peers. See docs/decisions/005-p2p.md.
 *
 * Nothing a peer sends can throw out of this class: every handler bounds its reads, has a
 * deadline and catches.
 */
export class P2PNetwork {
  readonly peerId: string;
  /** Called with every status a handshaken peer sends (handshake and refresh). Must not throw. */
  onPeerStatus?: ((peerId: string, status: PeerStatus) => void) | undefined;

  readonly #options: ResolvedP2POptions;
  readonly #handlers: P2PHandlers;
  readonly #log: Logger;
  readonly #privateKey: PrivateKey;
  readonly #listenAddr: string;
  readonly #static: StaticPeer[];
  readonly #peers: PeerManager;
  readonly #discovered = new Map<string, Backoff>();
  readonly #dialing = new Set<string>();
  /** In-flight requests, served streams and dials, aborted by stop(). */
  readonly #deadlines: RequestDeadlines;
  readonly #status: StatusProtocol;
  readonly #blocks: BlocksByRangeProtocol;
  readonly #peerExchange: PeerExchangeProtocol;
  readonly #timers: NodeJS.Timeout[] = [];
  #node: Libp2pNode | undefined;
  #state: "new" | "starting" | "running" | "stopping" | "stopped" = "new";
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;
  #topicOf = new Map<string, GossipTopic>();
  #topicName: Partial<Record<GossipTopic, string>> = {};
  #statusTicks = 0;
  /** Removes our listener from `options.peerFilter` (set while running). */
  #stopFilterListener: (() => void) | undefined;

  constructor(options: P2POptions, handlers: P2PHandlers) {
    this.#options = resolveP2POptions(options);
    this.#handlers = handlers;
    this.#log = options.logger.child({ module: "p2p" });
    this.#privateKey = decodeNodeKey(options.nodeKey);
    this.peerId = peerIdOf(options.nodeKey);
    this.#listenAddr = listenMultiaddr(options.host, options.port);
    const { peers, invalid } = groupAddrs(options.bootstrap);
    if (invalid.length > 0) {
      throw new P2PError(
        "invalid_argument",
        `bootstrap entries need a multiaddr ending in /p2p/<id>: ${invalid.join(", ")}`,
      );
    }
    for (const peer of peers) {
      try {
        peerIdFromString(peer.id);
      } catch (err) {
        throw new P2PError("invalid_argument", `bootstrap peer id ${peer.id} is not a peer id`, {
          cause: err,
        });
      }
    }
    this.#static = peers
      .filter((peer) => peer.id !== this.peerId)
      .map((peer) => ({ ...peer, backoff: new Backoff(REDIAL_INITIAL_MS, REDIAL_MAX_MS), dialing: false }));
    this.#deadlines = new RequestDeadlines(this.#options.requestTimeoutMs);
    this.#peers = new PeerManager({
      selfId: this.peerId,
      maxPeers: this.#options.maxPeers,
      requestTimeoutMs: this.#options.requestTimeoutMs,
      penaltyCooldownMs: this.#options.penaltyCooldownMs,
      staticIds: new Set(this.#static.map((peer) => peer.id)),
      filter: this.#options.peerFilter,
      live: () => this.#live(),
      log: this.#log,
      onStatus: (peerId, status) => this.onPeerStatus?.(peerId, status),
      onReady: (entry) => {
        this.#discovered.get(entry.id)?.succeeded();
        this.#static.find((peer) => peer.id === entry.id)?.backoff.succeeded();
        void this.#askPeers(entry);
      },
    });
    const live = () => this.#live();
    const reqResp = new RequestResponse({
      live,
      deadlines: this.#deadlines,
      peers: this.#peers,
      log: this.#log,
    });
    this.#status = new StatusProtocol({
      live,
      reqResp,
      peers: this.#peers,
      ourStatus: () => handlers.status(),
      log: this.#log,
    });
    this.#blocks = new BlocksByRangeProtocol({
      live,
      reqResp,
      peers: this.#peers,
      serveBlocks: (from, to) => handlers.serveBlocks(from, to),
      maxBlocksPerRequest: this.#options.maxBlocksPerRequest,
      maxMessageBytes: this.#options.maxMessageBytes,
      log: this.#log,
    });
    this.#peerExchange = new PeerExchangeProtocol({ live, reqResp, peers: this.#peers, log: this.#log });
  }

  /**
   * Opens the listener, joins the topics and starts dialing the static peers (without waiting for
   * them: a peer that is down is retried with backoff). Throws `P2PError("listen_failed")` when the
   * port cannot be opened. A network runs once: after stop(), make a new one.
   */
  async start(): Promise<void> {
    if (this.#state !== "new") {
      if (this.#starting !== undefined && this.#state === "starting") return this.#starting;
      if (this.#state === "running") return;
      throw new P2PError("not_running", "a stopped P2PNetwork cannot be restarted");
    }
    this.#state = "starting";
    this.#starting = this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    const identity = parsePeerStatus(this.#handlers.status());
    if (identity === undefined) {
      this.#state = "stopped";
      throw new P2PError("invalid_argument", "handlers.status() returned a malformed status");
    }
    for (const topic of GOSSIP_TOPICS) {
      const name = topicName(topic, identity);
      this.#topicName[topic] = name;
      this.#topicOf.set(name, topic);
    }
    this.#peers.start(identity, new Set(this.#topicOf.keys()));
    const { maxPeers, maxMessageBytes, requestTimeoutMs } = this.#options;
    let node: Libp2pNode;
    try {
      node = await createLibp2pNode({
        privateKey: this.#privateKey,
        listenAddr: this.#listenAddr,
        topics: [...this.#topicOf.keys()],
        maxPeers,
        maxMessageBytes,
        requestTimeoutMs,
        isRefused: (peerId) => this.#peers.isRefused(peerId),
      });
    } catch (err) {
      this.#state = "stopped";
      throw toP2PError(err, "invalid_argument");
    }
    this.#node = node;
    node.addEventListener("peer:connect", (evt) => {
      const entry = this.#peers.onConnect(evt.detail);
      if (entry !== undefined) void this.#status.exchange(entry);
    });
    node.addEventListener("peer:disconnect", (evt) => this.#peers.onDisconnect(evt.detail));
    await node.handle(STATUS_PROTOCOL, (stream, connection) => this.#status.serve(stream, connection), {
      maxInboundStreams: MAX_INBOUND_STREAMS.status,
    });
    await node.handle(
      BLOCKS_BY_RANGE_PROTOCOL,
      (stream, connection) => this.#blocks.serve(stream, connection),
      {
        maxInboundStreams: MAX_INBOUND_STREAMS.blocks,
      },
    );
    await node.handle(PEERS_PROTOCOL, (stream, connection) => this.#peerExchange.serve(stream, connection), {
      maxInboundStreams: MAX_INBOUND_STREAMS.peers,
    });
    const pubsub = node.services.pubsub;
    pubsub.addEventListener("subscription-change", (evt) =>
      this.#peers.onSubscriptionChange(evt.detail.peerId, evt.detail.subscriptions),
    );
    for (const [name, topic] of this.#topicOf) {
      pubsub.topicValidators.set(name, (peer, message) => this.#validateGossip(topic, peer, message));
    }
    try {
      await node.start();
    } catch (err) {
      this.#state = "stopped";
      await Promise.resolve()
        .then(() => node.stop())
        .catch(() => undefined);
      throw new P2PError("listen_failed", `cannot listen on ${this.#listenAddr}: ${errorMessage(err)}`, {
        cause: err,
      });
    }
    for (const name of this.#topicOf.keys()) pubsub.subscribe(name);
    this.#state = "running";
    this.#stopFilterListener = this.#options.peerFilter?.onChange(() => this.#peers.cutFilteredOut());
    this.#timers.push(setInterval(() => this.#statusTick(), this.#options.statusIntervalMs));
    this.#timers.push(
      setInterval(() => this.#maintenanceTick(), Math.min(MAINTENANCE_MS, this.#options.statusIntervalMs)),
    );
    this.#log.info(
      { peerId: this.peerId, addrs: this.listenAddrs(), static: this.#static.length },
      "p2p listening",
    );
    this.#maintenanceTick();
  }

  /** Closes every connection, stream and timer. Idempotent; safe before start and during it. */
  async stop(): Promise<void> {
    if (this.#stopping !== undefined) return this.#stopping;
    this.#stopping = this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    if (this.#state === "starting") await this.#starting?.catch(() => undefined);
    if (this.#state === "new" || this.#state === "stopped") {
      this.#state = "stopped";
      return;
    }
    this.#state = "stopping";
    this.#stopFilterListener?.();
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers.length = 0;
    this.#deadlines.abortAll();
    try {
      await this.#node?.stop();
    } catch (err) {
      this.#log.warn({ err }, "libp2p stop failed");
    }
    this.#peers.clear();
    this.#dialing.clear();
    this.#state = "stopped";
    this.#log.info("p2p stopped");
  }

  /** Full multiaddrs we listen on, each ending in `/p2p/<our id>`; empty when not listening. */
  listenAddrs(): string[] {
    if (this.#node === undefined || this.#state !== "running") return [];
    return this.#node.getMultiaddrs().map((addr) => {
      const text = addr.toString();
      return peerIdInAddr(addr) === undefined ? `${text}/p2p/${this.peerId}` : text;
    });
  }

  /** True while the TCP listener is open. */
  listening(): boolean {
    return this.#state === "running" && this.#node !== undefined && this.#node.getMultiaddrs().length > 0;
  }

  /** The libp2p node while running (see LiveNode). */
  #live(): Libp2pNode | undefined {
    return this.#state === "running" ? this.#node : undefined;
  }

  /** Connected peers that passed the handshake. */
  peerCount(): number {
    return this.#peers.readyCount();
  }

  /** Handshaken peers with the latest status each sent. */
  peers(): PeerInfo[] {
    return this.#peers.readyPeers();
  }

  /**
   * JSON-encodes `payload` and gossips it on `topic`. Never fails for lack of peers; does nothing
   * when the network is not running. Throws `P2PError("message_too_large")` above
   * `maxMessageBytes` and `P2PError("invalid_argument")` for what JSON cannot encode.
   */
  publish(topic: GossipTopic, payload: unknown): void {
    const data = encodeJson(payload);
    if (data.byteLength > this.#options.maxMessageBytes) {
      throw new P2PError(
        "message_too_large",
        `gossip message of ${data.byteLength} bytes exceeds ${this.#options.maxMessageBytes}`,
      );
    }
    const name = this.#topicName[topic];
    if (this.#state !== "running" || this.#node === undefined || name === undefined) {
      this.#log.debug({ topic }, "publish while not running: dropped");
      return;
    }
    this.#node.services.pubsub.publish(name, data).catch((err: unknown) => {
      this.#log.warn({ topic, err: errorMessage(err) }, "gossip publish failed");
    });
  }

  /**
   * Asks a handshaken peer for blocks `from..to` (inclusive). The answer is a JSON array of at
   * most `to - from + 1` items (the peer may clip the range or stop at its head). Throws
   * `P2PError`: `invalid_argument`, `not_connected`, `not_running`, `timeout` (counted: a peer
   * silent MAX_SILENT_REQUESTS times in a row is dropped), or — after penalizing the peer —
   * `message_too_large`, `bad_message`; `stream_error` when the stream broke.
   */
  requestBlocks(peerId: string, from: number, to: number): Promise<unknown[]> {
    return this.#blocks.request(peerId, from, to);
  }

  /**
   * Scores the peer down: disconnects it now and refuses it (dials both ways, through the
   * connection gater) for the cool-down, doubled on each repeat offence.
   */
  penalize(peerId: string, reason: string): void {
    this.#peers.penalize(peerId, reason);
  }

  // --- connection lifecycle -------------------------------------------------------------------

  // --- status handshake -------------------------------------------------------------------------

  // --- gossip -----------------------------------------------------------------------------------

  async #validateGossip(topic: GossipTopic, peer: PeerId, message: Message): Promise<TopicValidatorResult> {
    const from = peer.toString();
    try {
      if (message.data.byteLength > this.#options.maxMessageBytes) {
        this.#penalizeLater(from, `gossip of ${message.data.byteLength} bytes on ${topic}`);
        return TopicValidatorResult.Reject;
      }
      const entry = this.#peers.get(from);
      if (entry?.status === undefined || !this.#peers.isAllowed(from)) return TopicValidatorResult.Ignore;
      let payload: unknown;
      try {
        payload = decodeJson(message.data);
      } catch {
        this.#penalizeLater(from, `gossip on ${topic} is not JSON`);
        return TopicValidatorResult.Reject;
      }
      let verdict: Awaited<ReturnType<P2PHandlers["onGossip"]>>;
      try {
        verdict = await this.#handlers.onGossip(topic, payload, from);
      } catch (err) {
        this.#log.error({ err, topic }, "onGossip threw");
        return TopicValidatorResult.Ignore;
      }
      if (verdict === "reject") this.#penalizeLater(from, `gossip rejected on ${topic}`);
      return verdictToResult(verdict);
    } catch (err) {
      this.#log.error({ err, topic }, "gossip validation failed");
      return TopicValidatorResult.Ignore;
    }
  }

  /** Penalizes after gossipsub has finished with the message (hanging up inside its validator races it). */
  #penalizeLater(peerId: string, reason: string): void {
    setImmediate(() => {
      if (this.#state === "running") this.penalize(peerId, reason);
    });
  }

  // --- blocks by range --------------------------------------------------------------------------

  // --- discovery --------------------------------------------------------------------------------

  /** Asks a handshaken peer for its peers and dials the ones we lack, up to maxPeers. */
  async #askPeers(entry: PeerEntry): Promise<void> {
    if (!this.#wantsPeers()) return;
    const entries = await this.#peerExchange.request(entry);
    if (entries === undefined) return;
    for (const candidate of groupAddrs(entries).peers) this.#dialDiscovered(candidate);
  }

  #wantsPeers(): boolean {
    return (
      this.#state === "running" && this.#peers.admittedCount() + this.#dialing.size < this.#options.maxPeers
    );
  }

  #dialDiscovered(candidate: PeerAddrs): void {
    const { id } = candidate;
    if (id === this.peerId || this.#peers.has(id) || this.#dialing.has(id) || this.#peers.isRefused(id))
      return;
    if (!this.#wantsPeers()) return;
    let backoff = this.#discovered.get(id);
    if (backoff === undefined) {
      backoff = new Backoff(REDIAL_INITIAL_MS, REDIAL_MAX_MS);
      this.#discovered.set(id, backoff);
      if (this.#discovered.size > MAX_DISCOVERED) {
        const oldest = this.#discovered.keys().next().value;
        if (oldest !== undefined) this.#discovered.delete(oldest);
      }
    }
    if (!backoff.due(Date.now())) return;
    this.#dial(id, candidate.addrs, backoff, "discovered");
  }

  #dial(
    id: string,
    addrs: Multiaddr[],
    backoff: Backoff,
    kind: "static" | "discovered",
    done?: () => void,
  ): void {
    const node = this.#node;
    if (node === undefined) return;
    this.#dialing.add(id);
    // Counted as a failure until the peer becomes ready (#maybeReady resets it): a peer that
    // accepts the connection and then drops us (full, another chain) is retried ever more slowly.
    backoff.failed(Date.now());
    const controller = this.#deadlines.track();
    node
      .dial(addrs, { signal: controller.signal })
      .then(() => this.#log.debug({ peer: id, kind }, "dialed"))
      .catch((err: unknown) => this.#log.debug({ peer: id, kind, err: errorMessage(err) }, "dial failed"))
      .finally(() => {
        this.#deadlines.untrack(controller);
        this.#dialing.delete(id);
        done?.();
      });
  }

  // --- timers -----------------------------------------------------------------------------------

  #statusTick(): void {
    if (this.#state !== "running") return;
    this.#statusTicks++;
    const discover = this.#statusTicks % DISCOVERY_EVERY_STATUS_INTERVALS === 0;
    for (const entry of this.#peers.values()) {
      this.#peers.maybeReady(entry);
      void this.#status.exchange(entry);
      if (discover && entry.ready) void this.#askPeers(entry);
    }
  }

  /** Redials static peers that are not connected, and forgets expired bans. */
  #maintenanceTick(): void {
    if (this.#state !== "running") return;
    const now = Date.now();
    for (const peer of this.#static) {
      if (peer.dialing || this.#peers.has(peer.id) || this.#dialing.has(peer.id)) continue;
      if (this.#peers.isRefused(peer.id) || !peer.backoff.due(now)) continue;
      peer.dialing = true;
      this.#dial(peer.id, peer.addrs, peer.backoff, "static", () => {
        peer.dialing = false;
      });
    }
    this.#peers.pruneBans(now);
  }

  // --- request/response plumbing ----------------------------------------------------------------
}
