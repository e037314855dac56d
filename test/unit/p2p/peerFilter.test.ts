import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { CutFilter, knows, P2PTestNet, sleep, waitFor } from "../../helpers/p2pNet.ts";

describe("p2p peer filter (in-process nodes)", () => {
  const net = new P2PTestNet();
  after(() => net.stopAll());

  it("closes the connection when the filter stops allowing a peer, keeps it out, and redials once allowed", async () => {
    const filter = new CutFilter();
    const a = await net.start();
    const b = await net.start({ bootstrap: [a.addr], peerFilter: filter });
    await waitFor("a and b handshaken both ways", () => knows(a, b) && knows(b, a));

    filter.cut(a.net.peerId);
    await waitFor("a and b apart", () => a.net.peerCount() === 0 && b.net.peerCount() === 0);
    // b's static redial of a is refused by its connection gater for as long as the cut lasts.
    await sleep(600);
    assert.equal(b.net.peerCount(), 0, "b does not redial a while cut");
    assert.equal(a.net.peerCount(), 0, "a does not get back in");
    b.net.publish("txs", { while: "cut" });
    await sleep(200);
    assert.deepEqual(a.gossip, [], "nothing crosses the cut");

    filter.cut();
    await waitFor("b redials a once allowed (no ban)", () => knows(a, b) && knows(b, a), 5000);
  });
});
