import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { generateNodeKey } from "../../../src/p2p/index.ts";
import { knows, P2PTestNet, sleep, waitFor } from "../../helpers/p2pNet.ts";

describe("p2p discovery and static peers", () => {
  const net = new P2PTestNet();
  after(() => net.stopAll());

  it("links A to C when both only know B", async () => {
    const b = await net.start();
    const a = await net.start({ bootstrap: [b.addr] });
    const c = await net.start({ bootstrap: [b.addr] });
    await waitFor("A and C connected through B's peer list", () => knows(a, c) && knows(c, a), 5000);
    assert.equal(a.net.peerCount(), 2);
    assert.equal(b.net.peerCount(), 2);
    assert.equal(c.net.peerCount(), 2);
  });

  it("stops dialing discovered peers at maxPeers", async () => {
    const hub = await net.start();
    const spokes = [];
    for (let i = 0; i < 3; i++) spokes.push(await net.start({ bootstrap: [hub.addr] }));
    const capped = await net.start({ bootstrap: [hub.addr], maxPeers: 2 });
    await waitFor("the capped node has 2 peers", () => capped.net.peerCount() === 2, 5000);
    await sleep(1000); // a discovery round (every 5 status intervals)
    assert.equal(capped.net.peerCount(), 2, "never more than maxPeers");
  });

  it("does not fail start when a static peer is down, and connects once it is up", async () => {
    const key = generateNodeKey();
    const first = await net.start({ nodeKey: key });
    const addr = first.addr;
    const port = Number(addr.split("/")[4]);
    await first.net.stop();
    const a = await net.start({ bootstrap: [addr] });
    assert.equal(a.net.peerCount(), 0);
    await sleep(100);
    const back = await net.start({ nodeKey: key, port });
    await waitFor("A dials the static peer once it is up", () => knows(a, back), 5000);
  });

  it("redials a static peer that restarts", async () => {
    const key = generateNodeKey();
    const b = await net.start({ nodeKey: key });
    const port = Number(b.addr.split("/")[4]);
    const a = await net.start({ bootstrap: [b.addr] });
    await waitFor("A connected to B", () => knows(a, b));
    await b.net.stop();
    await waitFor("A noticed B left", () => a.net.peerCount() === 0, 3000);
    const restarted = await net.start({ nodeKey: key, port });
    await waitFor("A reconnected to the restarted B", () => knows(a, restarted) && knows(restarted, a), 5000);
  });
});
