import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Connection, PeerId } from "@libp2p/interface";
import { peerIdFromString } from "@libp2p/peer-id";
import { pino } from "pino";
import { generateNodeKey, type PeerStatus, peerIdOf } from "../../../src/p2p/index.ts";
import {
  type PeerConnections,
  type PeerEntry,
  PeerManager,
  type PeerManagerOptions,
} from "../../../src/p2p/peerManager.ts";
import { CutFilter, testStatus } from "../../helpers/p2pNet.ts";

const TOPICS = new Set(["t/txs", "t/proposals", "t/votes"]);
const subscribeAll = [...TOPICS].map((topic) => ({ topic, subscribe: true }));

const newPeerId = (): PeerId => peerIdFromString(peerIdOf(generateNodeKey()));

/**
 * A started PeerManager over a fake libp2p that records hang-ups; `connected` are the peers libp2p
 * holds connections to (whether or not they are in the table).
 */
function setUp(overrides: Partial<PeerManagerOptions> = {}) {
  const hungUp: string[] = [];
  const ready: string[] = [];
  const statuses: [string, PeerStatus][] = [];
  const connected: PeerId[] = [];
  let running = true;
  const node: PeerConnections = {
    // Only `remotePeer` of a connection is read by the peer manager.
    getConnections: () => connected.map((remotePeer) => ({ remotePeer }) as unknown as Connection),
    hangUp: async (peer) => {
      hungUp.push(peer.toString());
    },
  };
  const peers = new PeerManager({
    selfId: peerIdOf(generateNodeKey()),
    maxPeers: 2,
    requestTimeoutMs: 60_000,
    penaltyCooldownMs: 60_000,
    staticIds: new Set(),
    filter: undefined,
    live: () => (running ? node : undefined),
    log: pino({ level: "silent" }),
    onStatus: (peerId, status) => statuses.push([peerId, status]),
    onReady: (entry) => ready.push(entry.id),
    ...overrides,
  });
  peers.start(testStatus(), TOPICS);
  /** A connected peer whose status showed our chain and who subscribed to our topics. */
  const handshaken = (peerId = newPeerId()): PeerEntry => {
    const entry = peers.onConnect(peerId);
    assert.ok(entry, "a new peer gets an entry");
    assert.equal(peers.acceptStatus(entry, testStatus({ head_number: 7 })), true, "our chain is accepted");
    peers.onSubscriptionChange(peerId, subscribeAll);
    return entry;
  };
  return {
    peers,
    hungUp,
    ready,
    statuses,
    connected,
    handshaken,
    stop: () => {
      running = false;
    },
  };
}

describe("p2p peer manager", () => {
  it("counts a peer once its status shows our chain and gossipsub knows its subscriptions", () => {
    const { peers, ready, statuses } = setUp();
    const peerId = newPeerId();
    const entry = peers.onConnect(peerId);
    assert.ok(entry);
    assert.equal(peers.acceptStatus(entry, testStatus({ head_number: 3 })), true);
    assert.equal(peers.readyCount(), 0, "not ready before its subscriptions are known");
    assert.equal(peers.admittedCount(), 1, "but admitted: it counts toward maxPeers");
    peers.onSubscriptionChange(peerId, [...subscribeAll, { topic: "not/ours", subscribe: true }]);
    assert.equal(entry.ready, true);
    assert.deepEqual(ready, [entry.id], "onReady once");
    assert.deepEqual(
      peers.readyPeers().map((p) => [p.id, p.status.head_number]),
      [[entry.id, 3]],
    );
    assert.deepEqual(
      statuses.map(([id, s]) => [id, s.head_number]),
      [[entry.id, 3]],
    );
    peers.acceptStatus(entry, testStatus({ head_number: 4 }));
    assert.deepEqual(statuses.at(-1)?.[1].head_number, 4, "a refresh of a ready peer is reported");
    assert.deepEqual(ready, [entry.id], "and does not make it ready twice");
  });

  it("counts a peer whose subscriptions do not come within the request timeout", () => {
    const { peers, ready } = setUp({ requestTimeoutMs: 0 });
    const entry = peers.onConnect(newPeerId());
    assert.ok(entry);
    peers.acceptStatus(entry, testStatus());
    assert.equal(entry.ready, true);
    assert.deepEqual(ready, [entry.id]);
  });

  it("penalizes a malformed status (a ban) and refuses another chain (a ban without a strike)", () => {
    const { peers, hungUp } = setUp();
    const garbage = peers.onConnect(newPeerId());
    const other = peers.onConnect(newPeerId());
    assert.ok(garbage && other);
    assert.equal(peers.acceptStatus(garbage, { chain_id: "x" }), false);
    assert.equal(peers.acceptStatus(other, testStatus({ chain_id: 999 })), false);
    assert.deepEqual(hungUp, [garbage.id, other.id], "both hung up");
    assert.equal(peers.has(garbage.id) || peers.has(other.id), false, "both dropped from the table");
    assert.equal(peers.isRefused(garbage.id), true);
    assert.equal(peers.isRefused(other.id), true);
    assert.equal(peers.onConnect(garbage.peerId), undefined, "a banned peer gets no entry");
  });

  it("drops a handshake beyond maxPeers, except a static peer's", () => {
    const staticPeer = newPeerId();
    const { peers, hungUp, handshaken } = setUp({ staticIds: new Set([staticPeer.toString()]) });
    handshaken();
    handshaken();
    const extra = peers.onConnect(newPeerId());
    assert.ok(extra);
    assert.equal(peers.acceptStatus(extra, testStatus()), false, "maxPeers 2 reached");
    assert.deepEqual(hungUp, [extra.id]);
    assert.equal(peers.isRefused(extra.id), false, "full is no offence");
    handshaken(staticPeer);
    assert.equal(peers.readyCount(), 3, "the static peer is admitted beyond maxPeers");
  });

  it("penalizes anyone but itself; a penalty hangs up and refuses the peer", () => {
    const selfId = peerIdOf(generateNodeKey());
    const { peers, hungUp, handshaken } = setUp({ selfId });
    peers.penalize(selfId, "test");
    assert.equal(peers.isRefused(selfId), false, "never bans itself");
    const entry = handshaken();
    peers.penalize(entry.id, "test");
    assert.deepEqual(hungUp, [entry.id]);
    assert.equal(peers.readyCount(), 0);
    assert.equal(peers.isRefused(entry.id), true);
  });

  it("drops a peer that leaves three requests in a row unanswered, without a ban", () => {
    const { peers, hungUp, handshaken } = setUp();
    const entry = handshaken();
    peers.lateAnswer(entry, "blocks");
    peers.lateAnswer(entry, "blocks");
    assert.deepEqual(hungUp, [], "two timeouts are tolerated");
    peers.lateAnswer(entry, "blocks");
    assert.deepEqual(hungUp, [entry.id], "the third drops it");
    assert.equal(peers.isRefused(entry.id), false, "a late answer is no offence");
  });

  it("hangs up, when the filter changes, on the peers it no longer allows (table and bare connections)", () => {
    const filter = new CutFilter();
    const { peers, hungUp, connected, handshaken } = setUp({ filter });
    filter.onChange(() => peers.cutFilteredOut());
    const kept = handshaken();
    const cut = handshaken();
    const bare = newPeerId(); // connected, not yet in the table (e.g. still in the noise handshake)
    connected.push(kept.peerId, cut.peerId, bare);
    filter.cut(cut.id, bare.toString());
    assert.deepEqual(hungUp.sort(), [cut.id, bare.toString()].sort());
    assert.equal(peers.has(cut.id), false);
    assert.equal(peers.has(kept.id), true);
    assert.equal(peers.isRefused(cut.id), true, "refused both ways while cut");
    assert.equal(peers.isAllowed(cut.id), false, "its gossip is dropped");
    assert.equal(peers.onConnect(cut.peerId), undefined, "a new connection is hung up");
    filter.cut();
    assert.equal(peers.isRefused(cut.id), false, "no ban: allowed again once the filter lets it");
  });

  it("does nothing to libp2p once stopped", () => {
    const { peers, hungUp, handshaken, stop } = setUp();
    const entry = handshaken();
    stop();
    peers.penalize(entry.id, "late");
    assert.deepEqual(hungUp, [], "no hang-up after stop");
    assert.equal(peers.onConnect(newPeerId()), undefined, "no new entries after stop");
    assert.equal(peers.isRefused(entry.id), true, "the ban is still recorded");
  });
});
