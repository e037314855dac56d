import { pino } from "pino";
import {
  type GossipTopic,
  generateNodeKey,
  type P2pHandlers,
  type P2pOptions,
  P2pNetwork,
  type PeerFilter,
  type PeerStatus,
  type Verdict,
} from "../../src/p2p/index.ts";
import { type RawPeer, type RawPeerOptions, startRawPeer } from "./p2pRawPeer.ts";

/** Test helpers for the p2p layer: in-process libp2p nodes on 127.0.0.1, fast timers, a teardown. */

export const TEST_CHAIN_ID = 100;
export const TEST_NETWORK_ID = 1;
export const TEST_GENESIS = `0x${"ab".repeat(32)}`;

export function testStatus(overrides: Partial<PeerStatus> = {}): PeerStatus {
  return {
    chain_id: TEST_CHAIN_ID,
    network_id: TEST_NETWORK_ID,
    genesis_hash: TEST_GENESIS,
    head_number: 0,
    head_hash: `0x${"cd".repeat(32)}`,
    ...overrides,
  };
}

export interface GossipRecord {
  topic: GossipTopic;
  payload: unknown;
  from: string;
}

/** A started network plus what its handlers saw; `status`, `verdict` and `blocks` are mutable. */
export interface TestPeer {
  net: P2pNetwork;
  status: PeerStatus;
  gossip: GossipRecord[];
  verdict: (topic: GossipTopic, payload: unknown) => Verdict;
  /** serveBlocks answers `blocks[from..to]` (by index = height). */
  blocks: unknown[];
  servedRanges: [number, number][];
  /** First listen address (with /p2p/). */
  addr: string;
}

export interface TestPeerOptions extends Partial<Omit<P2pOptions, "logger" | "nodeKey">> {
  status?: Partial<PeerStatus>;
  verdict?: (topic: GossipTopic, payload: unknown) => Verdict;
  blocks?: unknown[];
  nodeKey?: Uint8Array;
  /** Passed to P2pNetwork as `handlers.serveSnapshots` (absent: the node serves none). */
  serveSnapshots?: P2pHandlers["serveSnapshots"];
}

const logger = pino({ level: process.env.P2P_TEST_LOG ?? "silent" }, pino.destination(2));

/** Small, fast options for tests (STYLE.md §2.7). */
export const FAST_P2P: Omit<P2pOptions, "logger" | "nodeKey"> = {
  host: "127.0.0.1",
  port: 0,
  bootstrap: [],
  maxPeers: 10,
  maxMessageBytes: 64 * 1024,
  maxBlocksPerRequest: 10,
  statusIntervalMs: 200,
  requestTimeoutMs: 2000,
  penaltyCooldownMs: 60_000,
};

/** Starts networks and stops every one of them in `stopAll` (register it in `after` right away). */
export class P2PTestNet {
  readonly peers: TestPeer[] = [];
  readonly raws: RawPeer[] = [];

  /** A bare libp2p node that speaks our protocols by hand (see p2pRawPeer.ts). */
  async startRaw(options: RawPeerOptions): Promise<RawPeer> {
    const raw = await startRawPeer(options);
    this.raws.push(raw);
    return raw;
  }

  async start(options: TestPeerOptions = {}): Promise<TestPeer> {
    const { status: statusOverrides, verdict, blocks, nodeKey, serveSnapshots, ...p2pOptions } = options;
    const peer: Omit<TestPeer, "net" | "addr"> & { net?: P2pNetwork; addr?: string } = {
      status: testStatus(statusOverrides),
      gossip: [],
      verdict: verdict ?? (() => "accept"),
      blocks: blocks ?? [],
      servedRanges: [],
    };
    const net = new P2pNetwork(
      { ...FAST_P2P, ...p2pOptions, nodeKey: nodeKey ?? generateNodeKey(), logger },
      {
        status: () => peer.status,
        onGossip: (topic, payload, from) => {
          peer.gossip.push({ topic, payload, from });
          return peer.verdict(topic, payload);
        },
        serveBlocks: (from, to) => {
          peer.servedRanges.push([from, to]);
          return peer.blocks.slice(from, to + 1);
        },
        ...(serveSnapshots === undefined ? {} : { serveSnapshots }),
      },
    );
    peer.net = net;
    const started = peer as TestPeer;
    this.peers.push(started);
    await net.start();
    started.addr = net.listenAddrs()[0] ?? "";
    return started;
  }

  async stopAll(): Promise<void> {
    await Promise.allSettled([
      ...this.peers.map((peer) => peer.net.stop()),
      ...this.raws.map((raw) => raw.stop()),
    ]);
  }
}

/** Polls `check` every 20 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `a` counts `b` as a handshaken peer. */
export function knows(a: TestPeer, b: TestPeer): boolean {
  return a.net.peers().some((p) => p.id === b.net.peerId);
}

/** A peer filter that cuts off the ids a test names (as the node's partition file does). */
export class CutFilter implements PeerFilter {
  private denied = new Set<string>();
  private readonly listeners = new Set<() => void>();

  allows(peerId: string): boolean {
    return !this.denied.has(peerId);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Cuts off exactly `peerIds` (none: healed) and tells the listeners. */
  cut(...peerIds: string[]): void {
    this.denied = new Set(peerIds);
    for (const listener of this.listeners) listener();
  }
}
