// Who gets in: the status handshake (same chain only) and bans (penalties, cool-downs).
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { PeerStatus } from "../../../src/p2p/index.ts";
import { json } from "../../helpers/p2pRawPeer.ts";
import { knows, P2PTestNet, sleep, testStatus, waitFor } from "../../helpers/p2pNet.ts";

describe("p2p status handshake", () => {
  const net = new P2PTestNet();
  after(() => net.stopAll());

  it("admits a peer of the same chain: peerCount 1 each, peers() carries its status", async () => {
    const a = await net.start({ status: { head_number: 3 } });
    const b = await net.start({ bootstrap: [a.addr], status: { head_number: 5 } });
    await waitFor("A and B handshaken", () => knows(a, b) && knows(b, a));
    assert.equal(a.net.peerCount(), 1);
    assert.equal(b.net.peerCount(), 1);
    assert.deepEqual(a.net.peers(), [{ id: b.net.peerId, status: b.status }]);
    assert.deepEqual(b.net.peers(), [{ id: a.net.peerId, status: a.status }]);
  });

  it("refreshes statuses every statusIntervalMs and reports them through onPeerStatus", async () => {
    const a = await net.start();
    const seen: [string, PeerStatus][] = [];
    a.net.onPeerStatus = (id, status) => seen.push([id, status]);
    const b = await net.start({ bootstrap: [a.addr] });
    await waitFor("A knows B", () => knows(a, b));
    b.status = testStatus({ head_number: 42, head_hash: `0x${"42".repeat(32)}` });
    await waitFor(
      "A sees B's new head",
      () => a.net.peers().find((p) => p.id === b.net.peerId)?.status.head_number === 42,
      2000,
    );
    assert.ok(
      seen.some(([id, status]) => id === b.net.peerId && status.head_number === 42),
      "onPeerStatus got B's new head",
    );
  });

  it("refuses nodes of another chain id, network id or genesis: peerCount stays 0 on both sides", async () => {
    const a = await net.start();
    const others = [
      await net.start({ bootstrap: [a.addr], status: { chain_id: 101 } }),
      await net.start({ bootstrap: [a.addr], status: { network_id: 2 } }),
      await net.start({ bootstrap: [a.addr], status: { genesis_hash: `0x${"ef".repeat(32)}` } }),
    ];
    // Each keeps redialing A (a static peer); A's gater and their own refusal keep them apart.
    const deadline = Date.now() + 800;
    while (Date.now() < deadline) {
      assert.equal(a.net.peerCount(), 0, "A admitted a node of another chain");
      for (const [i, other] of others.entries())
        assert.equal(other.net.peerCount(), 0, `node ${i} admitted A`);
      await sleep(50);
    }
    // Gossip does not cross either: the topics name the chain.
    for (const other of others) other.net.publish("txs", { from: "another chain" });
    await sleep(200);
    assert.deepEqual(a.gossip, []);
  });

  it("penalizes a peer whose status is malformed", async () => {
    const a = await net.start();
    for (const bad of [
      json({ ...testStatus(), extra: 1 }),
      json({ ...testStatus(), head_number: -1 }),
      json({ ...testStatus(), genesis_hash: "0x1234" }),
      json([1, 2, 3]),
      new TextEncoder().encode("{not json"),
    ]) {
      const raw = await net.startRaw({ statusAnswer: bad });
      await raw.connect(a.addr);
      await waitFor("A drops the raw peer", () => raw.connectionCount() === 0, 3000);
      assert.equal(a.net.peerCount(), 0);
      // A's gater refuses it now: the dial fails or its connection is closed at once.
      await raw.connect(a.addr).catch(() => undefined);
      await waitFor("A closes the penalized peer's new connection", () => raw.connectionCount() === 0, 3000);
      assert.equal(a.net.peerCount(), 0);
    }
  });

  it("drops a peer that never answers the handshake", async () => {
    const a = await net.start({ requestTimeoutMs: 150 });
    const raw = await net.startRaw({ statusAnswer: "silent" });
    await raw.connect(a.addr);
    await waitFor("A drops the silent peer", () => raw.connectionCount() === 0, 3000);
    assert.equal(a.net.peerCount(), 0);
  });
});

describe("p2p penalties", () => {
  const net = new P2PTestNet();
  after(() => net.stopAll());

  it("penalize disconnects and refuses reconnection during the cool-down", async () => {
    const a = await net.start();
    const b = await net.start({ bootstrap: [a.addr] });
    await waitFor("handshaken", () => knows(a, b) && knows(b, a));
    a.net.penalize(b.net.peerId, "test");
    assert.equal(a.net.peerCount(), 0, "dropped from A's books at once");
    await waitFor("B sees the disconnect", () => b.net.peerCount() === 0, 2000);
    // B redials A (its static peer) with backoff; A's gater refuses every attempt.
    const deadline = Date.now() + 1000;
    while (Date.now() < deadline) {
      assert.equal(knows(a, b), false, "A let B back in during the cool-down");
      assert.equal(knows(b, a), false, "B got back to A during the cool-down");
      await sleep(50);
    }
  });

  it("lets the peer back after the cool-down", async () => {
    const a = await net.start({ penaltyCooldownMs: 500 });
    const b = await net.start({ bootstrap: [a.addr] });
    await waitFor("handshaken", () => knows(a, b) && knows(b, a));
    const penalizedAt = Date.now();
    a.net.penalize(b.net.peerId, "test");
    await waitFor("B back after the cool-down", () => knows(a, b) && knows(b, a), 5000);
    assert.ok(Date.now() - penalizedAt >= 500, "not before the cool-down ended");
  });

  it("ignores penalizing itself or an unknown id", async () => {
    const a = await net.start();
    a.net.penalize(a.net.peerId, "self");
    a.net.penalize("not-a-peer-id", "garbage");
    assert.equal(a.net.listening(), true);
  });
});
