import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { GOSSIP_TOPICS, P2pError } from "../../../src/p2p/index.ts";
import { knows, P2PTestNet, sleep, type TestPeer, waitFor } from "../../helpers/p2pNet.ts";

const isBad = (payload: unknown): boolean =>
  typeof payload === "object" && payload !== null && (payload as Record<string, unknown>).bad === true;

describe("p2p gossip", () => {
  const net = new P2PTestNet();
  after(() => net.stopAll());

  it("carries a message from one node to all four, once per node, on every topic", async (t) => {
    const started = Date.now();
    const a = await net.start();
    const b = await net.start({ bootstrap: [a.addr] });
    const c = await net.start({ bootstrap: [b.addr] });
    const d = await net.start({ bootstrap: [c.addr] });
    const nodes = [a, b, c, d];
    // Both ends of every link: a node counts a peer once gossipsub knows its subscriptions, and a
    // message that passes a node before that is never sent to that peer (see peerManager.ts).
    await waitFor("the line a-b-c-d handshaken both ways", () =>
      [
        [a, b],
        [b, c],
        [c, d],
      ].every(([x, y]) => x !== undefined && y !== undefined && knows(x, y) && knows(y, x)),
    );
    const lineMs = Date.now() - started;
    for (const topic of GOSSIP_TOPICS) d.net.publish(topic, { topic, n: 1 });
    const others = [a, b, c];
    await waitFor(
      "every topic's message at a, b and c",
      () => others.every((node) => node.gossip.length >= GOSSIP_TOPICS.length),
      5000,
    );
    const elapsedMs = Date.now() - started;
    // Discovery then links every pair: the full mesh of 4.
    await waitFor("every node has the 3 others", () => nodes.every((n) => n.net.peerCount() === 3), 5000);
    const fullMs = Date.now() - started;
    t.diagnostic(
      `4 nodes: line ready ${lineMs} ms, gossip delivered ${elapsedMs} ms, full mesh ${fullMs} ms`,
    );
    for (const [i, node] of others.entries()) {
      for (const topic of GOSSIP_TOPICS) {
        const got = node.gossip.filter((g) => g.topic === topic);
        assert.equal(got.length, 1, `node ${i} saw the ${topic} message once`);
        assert.deepEqual(got[0]?.payload, { topic, n: 1 }, `node ${i} ${topic} payload`);
      }
    }
    assert.deepEqual(d.gossip, [], "the publisher does not hear its own message");
    assert.ok(elapsedMs < 4000, `4 nodes started and gossiped in ${elapsedMs} ms`);
    // Publishing again the same bytes is deduplicated by the content-addressed id.
    d.net.publish("txs", { topic: "txs", n: 1 });
    await sleep(200);
    assert.equal(nodes.filter((n) => n.gossip.filter((g) => g.topic === "txs").length > 1).length, 0);
  });

  it("does not forward a rejected message and penalizes its sender", async () => {
    // A line a - b - c: maxPeers 1 at the ends keeps discovery from linking a and c directly.
    const b = await net.start({ maxPeers: 2 });
    b.verdict = (_topic, payload) => (isBad(payload) ? "reject" : "accept");
    const a = await net.start({ bootstrap: [b.addr], maxPeers: 1 });
    const c = await net.start({ bootstrap: [b.addr], maxPeers: 1 });
    await waitFor("a-b and b-c handshaken", () => knows(a, b) && knows(b, a) && knows(c, b) && knows(b, c));
    // The line forwards what b accepts (wait for b's mesh to include c: it grafts on heartbeats).
    await waitFor(
      "a good message forwarded a → b → c",
      () => {
        a.net.publish("txs", { good: Date.now() });
        return c.gossip.length > 0;
      },
      3000,
    );
    assert.equal(knows(a, c), false, "a and c are not linked directly");
    const cBefore = c.gossip.length;
    a.net.publish("votes", { bad: true });
    await waitFor("b judged the bad message", () => b.gossip.some((g) => isBad(g.payload)));
    await waitFor("b disconnected a", () => !knows(b, a) && a.net.peerCount() === 0);
    await sleep(300);
    assert.equal(
      c.gossip.slice(cBefore).filter((g) => isBad(g.payload)).length,
      0,
      "c never saw the rejected message",
    );
    assert.equal(b.gossip.filter((g) => isBad(g.payload)).length, 1, "b judged it once");
    // a redials b (static peer) but b's gater refuses it for the cool-down.
    await sleep(400);
    assert.equal(knows(b, a), false, "a stays out during the cool-down");
  });

  it("drops gossip larger than maxMessageBytes and penalizes the sender", async () => {
    const small = await net.start({ maxMessageBytes: 2048 });
    const big = await net.start({ bootstrap: [small.addr], maxMessageBytes: 64 * 1024 });
    await waitFor("handshaken", () => knows(small, big) && knows(big, small));
    await waitFor(
      "a small message arrives",
      () => {
        big.net.publish("txs", { ok: Date.now() });
        return small.gossip.length > 0;
      },
      3000,
    );
    const before = small.gossip.length;
    big.net.publish("proposals", { blob: "x".repeat(4096) });
    await waitFor("small disconnected big", () => !knows(small, big), 3000);
    assert.equal(
      small.gossip.slice(before).filter((g) => g.topic === "proposals").length,
      0,
      "the oversized message never reached onGossip",
    );
    // Our own publish refuses what our limit forbids.
    assert.throws(
      () => small.net.publish("txs", { blob: "x".repeat(4096) }),
      (err: unknown) => err instanceof P2pError && err.reason === "message_too_large",
    );
  });

  it("publishes with zero peers without error", async () => {
    const alone: TestPeer = await net.start();
    alone.net.publish("txs", { lonely: true });
    await sleep(50);
    assert.equal(alone.net.peerCount(), 0);
  });
});
