import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { pino } from "pino";
import {
  generateNodeKey,
  P2pError,
  P2pNetwork,
  type P2pErrorReason,
  peerIdOf,
} from "../../../src/p2p/index.ts";
import { FAST_P2P, P2PTestNet, testStatus } from "../../helpers/p2pNet.ts";

const silent = pino({ level: "silent" });
const handlers = {
  status: () => testStatus(),
  onGossip: () => "accept" as const,
  serveBlocks: () => [],
};

const failsWith =
  (reason: P2pErrorReason) =>
  (err: unknown): boolean =>
    err instanceof P2pError && err.reason === reason;

describe("p2p lifecycle", () => {
  const net = new P2PTestNet();
  after(() => net.stopAll());

  it("listens while running; stop() is idempotent and closes the listener", async () => {
    const a = await net.start();
    assert.equal(a.net.listening(), true);
    const [addr] = a.net.listenAddrs();
    assert.match(addr ?? "", new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/\\d+/p2p/${a.net.peerId}$`));
    await Promise.all([a.net.stop(), a.net.stop()]);
    await a.net.stop();
    assert.equal(a.net.listening(), false);
    assert.deepEqual(a.net.listenAddrs(), []);
    assert.equal(a.net.peerCount(), 0);
    a.net.publish("txs", { after: "stop" }); // a no-op, not an error
    await assert.rejects(a.net.requestBlocks(a.net.peerId, 0, 1), failsWith("not_running"));
    await assert.rejects(a.net.start(), failsWith("not_running"));
  });

  it("stop() before start() is a no-op", async () => {
    const idle = new P2pNetwork({ ...FAST_P2P, nodeKey: generateNodeKey(), logger: silent }, handlers);
    await idle.stop();
    assert.equal(idle.listening(), false);
  });

  it("reports a port in use as listen_failed", async () => {
    const a = await net.start();
    const port = Number(a.addr.split("/")[4]);
    const clash = new P2pNetwork({ ...FAST_P2P, port, nodeKey: generateNodeKey(), logger: silent }, handlers);
    try {
      await assert.rejects(clash.start(), failsWith("listen_failed"));
      assert.equal(clash.listening(), false);
    } finally {
      await clash.stop();
    }
  });

  it("rejects bad options at construction", () => {
    const make = (overrides: object) => () =>
      new P2pNetwork({ ...FAST_P2P, nodeKey: generateNodeKey(), logger: silent, ...overrides }, handlers);
    assert.throws(make({ bootstrap: ["/ip4/127.0.0.1/tcp/1"] }), failsWith("invalid_argument"));
    assert.throws(make({ bootstrap: ["not a multiaddr"] }), failsWith("invalid_argument"));
    assert.throws(make({ host: "example.com" }), failsWith("invalid_argument"));
    assert.throws(make({ port: 70000 }), failsWith("invalid_argument"));
    assert.throws(make({ maxPeers: 0 }), failsWith("invalid_argument"));
    assert.throws(make({ nodeKey: new Uint8Array([1, 2, 3]) }), failsWith("invalid_argument"));
  });

  it("refuses to start with a malformed own status", async () => {
    const bad = new P2pNetwork(
      { ...FAST_P2P, nodeKey: generateNodeKey(), logger: silent },
      { ...handlers, status: () => ({ ...testStatus(), head_hash: "nope" }) },
    );
    await assert.rejects(bad.start(), failsWith("invalid_argument"));
    await bad.stop();
  });

  it("derives a stable peer id from the node key", () => {
    const key = generateNodeKey();
    assert.equal(peerIdOf(key), peerIdOf(Uint8Array.from(key)));
    assert.match(peerIdOf(key), /^12D3KooW/);
    assert.notEqual(peerIdOf(key), peerIdOf(generateNodeKey()));
    const network = new P2pNetwork({ ...FAST_P2P, nodeKey: key, logger: silent }, handlers);
    assert.equal(network.peerId, peerIdOf(key));
  });
});
